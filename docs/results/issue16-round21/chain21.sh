#!/usr/bin/env bash
# Round 21 testbed chain (README rules 3-4): the five hand-written scenarios at 4 runs, C21
# beside the shipped policy -> gen-v3 validation at 2 runs -> round 19's test on each -> (if
# both hold) fig3 x3 -> gen-v2 validation. From a frozen worktree at /work/wt/eval21, whose
# candidates/ holds C21's members (MEMBERS: the passing hold-burst21 seeds, e.g. "2 3 4").
# D21 ran it with RECIPE=hold-burst21b R=/work/runs/r21/d21 V2=0 (gen-v2 validation did not fit
# in the session; the rule leaves it for the next). C21 is the variable's name for either.
set -uo pipefail
WT=/work/wt/eval21; R=${R:-/work/runs/r21}; H=$WT/docs/results; C=$WT/policy/weights/candidates
RECIPE=${RECIPE:-hold-burst21}; V2=${V2:-1}
mkdir -p $R
C21="ensemble:$C/onoff-s4.pt"
for s in $MEMBERS; do C21="$C21+$C/$RECIPE-s$s.pt"; done
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
echo "C21 = $C21"
L="flock /tmp/xfer-netns.lock"
HANDS=""
for h in bbr-shared-1g lan-capped lan-reno lossy-long onoff-180ms; do
  HANDS="$HANDS --scenario configs/suites/gen-v1/validation/hand-$h.toml"
done
echo "hand x4 start $(date -u +%T)"
$L python3 -m xfer.cli evaluate $HANDS --policy "$C21" --policy ppo \
   --repeat 4 --reference $H/gen-v1-validation --out $R/hand --json $R/hand.json > $R/hand.log 2>&1
echo "hand x4 rc $? $(date -u +%T)"
echo "gen-v3 A/B start $(date -u +%T)"
$L python3 -m xfer.cli evaluate --suite gen-v3 --set validation --policy "$C21" --policy ppo \
   --repeat 2 --reference $H/gen-v3-validation --out $R/val-gen-v3 --json $R/val-gen-v3.json > $R/val-gen-v3.log 2>&1
echo "gen-v3 A/B rc $? $(date -u +%T)"
ok=0
for J in hand val-gen-v3; do
  echo "== C21 on $J"
  python3 $H/issue16-round15/rule15.py $R/$J.json "$C21" ppo --min-ustar 10 || ok=1
done > $R/rule21.txt 2>&1
echo "rule 4: $([ $ok = 0 ] && echo pass || echo fail)" | tee -a $R/rule21.txt
[ $ok = 0 ] || { echo "DONE $(date -u +%T)"; exit 0; }
echo "fig3 start $(date -u +%T)"
$L python3 -m xfer.cli experiment fig3 --policies "$C21" --repetitions 3 --no-sweep --out $R/fig3-C21 > $R/fig3-C21.log 2>&1
python3 $H/issue16-round14/fig3check.py $R/fig3-C21 "$C21" || { echo "fig3 FAIL $(date -u +%T)"; echo "DONE $(date -u +%T)"; exit 0; }
[ "$V2" = 1 ] || { echo "DONE $(date -u +%T)"; exit 0; }
echo "gen-v2 validation start $(date -u +%T)"
$L python3 -m xfer.cli evaluate --suite gen-v2 --set validation --policy "$C21" --policy ppo \
   --repeat 2 --reference $H/gen-v2-validation --out $R/val-gen-v2 --json $R/val-gen-v2.json > $R/val-gen-v2.log 2>&1
echo "gen-v2 validation rc $? $(date -u +%T)"
python3 $H/issue16-round15/rule15.py $R/val-gen-v2.json "$C21" ppo --min-ustar 10 > $R/rule21-v2.txt 2>&1
echo "gen-v2 rule rc $? $(date -u +%T)"
echo "DONE $(date -u +%T)"
