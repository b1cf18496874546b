#!/usr/bin/env bash
# Round 32 stage V (README; simulator only, chooses nothing): the join-trained members and
# their ensemble inside warmup:cc=bbr,probe=6 - gates, gen-v6-v01's clone without and with a
# 12-RTT join (clone32.py), and the screen beside ppo and Q.
set -uo pipefail
K=${K:-/work/runs/r32}; R=${R:-/work/runs/r32}; C=policy/weights/candidates
H=docs/results
WU="warmup:cc=bbr,probe=6"
V="$WU:ensemble:$K/hold-join32-s2/policy.pt+$K/onoff-join32-s5/policy.pt"
Q="$WU:ensemble:$C/hold-bo32-s2.pt+$C/onoff-bo32-s5.pt"
MEM=(ppo:$K/hold-join32-s2/policy.pt ppo:$K/onoff-join32-s5/policy.pt)
for s in "${MEM[@]}" "$V"; do python3 -m train.gates --target "$s"; done 2>&1 | sed "s|$K/||g" > $R/gates32v.txt
for j in 0 12; do CLONE_JOIN=$j python3 $H/issue16-round32/clone32.py ppo "$Q" "${MEM[@]}" "$V"; done > $R/clone32v.txt 2>&1
python3 -m xfer.cli evaluate --sim --sim-config configs/train/peer.toml --world-class all --networks 40 --json $R/screen32v.json --policy ppo --policy "$Q" --policy "$V" > $R/screen32v.log 2>&1
python3 $H/issue16-round32/screentab32.py $R/screen32v.json > $R/screen32v.txt 2>&1
echo "screen32v done $(date -u +%T)"
