#!/usr/bin/env bash
# Round 23 diagnostic (README): K3, V23, F22 and the shipped policy, 4 runs, on hand-bbr-shared-1g
# and gen-v2-v12, logs kept, from the frozen worktree /work/wt/eval23b. Deciding nothing.
set -uo pipefail
WT=/work/wt/eval23b; R=${R:-/work/runs/r23}; H=$WT/docs/results; C=$WT/policy/weights/candidates
K3="ppo:$C/hold-kick22-s3.pt"; V23="ensemble:rule=veto:$C/onoff-s4.pt+$C/hold-kick22-s3.pt"
F22="ensemble:$C/onoff-s4.pt+$C/hold-kick22-s3.pt"
L="flock /tmp/xfer-netns.lock"
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
echo "bbr start $(date -u +%T)"
$L python3 -m xfer.cli evaluate --scenario configs/suites/gen-v1/validation/hand-bbr-shared-1g.toml \
   --policy "$K3" --policy "$V23" --policy "$F22" --policy ppo --repeat 4 \
   --reference $H/gen-v1-validation --out $R/diag-bbr --json $R/diag-bbr.json > $R/diag-bbr.log 2>&1
echo "bbr rc $? $(date -u +%T)"
$L python3 -m xfer.cli evaluate --scenario configs/suites/gen-v2/validation/gen-v2-v12.toml \
   --policy "$K3" --policy "$V23" --policy "$F22" --policy ppo --repeat 4 \
   --reference $H/gen-v2-validation --out $R/diag-v12 --json $R/diag-v12.json > $R/diag-v12.log 2>&1
echo "v12 rc $? $(date -u +%T)"
echo "DONE $(date -u +%T)"
