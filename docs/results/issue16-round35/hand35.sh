#!/usr/bin/env bash
# Round 35 diagnostic (README amendment 06:12 UTC): C35 beside ppo on the hand-written scenarios.
set -uo pipefail
cd /work/wt/c35 && export PYTHONPATH=$PWD
X="warmup:cc=bbr,probe=6,climb=1,climb_loss=0.01,climb_peak=1:ensemble:policy/weights/candidates/hold-cl34-s5.pt+policy/weights/candidates/onoff-cl34-s4.pt"
R=/work/runs/r35; S=configs/suites/gen-v1/validation
echo "hand start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate \
  --scenario $S/hand-bbr-shared-1g.toml --scenario $S/hand-lan-capped.toml --scenario $S/hand-lan-reno.toml \
  --scenario $S/hand-lossy-long.toml --scenario $S/hand-onoff-180ms.toml \
  --reference docs/results/gen-v1-validation --policy "$X" --policy ppo --repeat 3 \
  --out $R/hand-c35 --json $R/hand-c35.json > $R/hand-c35.log 2>&1
echo "hand rc $?"
python3 -m train.verdict $R/hand-c35.json "$X" ppo --min-ustar 10 > $R/hand-c35-verdict.txt 2>&1; cat $R/hand-c35-verdict.txt
echo "DONE $(date -u +%T)"
