#!/usr/bin/env bash
# Round 20, rule 4's last step: once chain20.sh is done, and only if fig3 held and gen-v2
# validation passed, V20 on the test set (gen-v2 test, its second use) beside the shipped
# policy, 2 runs, against the stored yardstick. From the frozen worktree /work/wt/eval20.
set -uo pipefail
WT=/work/wt/eval20; R=/work/runs/r20; H=$WT/docs/results; C=$WT/policy/weights/candidates
V20="ensemble:rule=veto:$C/hold-s2.pt+$C/onoff-s4.pt"
export PYTHONPATH=$WT
cd $WT
until grep -q "^DONE" $R/chain.log; do sleep 20; done
if grep -q "fig3 FAIL" $R/chain.log || ! grep -q "gen-v2 rule rc 0" $R/chain.log; then
  echo "no test run: fig3 or gen-v2 validation did not hold $(date -u +%T)"; exit 0
fi
echo "test start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --suite gen-v2 --set test --policy "$V20" --policy ppo \
   --repeat 2 --reference $H/gen-v2-test --out $R/test-gen-v2 --json $R/test-gen-v2.json > $R/test-gen-v2.log 2>&1
echo "test rc $? $(date -u +%T)"
python3 $H/issue16-round15/rule15.py $R/test-gen-v2.json "$V20" ppo --min-ustar 10 > $R/rule20-test.txt 2>&1
echo "test rule rc $? $(date -u +%T)"
echo "DONE $(date -u +%T)"
