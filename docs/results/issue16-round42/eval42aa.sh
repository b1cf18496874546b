#!/usr/bin/env bash
# Round 42 rule 8: an A/A block on gen-v7 validation (3 runs): the shipped policy beside itself.
set -uo pipefail
WT=${WT:-/work/wt/r42c}; R=${R:-/work/runs/r42}
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
echo "aa start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --suite gen-v7 --set validation \
  --reference docs/results/gen-v7-validation --policy ppo:policy/weights/default.pt --policy ppo \
  --repeat 3 --out $R/aa-g7 --json $R/aa-g7.json > $R/aa-g7.log 2>&1
echo "aa rc $? $(date -u +%T)"
