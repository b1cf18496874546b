#!/usr/bin/env bash
# Round 40 rule 5: J40 beside ppo on gen-v2 validation (2 runs), a diagnostic choosing nothing.
set -uo pipefail
WT=${WT:-/work/wt/r40b}; R=${R:-/work/runs/r40}
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
J="judge:per_step=1,keep_band=0.2,hold=0,max_rtt_ms=20:ppo"
echo "gen-v2 start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --suite gen-v2 --set validation \
  --policy "$J" --policy ppo --repeat 2 \
  --reference docs/results/gen-v2-validation --out $R/j2 --json $R/j2.json > $R/j2.log 2>&1
echo "gen-v2 rc $? $(date -u +%T)"
