#!/usr/bin/env bash
# Round 42 rule 4: the test set where F42 acts (gen-v2 test, the seven scenarios drawn at
# <= 1 ms), once, 2 runs, F42 beside ppo. Only after rules 1a, 2 and 3 passed.
set -uo pipefail
WT=${WT:-/work/wt/r42}; R=${R:-/work/runs/r42}
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
mkdir -p $R
F=${CAND:-"fast:grow=2,max_rtt_ms=1:ppo"}
echo "test start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --scenario-file configs/sets/gen-v2-test-lan.txt \
  --policy "$F" --policy ppo --repeat 2 --reference docs/results/gen-v2-test \
  --out $R/${TAG:-}test --json $R/${TAG:-}test.json > $R/${TAG:-}test.log 2>&1
echo "test rc $? $(date -u +%T)"
