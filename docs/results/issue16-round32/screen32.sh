#!/usr/bin/env bash
# Round 32 rule U (README): gates with the target (U1), gen-v6-v01's clone with the share term
# (U2, round 30's clone30.py), and the screen (U3) beside ppo, round 31's R and M; every spec
# inside the shipped warm-up with the probe cap. Members bare are gated and cloned for the
# record only.
set -uo pipefail
K=${K:-/work/runs/r32}; R=${R:-/work/runs/r32}; C=policy/weights/candidates
H=docs/results
WU="warmup:cc=bbr,probe=6"
CAND=()
for h in 2 5; do
  for o in 4 5; do
    CAND+=("$WU:ensemble:$K/hold-bo32-s$h/policy.pt+$K/onoff-bo32-s$o/policy.pt")
  done
  CAND+=("$WU:ppo:$K/hold-bo32-s$h/policy.pt")
done
MEM=(); for f in $K/hold-bo32-s{2,5}/policy.pt $K/onoff-bo32-s{4,5}/policy.pt; do MEM+=("ppo:$f"); done
for s in "${MEM[@]}" "${CAND[@]}"; do python3 -m train.gates --target "$s"; done 2>&1 | sed "s|$K/||g" > $R/gates32.txt
python3 $H/issue16-round30/clone30.py "${MEM[@]}" "${CAND[@]}" 2>&1 | sed "s|$K/||g" > $R/clone32.txt
M="warmup:cc=bbr:ensemble:$C/hold-wu28m-s2.pt+$C/onoff-wu28m-s4.pt"
R31="warmup:cc=bbr:ensemble:$C/hold-mem31-s2.pt+$C/onoff-mem31-s4.pt"
P=(--policy ppo --policy "$M" --policy "$R31"); for e in "${CAND[@]}"; do P+=(--policy "$e"); done
python3 -m xfer.cli evaluate --sim --sim-config configs/train/peer.toml --world-class all --networks 40 --json $R/screen32.json "${P[@]}" > $R/screen32.log 2>&1
python3 $H/issue16-round32/screentab32.py $R/screen32.json > $R/screen32.txt 2>&1
echo "screen32 done $(date -u +%T)"
