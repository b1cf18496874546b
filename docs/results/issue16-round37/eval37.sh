#!/usr/bin/env bash
# Round 37 rule 2: the policies at hand on gen-v7 against its stored yardstick, one invocation.
set -uo pipefail
WT=${WT:-/work/wt/eval37b}; R=${R:-/work/runs/r37}
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
C35="warmup:cc=bbr,probe=6,climb=1,climb_loss=0.01,climb_peak=1:ensemble:policy/weights/candidates/hold-cl34-s5.pt+policy/weights/candidates/onoff-cl34-s4.pt"
G15="guard:loss_min=0.005,cooldown=32:ppo"
F17="guard:loss_min=0.005,cooldown=32,patience=3,elastic=0.25,step=3:ppo"
echo "eval start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --suite gen-v7 --set validation \
  --policy ppo --policy "$C35" --policy "$G15" --policy "$F17" --repeat 2 \
  --reference docs/results/gen-v7-validation --out $R/val7 --json $R/val7.json > $R/val7.log 2>&1
echo "eval rc $? $(date -u +%T)"
echo "situations start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --scenario-file configs/sets/situations.txt \
  --policy ppo --policy "$C35" --policy "$G15" --policy "$F17" --repeat 2 \
  --reference docs/results/gen-v1-validation --out $R/sit --json $R/sit.json > $R/sit.log 2>&1
echo "situations rc $? $(date -u +%T)"
