#!/usr/bin/env bash
# Round 26 step 1: gen-v4's yardstick for v05-v08 (no policy of ours), as v01-v04's.
set -uo pipefail
WT=${WT:-/work/wt/eval26}; R=${R:-/work/runs/r26}
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
mkdir -p $R/gen-v4-validation
for n in gen-v4-v05 gen-v4-v06 gen-v4-v07 gen-v4-v08; do
  f=configs/suites/gen-v4/validation/$n.toml
  echo "sweep $n start $(date -u +%T)"
  flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --scenario $f --policy gd --policy bo \
    --sweep 1,2,4,8,12,16,24,32 --repeat 2 --out $R/gen-v4-sweep --json $R/gen-v4-validation/$n.json > $R/gen-v4-$n.log 2>&1
  echo "sweep $n rc $? $(date -u +%T)"
done
echo "DONE $(date -u +%T)"
