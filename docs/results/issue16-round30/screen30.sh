#!/usr/bin/env bash
# Round 30 rule S: gates (with --target) and the screen for the 12 compositions and their
# members. Run from the repository root after the six trainings; K = where the members are.
set -uo pipefail
K=${K:-/work/runs/r30/members}; R=${R:-/work/runs/r30}; C=policy/weights/candidates
ENS=()
for h in 2 5 6 7; do
  for o in $K/onoff-rival30-s4.pt $K/onoff-rival30-s5.pt $C/onoff-wu28m-s4.pt; do
    ENS+=("warmup:cc=bbr:ensemble:$K/hold-rival30-s$h.pt+$o")
  done
done
for f in $K/*.pt; do python3 -m train.gates --target "ppo:$f"; done > $R/gates30-members.txt 2>&1
for e in "${ENS[@]}"; do python3 -m train.gates --target "$e"; done > $R/gates30-ens.txt 2>&1
P=(); for f in $K/*.pt; do P+=(--policy "ppo:$f"); done
python3 -m xfer.cli evaluate --sim --sim-config configs/train/peer.toml --world-class all --networks 40 --json $R/screen30-members.json "${P[@]}" > $R/screen30-members.log 2>&1
M="warmup:cc=bbr:ensemble:$C/hold-wu28m-s2.pt+$C/onoff-wu28m-s4.pt"
P=(--policy ppo --policy "$M"); for e in "${ENS[@]}"; do P+=(--policy "$e"); done
python3 -m xfer.cli evaluate --sim --sim-config configs/train/peer.toml --world-class all --networks 40 --json $R/screen30-ens.json "${P[@]}" > $R/screen30-ens.log 2>&1
echo "screen30 done $(date -u +%T)"
