#!/usr/bin/env bash
# Round 40 rule 2: J40 beside ppo on gen-v7 validation (3 runs), then the situations (2 runs).
set -uo pipefail
WT=${WT:-/work/wt/r40}; R=${R:-/work/runs/r40}
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
mkdir -p $R
J="judge:per_step=1,keep_band=0.2,hold=0,max_rtt_ms=20:ppo"
python3 -m train.gates "$J" > $R/gates.txt 2>&1 || { echo "gates fail"; cat $R/gates.txt; exit 1; }
echo "gen-v7 start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --suite gen-v7 --set validation \
  --policy "$J" --policy ppo --repeat 3 \
  --reference docs/results/gen-v7-validation --out $R/j7 --json $R/j7.json > $R/j7.log 2>&1
echo "gen-v7 rc $? $(date -u +%T)"
echo "situations start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --scenario-file configs/sets/situations.txt \
  --policy "$J" --policy ppo --repeat 2 \
  --reference docs/results/gen-v1-validation --out $R/jsit --json $R/jsit.json > $R/jsit.log 2>&1
echo "situations rc $? $(date -u +%T)"
