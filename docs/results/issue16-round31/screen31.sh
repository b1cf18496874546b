#!/usr/bin/env bash
# Round 31 rule U (README): gates with the target (U1), gen-v6-v01's clone with the share term
# for every spec wrapped in the shipped warm-up (U2, round 30's clone30.py), and the screen
# (U3) beside ppo and M. Members bare are gated and cloned for the record only.
set -uo pipefail
K=${K:-/work/runs/r31}; R=${R:-/work/runs/r31}; C=policy/weights/candidates
H=docs/results
CAND=()
for h in 2 5; do
  for o in 4 5; do
    CAND+=("warmup:cc=bbr:ensemble:$K/hold-mem31-s$h/policy.pt+$K/onoff-mem31-s$o/policy.pt")
  done
  CAND+=("warmup:cc=bbr:ppo:$K/hold-mem31-s$h/policy.pt")
done
MEM=(); for f in $K/hold-mem31-s{2,5}/policy.pt $K/onoff-mem31-s{4,5}/policy.pt; do MEM+=("ppo:$f"); done
for s in "${MEM[@]}" "${CAND[@]}"; do python3 -m train.gates --target "$s"; done 2>&1 | sed "s|$K/||g" > $R/gates31.txt
python3 $H/issue16-round30/clone30.py "${MEM[@]}" "${CAND[@]}" 2>&1 | sed "s|$K/||g" > $R/clone31.txt
M="warmup:cc=bbr:ensemble:$C/hold-wu28m-s2.pt+$C/onoff-wu28m-s4.pt"
P=(--policy ppo --policy "$M"); for e in "${CAND[@]}"; do P+=(--policy "$e"); done
python3 -m xfer.cli evaluate --sim --sim-config configs/train/peer.toml --world-class all --networks 40 --json $R/screen31.json "${P[@]}" > $R/screen31.log 2>&1
python3 $H/issue16-round31/screentab31.py $R/screen31.json > $R/screen31.txt 2>&1
echo "screen31 done $(date -u +%T)"
