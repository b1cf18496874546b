#!/usr/bin/env bash
# Round 34, the cl34 members (README: training under the rules): gates with the target and the
# 40-network screen beside ppo and Qe, simulator only. Members from $R (xfer train --out).
set -uo pipefail
export PYTHONPATH=$PWD
R=${R:-/work/runs/r34}; C=policy/weights/candidates; H=docs/results
W="warmup:cc=bbr,probe=6,climb=1,climb_loss=0.01,climb_peak=1"
SPECS=("$W:ensemble:$C/hold-bo32-s2.pt+$C/onoff-bo32-s5.pt"
       "$W:ensemble:$R/hold-cl34-s2/policy.pt+$R/onoff-cl34-s5/policy.pt"
       "$W:ensemble:$R/hold-cl34-s5/policy.pt+$R/onoff-cl34-s4/policy.pt")
python3 -m train.gates --target "${SPECS[@]:1}" 2>&1 | sed "s|$R/||g" > $R/gates34t.txt
P=(--policy ppo); for e in "${SPECS[@]}"; do P+=(--policy "$e"); done
python3 -m xfer.cli evaluate --sim --sim-config configs/train/peer.toml --world-class all --networks 40 --json $R/screen34t.json "${P[@]}" > $R/screen34t.log 2>&1
python3 $H/issue16-round32/screentab32.py $R/screen34t.json 2>&1 | sed "s|$R/||g; s|$C/||g" > $R/screen34t.txt
echo "screen34t done $(date -u +%T)"
