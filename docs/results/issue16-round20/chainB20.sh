#!/usr/bin/env bash
# Round 20 testbed chain for B20 (README, B20 rule 3), chain20.sh's steps for CAND: gen-v3 validation, beside the shipped policy
# -> the five hand-written scenarios at 4 runs -> rule 4 -> (if it holds) fig3 x3 -> gen-v2
# validation. From a frozen worktree at /work/wt/eval20.
set -uo pipefail
WT=${WT:-/work/wt/eval20b}; R=${R:-/work/runs/r20b}; H=$WT/docs/results; C=$WT/policy/weights/candidates
SPEC="${CAND:?set CAND to the candidate spec, members under $C}"
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
L="flock /tmp/xfer-netns.lock"
echo "gen-v3 A/B start $(date -u +%T)"
$L python3 -m xfer.cli evaluate --suite gen-v3 --set validation --policy "$SPEC" --policy ppo \
   --repeat 2 --reference $H/gen-v3-validation --out $R/val-gen-v3 --json $R/val-gen-v3.json > $R/val-gen-v3.log 2>&1
echo "gen-v3 A/B rc $? $(date -u +%T)"
HANDS=""
for h in bbr-shared-1g lan-capped lan-reno lossy-long onoff-180ms; do
  HANDS="$HANDS --scenario configs/suites/gen-v1/validation/hand-$h.toml"
done
echo "hand x4 start $(date -u +%T)"
$L python3 -m xfer.cli evaluate $HANDS --policy "$SPEC" --policy ppo \
   --repeat 4 --reference $H/gen-v1-validation --out $R/hand --json $R/hand.json > $R/hand.log 2>&1
echo "hand x4 rc $? $(date -u +%T)"
ok=0
for J in val-gen-v3 hand; do
  echo "== candidate on $J"
  python3 $H/issue16-round15/rule15.py $R/$J.json "$SPEC" ppo --min-ustar 10 || ok=1
done > $R/ruleB20.txt 2>&1
echo "rule 4: $([ $ok = 0 ] && echo pass || echo fail)" | tee -a $R/ruleB20.txt
[ $ok = 0 ] || { echo "DONE $(date -u +%T)"; exit 0; }
echo "fig3 start $(date -u +%T)"
$L python3 -m xfer.cli experiment fig3 --policies "$SPEC" --repetitions 3 --no-sweep --out $R/fig3-B20 > $R/fig3-B20.log 2>&1
python3 $H/issue16-round14/fig3check.py $R/fig3-B20 "$SPEC" || { echo "fig3 FAIL $(date -u +%T)"; exit 0; }
echo "gen-v2 validation start $(date -u +%T)"
$L python3 -m xfer.cli evaluate --suite gen-v2 --set validation --policy "$SPEC" --policy ppo \
   --repeat 2 --reference $H/gen-v2-validation --out $R/val-gen-v2 --json $R/val-gen-v2.json > $R/val-gen-v2.log 2>&1
echo "gen-v2 validation rc $? $(date -u +%T)"
python3 $H/issue16-round15/rule15.py $R/val-gen-v2.json "$SPEC" ppo --min-ustar 10 > $R/ruleB20-v2.txt 2>&1
echo "gen-v2 rule rc $? $(date -u +%T)"
echo "DONE $(date -u +%T)"
