#!/usr/bin/env bash
# Round 19 diagnostic D19 (README): three seeds of one recipe, and the other member, alone,
# beside the shipped policy on the five hand-written scenarios, 2 runs. Decides nothing.
set -uo pipefail
WT=/work/wt/eval19; R=/work/runs/r19seeds; H=$WT/docs/results; C=$WT/policy/weights/candidates
export PYTHONPATH=$WT
cd $WT
HANDS=""
for h in bbr-shared-1g lan-capped lan-reno lossy-long onoff-180ms; do
  HANDS="$HANDS --scenario configs/suites/gen-v1/validation/hand-$h.toml"
done
P=""
for m in onoff-cc19-s4 onoff-cc19-s5 onoff-cc19-s6 hold-cc19-s2; do P="$P --policy ppo:$C/$m.pt"; done
echo "D19 start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate $HANDS $P --policy ppo \
   --repeat 2 --reference $H/gen-v1-validation --out $R --json $R.json > $R.log 2>&1
echo "D19 rc $? $(date -u +%T)"
