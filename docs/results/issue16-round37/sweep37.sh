#!/usr/bin/env bash
# Round 37 rule 1: gen-v7's yardstick (no policy of ours), one scenario per lock.
set -uo pipefail
WT=${WT:-/work/wt/eval37}; R=${R:-/work/runs/r37}
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
mkdir -p $R/gen-v7-validation
for f in configs/suites/gen-v7/validation/*.toml; do
  n=$(basename $f .toml)
  echo "sweep $n start $(date -u +%T)"
  flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --scenario $f --policy gd --policy bo \
    --sweep 1,2,4,8,12,16,24,32,48 --repeat 2 --out $R/gen-v7-sweep --json $R/gen-v7-validation/$n.json > $R/gen-v7-$n.log 2>&1
  echo "sweep $n rc $? $(date -u +%T)"
done
echo "DONE $(date -u +%T)"
