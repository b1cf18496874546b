#!/usr/bin/env bash
# Round 30 diagnostic D (README), from the frozen worktree $WT.
set -uo pipefail
WT=${WT:-/work/wt/diag30}; R=${R:-/work/runs/r30}; H=$WT/docs/results; K=$WT/policy/weights/candidates
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__"
REFS=$R/refs30d; mkdir -p $REFS
cp $H/gen-v4-validation/*.json $H/gen-v6-validation/*.json $REFS/
M="warmup:cc=bbr:ensemble:$K/hold-wu28m-s2.pt+$K/onoff-wu28m-s4.pt"
A="warmup:cc=bbr:ppo:$K/hold-share30-s5.pt"
E="warmup:cc=bbr:ensemble:$K/hold-share30-s5.pt+$K/onoff-share30-s5.pt"
echo "start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate \
  --scenario configs/suites/gen-v6/validation/gen-v6-v01.toml \
  --scenario configs/suites/gen-v4/validation/gen-v4-v03.toml \
  --scenario configs/suites/gen-v6/validation/gen-v6-v04.toml \
  --policy ppo --policy "$M" --policy "$A" --policy "$E" --repeat 2 \
  --reference $REFS --out $R/diag30 --json $R/diag30.json > $R/diag30.log 2>&1
echo "evaluate rc $? $(date -u +%T)"
python3 $H/issue16-round17/traces.py $R/diag30 > $R/traces-diag30.txt 2>&1
echo "DONE $(date -u +%T)"
