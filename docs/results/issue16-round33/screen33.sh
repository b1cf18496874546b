#!/usr/bin/env bash
# Round 33 stage S (README): round 32's Q with and without the climb cap, on the simulator
# only: gates with the target, gen-v6-v01's clone with the share term (round 30's clone30.py)
# and the screen beside ppo. Round 32's table script (screentab32.py) reads the screen.
set -uo pipefail
export PYTHONPATH=$PWD  # clone30.py imports policy/ and train/
R=${R:-/work/runs/r33}; C=policy/weights/candidates; H=docs/results
mkdir -p $R
M="ensemble:$C/hold-bo32-s2.pt+$C/onoff-bo32-s5.pt"
SPECS=("warmup:cc=bbr,probe=6:$M" "warmup:cc=bbr,probe=6,climb=1:$M" "warmup:cc=bbr,probe=6,climb=2:$M")
for s in "${SPECS[@]}"; do python3 -m train.gates --target "$s"; done 2>&1 | sed "s|$C/||g" > $R/gates33.txt
python3 $H/issue16-round30/clone30.py "${SPECS[@]}" 2>&1 | sed "s|$C/||g" > $R/clone33.txt
P=(--policy ppo); for e in "${SPECS[@]}"; do P+=(--policy "$e"); done
python3 -m xfer.cli evaluate --sim --sim-config configs/train/peer.toml --world-class all --networks 40 --json $R/screen33.json "${P[@]}" > $R/screen33.log 2>&1
python3 $H/issue16-round32/screentab32.py $R/screen33.json > $R/screen33.txt 2>&1
echo "screen33 done $(date -u +%T)"
