#!/usr/bin/env bash
# Round 34 stage S (README): Qd (climb_peak=1, climb_probe=1) beside Qc' on the simulator:
# gates with the target, gen-v6-v01's clone (round 30's clone30.py), the screen beside ppo.
set -uo pipefail
export PYTHONPATH=$PWD  # clone30.py imports policy/ and train/
R=${R:-/work/runs/r34}; C=policy/weights/candidates; H=docs/results
M="ensemble:$C/hold-bo32-s2.pt+$C/onoff-bo32-s5.pt"
SPECS=("warmup:cc=bbr,probe=6,climb=1,climb_loss=0.01:$M"
       "warmup:cc=bbr,probe=6,climb=1,climb_loss=0.01,climb_peak=1,climb_probe=1:$M")
python3 -m train.gates --target "${SPECS[1]}" 2>&1 | sed "s|$C/||g" > $R/gates34.txt
python3 $H/issue16-round30/clone30.py "${SPECS[@]}" 2>&1 | sed "s|$C/||g" > $R/clone34.txt
P=(--policy ppo); for e in "${SPECS[@]}"; do P+=(--policy "$e"); done
python3 -m xfer.cli evaluate --sim --sim-config configs/train/peer.toml --world-class all --networks 40 --json $R/screen34.json "${P[@]}" > $R/screen34.log 2>&1
python3 $H/issue16-round32/screentab32.py $R/screen34.json > $R/screen34.txt 2>&1
echo "screen34 done $(date -u +%T)"
