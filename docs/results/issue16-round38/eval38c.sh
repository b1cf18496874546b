#!/usr/bin/env bash
# Round 38 rule 3c: ppo and X3 on gen-v7 (3 runs) and the situations (2 runs), one invocation each.
set -uo pipefail
WT=${WT:-/work/wt/eval38c}; R=${R:-/work/runs/r38}
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
X3="exo:rtt=1:ppo"
echo "eval start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --suite gen-v7 --set validation \
  --policy ppo --policy "$X3" --repeat 3 \
  --reference docs/results/gen-v7-validation --out $R/val7c --json $R/val7c.json > $R/val7c.log 2>&1
echo "eval rc $? $(date -u +%T)"
echo "situations start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --scenario-file configs/sets/situations.txt \
  --policy ppo --policy "$X3" --repeat 2 \
  --reference docs/results/gen-v1-validation --out $R/sitc --json $R/sitc.json > $R/sitc.log 2>&1
echo "situations rc $? $(date -u +%T)"
