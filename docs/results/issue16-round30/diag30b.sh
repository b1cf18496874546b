#!/usr/bin/env bash
# Round 30 diagnostic D2 (README), from the frozen worktree $WT.
set -uo pipefail
WT=${WT:-/work/wt/diag30b}; R=${R:-/work/runs/r30}; H=$WT/docs/results; K=$WT/policy/weights/candidates
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__"
REFS=$R/refs30d; mkdir -p $REFS
cp $H/gen-v4-validation/*.json $H/gen-v6-validation/*.json $REFS/

A="warmup:cc=bbr,carry=1:ppo:$K/hold-share30-s5.pt"

echo "start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate \
  --scenario configs/suites/gen-v6/validation/gen-v6-v01.toml \
  --scenario configs/suites/gen-v4/validation/gen-v4-v03.toml \
  --scenario configs/suites/gen-v6/validation/gen-v6-v04.toml \
  --policy "$A" --repeat 2 \
  --reference $REFS --out $R/diag30b --json $R/diag30b.json > $R/diag30b.log 2>&1
echo "evaluate rc $? $(date -u +%T)"
python3 $H/issue16-round17/traces.py $R/diag30b > $R/traces-diag30b.txt 2>&1
echo "DONE $(date -u +%T)"
