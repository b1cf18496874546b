#!/usr/bin/env bash
# Round 19, E19c (README): after E19b's chain, the gates for E19c, then (if they pass) the same
# chain for it, stopping before gen-v2 validation (SKIP_V2: that is the next session's).
set -uo pipefail
WT=/work/wt/eval19; C=$WT/policy/weights/candidates
while pgrep -f "chain19.sh" > /dev/null; do sleep 20; done
cp /work/main/docs/results/issue16-round19/chain19.sh $WT/docs/results/issue16-round19/chain19.sh
E19C="ensemble:$C/hold-cc19-s2.pt+$C/onoff-cc19-s4.pt+$C/onoff-cc19-s5.pt+$C/onoff-cc19-s6.pt"
mkdir -p /work/runs/r19c
cd $WT && PYTHONPATH=$WT python3 -m train.gates "$E19C" > /work/runs/r19c/gates.txt 2>&1
echo "gates rc $? $(date -u +%T)"
if grep -q "^PASS" /work/runs/r19c/gates.txt; then
  E19="$E19C" R=/work/runs/r19c SKIP_V2=1 bash $WT/docs/results/issue16-round19/chain19.sh
fi
echo "DONE19c $(date -u +%T)"
