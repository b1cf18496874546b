#!/usr/bin/env bash
# Round 22 testbed chain (README rule 3): fig3 x3 -> the five hand-written scenarios at 4 runs,
# E22 beside the shipped policy -> gen-v3 validation at 2 runs; stops at the first check that
# fails. From a frozen worktree at /work/wt/eval22 whose candidates/ holds E22's hold member
# (MEMBER: its seed). V2=1 runs gen-v2 validation after all three pass.
set -uo pipefail
WT=/work/wt/eval22; R=${R:-/work/runs/r22}; H=$WT/docs/results; C=$WT/policy/weights/candidates
V2=${V2:-0}
E22="ensemble:$C/onoff-s4.pt+$C/hold-kick22-s$MEMBER.pt"
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
echo "E22 = $E22"
L="flock /tmp/xfer-netns.lock"
done_() { echo "DONE $(date -u +%T)"; exit 0; }
echo "fig3 start $(date -u +%T)"
$L python3 -m xfer.cli experiment fig3 --policies "$E22" --repetitions 3 --no-sweep --out $R/fig3-E22 > $R/fig3-E22.log 2>&1
python3 $H/issue16-round14/fig3check.py $R/fig3-E22 "$E22" > $R/fig3check.txt 2>&1
rc=$?; cat $R/fig3check.txt; echo "fig3 rc $rc $(date -u +%T)"
[ $rc = 0 ] || done_
HANDS=""
for h in bbr-shared-1g lan-capped lan-reno lossy-long onoff-180ms; do
  HANDS="$HANDS --scenario configs/suites/gen-v1/validation/hand-$h.toml"
done
echo "hand x4 start $(date -u +%T)"
$L python3 -m xfer.cli evaluate $HANDS --policy "$E22" --policy ppo \
   --repeat 4 --reference $H/gen-v1-validation --out $R/hand --json $R/hand.json > $R/hand.log 2>&1
echo "hand x4 rc $? $(date -u +%T)"
python3 $H/issue16-round15/rule15.py $R/hand.json "$E22" ppo --min-ustar 10 > $R/rule22-hand.txt 2>&1
rc=$?; cat $R/rule22-hand.txt; echo "hand rule rc $rc"
[ $rc = 0 ] || done_
echo "gen-v3 A/B start $(date -u +%T)"
$L python3 -m xfer.cli evaluate --suite gen-v3 --set validation --policy "$E22" --policy ppo \
   --repeat 2 --reference $H/gen-v3-validation --out $R/val-gen-v3 --json $R/val-gen-v3.json > $R/val-gen-v3.log 2>&1
echo "gen-v3 A/B rc $? $(date -u +%T)"
python3 $H/issue16-round15/rule15.py $R/val-gen-v3.json "$E22" ppo --min-ustar 10 > $R/rule22-v3.txt 2>&1
rc=$?; cat $R/rule22-v3.txt; echo "gen-v3 rule rc $rc"
[ $rc = 0 ] && [ "$V2" = 1 ] || done_
echo "gen-v2 validation start $(date -u +%T)"
$L python3 -m xfer.cli evaluate --suite gen-v2 --set validation --policy "$E22" --policy ppo \
   --repeat 2 --reference $H/gen-v2-validation --out $R/val-gen-v2 --json $R/val-gen-v2.json > $R/val-gen-v2.log 2>&1
python3 $H/issue16-round15/rule15.py $R/val-gen-v2.json "$E22" ppo --min-ustar 10 > $R/rule22-v2.txt 2>&1
echo "gen-v2 rule rc $? $(date -u +%T)"
done_
