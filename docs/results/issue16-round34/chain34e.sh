#!/usr/bin/env bash
# Round 34 chain for the candidate Qe (README: Qc' + climb_peak), from the frozen worktree
# $WT: gates, rule 1
# (gen-v2 validation, 2 runs, non-inferiority 0.05), rule 2 (round 28's ten warm-up scenarios,
# 3 runs, margin 0.05, run as diagnostic D34 if rule 1 fails), rule 3 (fig3, 3 repetitions),
# then the test set once (rule 4) if it can start by $TEST_DEADLINE. Stops at the first rule
# that fails, except that a failed rule 1 still runs rule 2's scenarios.
set -uo pipefail
WT=${WT:-/work/wt/eval34e}; R=${R:-/work/runs/r34}; H=$WT/docs/results; K=$WT/policy/weights/candidates
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
L="flock /tmp/xfer-netns.lock"
X=${QSPEC:-"warmup:cc=bbr,probe=6,climb=1,climb_loss=0.01,climb_peak=1:ensemble:$K/hold-bo32-s2.pt+$K/onoff-bo32-s5.pt"}
echo "Qe = $X"
done_() { echo "DONE $(date -u +%T)"; exit 0; }
python3 -m train.gates --target "$X" > $R/gates34e.txt 2>&1; rc=$?; cat $R/gates34e.txt; echo "gates rc $rc"
[ $rc = 0 ] || done_
echo "rule 1 start $(date -u +%T)"
$L python3 -m xfer.cli evaluate --suite gen-v2 --set validation --policy "$X" --policy ppo \
   --repeat 2 --reference $H/gen-v2-validation --out $R/val-gen-v2-Qe --json $R/val-gen-v2-Qe.json > $R/val-gen-v2-Qe.log 2>&1
echo "rule 1 evaluate rc $? $(date -u +%T)"
python3 -m train.verdict $R/val-gen-v2-Qe.json "$X" ppo --min-ustar 10 --noninferior 0.05 > $R/rule34e-v2.txt 2>&1
rule1=$?; cat $R/rule34e-v2.txt; echo "rule 1 verdict rc $rule1"
[ $rule1 = 0 ] || echo "rule 1 FAILS: what follows is diagnostic D34 (rule 2's scenarios; chooses nothing)"
S=(--scenario-file configs/sets/warmup10.txt)  # round 34: the named list, three references
for v in 3 4 6; do S+=(--reference $H/gen-v$v-validation); done
echo "rule 2 start $(date -u +%T)"
$L python3 -m xfer.cli evaluate "${S[@]}" --policy "$X" --policy ppo --repeat 3 \
   --out $R/val34e --json $R/val34e.json > $R/val34e.log 2>&1
echo "rule 2 evaluate rc $? $(date -u +%T)"
python3 -m train.verdict $R/val34e.json "$X" ppo --min-ustar 10 --margin 0.05 > $R/rule34e-val.txt 2>&1
rule2=$?; cat $R/rule34e-val.txt; echo "rule 2 verdict rc $rule2"
for kind in "8+:gen-v4-v01 gen-v4-v02 gen-v6-v02 gen-v6-v03 gen-v6-v04 gen-v6-v05 gen-v6-v06" \
            "rest:gen-v3-v06 gen-v4-v03 gen-v6-v01"; do  # diagnostic: each kind alone
  echo "kind ${kind%%:*}"
  python3 -m train.verdict $R/val34e.json "$X" ppo --min-ustar 10 --margin 0.05 --exclude ${kind#*:} 2>&1 | tail -4
done > $R/rule34e-val-kinds.txt; cat $R/rule34e-val-kinds.txt
[ $rule1 = 0 ] && [ $rule2 = 0 ] || done_
echo "rule 3 fig3 start $(date -u +%T)"
$L python3 -m xfer.cli experiment fig3 --policies "$X" --repetitions 3 --no-sweep --out $R/fig3-Qe > $R/fig3-Qe.log 2>&1
python3 $H/issue16-round14/fig3check.py $R/fig3-Qe "$X" > $R/fig3check-Qe.txt 2>&1
rc=$?; cat $R/fig3check-Qe.txt; echo "rule 3 rc $rc $(date -u +%T)"
[ $rc = 0 ] || done_
if [ -n "${TEST_DEADLINE:-}" ] && [ "$(date -u +%s)" -gt "$(date -u -d "$TEST_DEADLINE" +%s)" ]; then
  echo "rules 1-3 PASS; test not started: past $TEST_DEADLINE, left for the next round"; done_
fi
echo "rule 4 test start $(date -u +%T)"
$L python3 -m xfer.cli evaluate --suite gen-v2 --set test --policy "$X" --policy ppo --repeat 2 \
   --reference $H/gen-v2-test --out $R/test-gen-v2-Qe --json $R/test-gen-v2-Qe.json > $R/test-gen-v2-Qe.log 2>&1
echo "rule 4 evaluate rc $? $(date -u +%T)"
python3 -m train.verdict $R/test-gen-v2-Qe.json "$X" ppo --min-ustar 10 --test > $R/rule34e-test.txt 2>&1
echo "rule 4 verdict rc $?"; cat $R/rule34e-test.txt
done_
