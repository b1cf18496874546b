#!/usr/bin/env bash
# Round 62, after long62n: hand-bbr-onoff-lossy-80ms's yardstick, then the shipped policy's
# status reading there (3 runs). Chooses nothing.
set -uo pipefail
WT=/work/wt/r62b R=/work/runs/r62 Y=/work/main/docs/results/situations-long-bbr
cd $WT && export PYTHONPATH=$WT
n=hand-bbr-onoff-lossy-80ms
echo "yard $n start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --scenario configs/situations/$n.toml \
  --policy gd --sweep 1,2,4,8,16,32,48 --repeat 1 --out $R/sweep-$n --json $Y/$n.json.tmp \
  > $R/sweep-$n.log 2>&1 && mv $Y/$n.json.tmp $Y/$n.json || exit 1
echo "yard $n done $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --scenario configs/situations/$n.toml \
  --policy ppo --repeat 3 --reference $Y --out $R/obs-lossy80 --json $R/obs-lossy80.json \
  > $R/obs-lossy80.log 2>&1
echo "obs rc $? $(date -u +%T)"
python3 -m lab.trace $R/obs-lossy80 > $R/obs-lossy80-trace.txt
