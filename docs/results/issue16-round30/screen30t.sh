#!/usr/bin/env bash
# Round 30 rule T: the four standing gates (stays reported), gen-v6-v01's clone with the share
# term (clone30.py, T2) and the screen for the six share30 compositions, beside ppo and M.
set -uo pipefail
K=${K:-/work/runs/r30}; R=${R:-/work/runs/r30}; C=policy/weights/candidates
H=docs/results/issue16-round30
ENS=()
for h in 2 5; do
  for o in $K/onoff-share30-s4/policy.pt $K/onoff-share30-s5/policy.pt $C/onoff-wu28m-s4.pt; do
    ENS+=("warmup:cc=bbr:ensemble:$K/hold-share30-s$h/policy.pt+$o")
  done
done
MEM=(); for f in $K/hold-share30-s{2,5}/policy.pt $K/onoff-share30-s{4,5}/policy.pt; do MEM+=("ppo:$f"); done
for s in "${MEM[@]}" "${ENS[@]}"; do python3 -m train.gates --target "$s"; done 2>&1 | sed "s|$K/||g" > $R/gates30t.txt
python3 $H/clone30.py "${MEM[@]}" "${ENS[@]}" > $R/clone30t.txt 2>&1
M="warmup:cc=bbr:ensemble:$C/hold-wu28m-s2.pt+$C/onoff-wu28m-s4.pt"
P=(--policy ppo --policy "$M"); for e in "${ENS[@]}"; do P+=(--policy "$e"); done
python3 -m xfer.cli evaluate --sim --sim-config configs/train/peer.toml --world-class all --networks 40 --json $R/screen30t.json "${P[@]}" > $R/screen30t.log 2>&1
python3 $H/screentab.py $R/screen30t.json > $R/screen30t.txt 2>&1
echo "screen30t done $(date -u +%T)"
