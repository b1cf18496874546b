#!/usr/bin/env bash
# Round 40 rule 6: start:n=N*,mis=3:ppo beside ppo on each gen-v7 validation scenario (3 runs).
set -uo pipefail
WT=${WT:-/work/wt/r40c}; R=${R:-/work/runs/r40}
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
mkdir -p $R/st
for sn in v01:8 v02:16 v03:8 v04:16 v05:8 v06:4; do
  s=${sn%%:*}; n=${sn#*:}
  echo "gen-v7-$s n=$n start $(date -u +%T)"
  flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate \
    --scenario configs/suites/gen-v7/validation/gen-v7-$s.toml \
    --policy "start:n=$n,mis=3:ppo" --policy ppo --repeat 3 \
    --reference docs/results/gen-v7-validation --out $R/st/$s --json $R/st-$s.json > $R/st-$s.log 2>&1
  echo "gen-v7-$s rc $? $(date -u +%T)"
done
