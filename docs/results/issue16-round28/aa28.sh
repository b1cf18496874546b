#!/usr/bin/env bash
# Round 28 rule 5: the shipped policy beside itself (A/A) on rule 2's ten validation scenarios, order rotated per repetition.
set -uo pipefail
WT=${WT:-/work/wt/eval28}; R=${R:-/work/runs/r28}
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
K=$WT/policy/weights/candidates
A="warmup:cc=bbr:ensemble:$K/hold-s2.pt+$K/onoff-s4.pt"
S=()
for s in gen-v3/validation/gen-v3-v06 gen-v4/validation/gen-v4-v01 gen-v4/validation/gen-v4-v02 \
         gen-v4/validation/gen-v4-v03; do
  S+=(--scenario configs/suites/$s.toml)
done
for f in configs/suites/gen-v6/validation/*.toml; do S+=(--scenario $f); done
echo "rule 5 start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate "${S[@]}" --policy "$A" --policy ppo --repeat 3 \
   --reference $R/refs28 --out $R/aa28 --json $R/aa28.json > $R/aa28.log 2>&1
echo "rule 5 rc $? $(date -u +%T)"
python3 -m train.verdict $R/aa28.json "$A" ppo --min-ustar 10 > $R/rule28-aa.txt 2>&1
echo "verdict rc $?"; cat $R/rule28-aa.txt
echo "DONE $(date -u +%T)"
