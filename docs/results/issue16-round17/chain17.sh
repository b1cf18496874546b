#!/usr/bin/env bash
# Round 17 testbed chain: (wait for the gen-v3 yardstick sweep) -> gen-v3 validation, F and FS
# beside the shipped policy -> the five hand-written scenarios at 4 runs -> rule 4's numbers.
# From a frozen worktree at /work/wt/eval.
set -uo pipefail
F="guard:loss_min=0.005,cooldown=32,patience=3,elastic=0.25,step=3"
FS="$F,shed=0.05"
R=/work/runs/r17; WT=/work/wt/eval; H=$WT/docs/results
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
L="flock /tmp/xfer-netns.lock"
until grep -q ALLDONE $R/yard.log; do sleep 20; done
mkdir -p $H/gen-v3-validation && cp $R/yard/gen-v3-v*.json $H/gen-v3-validation/
echo "gen-v3 A/B start $(date -u +%T)"
$L python3 -m xfer.cli evaluate --suite gen-v3 --set validation --policy "$F" --policy "$FS" --policy ppo \
   --repeat 2 --reference $H/gen-v3-validation --out $R/val-gen-v3 --json $R/val-gen-v3.json > $R/val-gen-v3.log 2>&1
echo "gen-v3 A/B rc $? $(date -u +%T)"
HANDS=""
for h in bbr-shared-1g lan-capped lan-reno lossy-long onoff-180ms; do
  HANDS="$HANDS --scenario configs/suites/gen-v1/validation/hand-$h.toml"
done
echo "hand x4 start $(date -u +%T)"
$L python3 -m xfer.cli evaluate $HANDS --policy "$F" --policy "$FS" --policy ppo \
   --repeat 4 --reference $H/gen-v1-validation --out $R/hand --json $R/hand.json > $R/hand.log 2>&1
echo "hand x4 rc $? $(date -u +%T)"
for C in "$F" "$FS"; do
  for J in val-gen-v3 hand val-gen-v3,hand; do
    echo "== $C on $J"
    python3 $H/issue16-round15/rule15.py $(echo $J | sed "s|\([a-z0-9-]*\)|$R/\1.json|g") "$C" ppo --min-ustar 10
  done
done > $R/rule17.txt 2>&1
python3 $H/issue16-round15/rule15.py $R/val-gen-v3.json,$R/hand.json "$FS" "$F" --min-ustar 10 >> $R/rule17.txt 2>&1
echo "DONE $(date -u +%T)"
