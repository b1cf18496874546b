#!/usr/bin/env bash
# Round 35 diagnostics for C35 (README amendment, 06:02 UTC): fig3 x3, then fig1 beside ppo.
set -uo pipefail
cd /work/wt/c35 && export PYTHONPATH=$PWD
X="warmup:cc=bbr,probe=6,climb=1,climb_loss=0.01,climb_peak=1:ensemble:policy/weights/candidates/hold-cl34-s5.pt+policy/weights/candidates/onoff-cl34-s4.pt"
R=/work/runs/r35; H=docs/results; L="flock /tmp/xfer-netns.lock"
echo "fig3 start $(date -u +%T)"
$L python3 -m xfer.cli experiment fig3 --policies "$X" --repetitions 3 --no-sweep --out $R/fig3-c35 > $R/fig3-c35.log 2>&1
python3 $H/issue16-round14/fig3check.py $R/fig3-c35 "$X" > $R/fig3check-c35.txt 2>&1; echo "fig3 check rc $?"; cat $R/fig3check-c35.txt
echo "fig1 start $(date -u +%T)"
$L python3 -m xfer.cli experiment fig1 --policies "$X,ppo" --duration 30 --repetitions 2 --no-sweep --out $R/fig1-c35 > $R/fig1-c35.log 2>&1
echo "fig1 rc $?"
python3 $H/issue16-round24/fig1tto24.py $R/fig1-c35 > $R/fig1tto-c35.txt 2>&1; cat $R/fig1tto-c35.txt
echo "DONE $(date -u +%T)"
