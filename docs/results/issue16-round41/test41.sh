#!/usr/bin/env bash
# Round 41 rule 6d: F41b beside ppo on the gen-v2 test scenarios where it acts (<= 1 ms), 2 runs,
# once. Only after 6a-6c pass (README).
set -uo pipefail
WT=${WT:-/work/wt/r41b}; R=${R:-/work/runs/r41}
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
F="fast:max_rtt_ms=1:ppo"
echo "bt start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --scenario-file configs/sets/gen-v2-test-lan.txt \
  --reference docs/results/gen-v2-test --policy "$F" --policy ppo --repeat 2 \
  --out $R/bt --json $R/bt.json > $R/bt.log 2>&1
echo "bt rc $? $(date -u +%T)"
