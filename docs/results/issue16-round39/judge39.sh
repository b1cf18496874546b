#!/usr/bin/env bash
# Round 39 rule 5: J39 = judge:ppo beside ppo on gen-v7 (3 runs) and the situations (2 runs).
set -uo pipefail
WT=${WT:-/work/wt/judge39}; R=${R:-/work/runs/r39}
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
J="judge:ppo"
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
