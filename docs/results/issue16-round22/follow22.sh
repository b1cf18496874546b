#!/usr/bin/env bash
# Round 22, rule 4 (after chain22.sh): once the chain is done, and only if E22 passed all of
# rule 3 (fig3, hand-written, gen-v3), gen-v2 validation (2 runs, round 19's test) and, if
# that passes, the test set (gen-v2 test, its second use) beside the shipped policy, 2 runs,
# against the stored yardstick. From the frozen worktree /work/wt/eval22. (CI runs after it:
# if E22 ships, default.pt changes and CI must see that.)
set -uo pipefail
WT=/work/wt/eval22; R=${R:-/work/runs/r22}; H=$WT/docs/results; C=$WT/policy/weights/candidates
E22="ensemble:$C/onoff-s4.pt+$C/hold-kick22-s$MEMBER.pt"
L="flock /tmp/xfer-netns.lock"
until grep -q "^DONE" $R/chain.log; do sleep 20; done
grep -q "gen-v3 rule rc 0" $R/chain.log || { echo "no gen-v2: rule 3 did not hold $(date -u +%T)"; exit 0; }
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
echo "gen-v2 validation start $(date -u +%T)"
$L python3 -m xfer.cli evaluate --suite gen-v2 --set validation --policy "$E22" --policy ppo \
   --repeat 2 --reference $H/gen-v2-validation --out $R/val-gen-v2 --json $R/val-gen-v2.json > $R/val-gen-v2.log 2>&1
echo "gen-v2 validation rc $? $(date -u +%T)"
python3 $H/issue16-round15/rule15.py $R/val-gen-v2.json "$E22" ppo --min-ustar 10 > $R/rule22-v2.txt 2>&1
rc=$?; cat $R/rule22-v2.txt; echo "gen-v2 rule rc $rc $(date -u +%T)"
[ $rc = 0 ] || { echo "DONE $(date -u +%T)"; exit 0; }
echo "test start $(date -u +%T)"
$L python3 -m xfer.cli evaluate --suite gen-v2 --set test --policy "$E22" --policy ppo \
   --repeat 2 --reference $H/gen-v2-test --out $R/test-gen-v2 --json $R/test-gen-v2.json > $R/test-gen-v2.log 2>&1
echo "test rc $? $(date -u +%T)"
python3 $H/issue16-round15/rule15.py $R/test-gen-v2.json "$E22" ppo --min-ustar 10 > $R/rule22-test.txt 2>&1
echo "test rule rc $? $(date -u +%T)"; cat $R/rule22-test.txt
echo "DONE $(date -u +%T)"
