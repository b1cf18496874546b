#!/usr/bin/env bash
# Round 39 rule 1: the oracle (each scenario's stored best fixed N, run again) beside ppo, one
# invocation per set: the situations (3 runs), gen-v7 validation (3 runs), gen-v2 validation (2 runs).
set -uo pipefail
WT=${WT:-/work/wt/oracle39}; R=${R:-/work/runs/r39}
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
mkdir -p $R
echo "situations start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --scenario-file configs/sets/situations.txt \
  --policy oracle --policy ppo --repeat 3 \
  --reference docs/results/gen-v1-validation --out $R/sit --json $R/sit.json > $R/sit.log 2>&1
echo "situations rc $? $(date -u +%T)"
echo "gen-v7 start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --suite gen-v7 --set validation \
  --policy oracle --policy ppo --repeat 3 \
  --reference docs/results/gen-v7-validation --out $R/val7 --json $R/val7.json > $R/val7.log 2>&1
echo "gen-v7 rc $? $(date -u +%T)"
echo "gen-v2 start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --suite gen-v2 --set validation \
  --policy oracle --policy ppo --repeat 2 \
  --reference docs/results/gen-v2-validation --out $R/val2 --json $R/val2.json > $R/val2.log 2>&1
echo "gen-v2 rc $? $(date -u +%T)"
