#!/usr/bin/env bash
# Round 28 chain (README rules 0-4), from the frozen worktree $WT whose candidates/ holds W's
# members; stops at the first rule that fails.
set -uo pipefail
WT=${WT:-/work/wt/eval28}; R=${R:-/work/runs/r28}; H=$WT/docs/results; K=$WT/policy/weights/candidates
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
L="flock /tmp/xfer-netns.lock"
W="warmup:cc=bbr:ensemble:$K/hold-wu28-s2.pt+$K/onoff-wu28-s4.pt"
echo "W = $W"
past() { [ "$(date -u +%s)" -gt "$(date -u -d "$1" +%s)" ]; }
done_() { echo "DONE $(date -u +%T)"; exit 0; }
echo "rule 0 start $(date -u +%T)"
python3 -m train.gates "$W" > $R/gates28.txt 2>&1; rc=$?; cat $R/gates28.txt; echo "rule 0 gates rc $rc"
python3 $H/issue16-round28/world28.py "$W" > $R/world28.txt 2>&1; cat $R/world28.txt
[ $rc = 0 ] || done_
echo "rule 1 fig3 start $(date -u +%T)"
$L python3 -m xfer.cli experiment fig3 --policies "$W" --repetitions 3 --no-sweep --out $R/fig3-W > $R/fig3-W.log 2>&1
python3 $H/issue16-round14/fig3check.py $R/fig3-W "$W" > $R/fig3check-W.txt 2>&1
rc=$?; cat $R/fig3check-W.txt; echo "rule 1 rc $rc $(date -u +%T)"
[ $rc = 0 ] || done_
REFS=$R/refs28; mkdir -p $REFS
cp $H/gen-v3-validation/*.json $H/gen-v4-validation/*.json $H/gen-v6-validation/*.json $REFS/
S=()
for s in gen-v3/validation/gen-v3-v06 gen-v4/validation/gen-v4-v01 gen-v4/validation/gen-v4-v02 \
         gen-v4/validation/gen-v4-v03; do
  S+=(--scenario configs/suites/$s.toml)
done
for f in configs/suites/gen-v6/validation/*.toml; do S+=(--scenario $f); done
echo "rule 2 start $(date -u +%T)"
$L python3 -m xfer.cli evaluate "${S[@]}" --policy "$W" --policy ppo --repeat 3 \
   --reference $REFS --out $R/val28 --json $R/val28.json > $R/val28.log 2>&1
echo "rule 2 evaluate rc $? $(date -u +%T)"
python3 -m train.verdict $R/val28.json "$W" ppo --min-ustar 10 --margin 0.05 > $R/rule28-val.txt 2>&1
rc=$?; cat $R/rule28-val.txt; echo "rule 2 verdict rc $rc"
[ $rc = 0 ] || done_
echo "rule 3 start $(date -u +%T)"
$L python3 -m xfer.cli evaluate --suite gen-v2 --set validation --policy "$W" --policy ppo \
   --repeat 2 --reference $H/gen-v2-validation --out $R/val-gen-v2 --json $R/val-gen-v2.json > $R/val-gen-v2.log 2>&1
echo "rule 3 evaluate rc $? $(date -u +%T)"
python3 -m train.verdict $R/val-gen-v2.json "$W" ppo --min-ustar 10 --noninferior 0.05 > $R/rule28-v2.txt 2>&1
rc=$?; cat $R/rule28-v2.txt; echo "rule 3 verdict rc $rc"
[ $rc = 0 ] || done_
if past 10:25; then echo "rule 4 not run: gen-v5 test not started before 10:25 UTC, left for the next round"; done_; fi
echo "rule 4 gen-v5 start $(date -u +%T)"
S=(); for f in configs/suites/gen-v5/test/*.toml; do S+=(--scenario $f); done
$L python3 -m xfer.cli evaluate "${S[@]}" --policy "$W" --policy ppo --repeat 2 \
   --reference $H/gen-v5-test --out $R/test-v5 --json $R/test-gen-v5.json > $R/test-gen-v5.log 2>&1
echo "rule 4 gen-v5 evaluate rc $? $(date -u +%T)"
python3 -m train.verdict $R/test-gen-v5.json "$W" ppo --min-ustar 10 --test > $R/rule28-test-v5.txt 2>&1
rc5=$?; cat $R/rule28-test-v5.txt; echo "rule 4 gen-v5 verdict rc $rc5"
if past 10:40; then echo "rule 4 gen-v2 test not run: not started before 10:40 UTC, left for the next round"; done_; fi
echo "rule 4 gen-v2 start $(date -u +%T)"
$L python3 -m xfer.cli evaluate --suite gen-v2 --set test --policy "$W" --policy ppo \
   --repeat 2 --reference $H/gen-v2-test --out $R/test-v2 --json $R/test-gen-v2.json > $R/test-gen-v2.log 2>&1
echo "rule 4 gen-v2 evaluate rc $? $(date -u +%T)"
python3 -m train.verdict $R/test-gen-v2.json "$W" ppo --min-ustar 10 --test > $R/rule28-test-v2.txt 2>&1
rc2=$?; cat $R/rule28-test-v2.txt; echo "rule 4 gen-v2 verdict rc $rc2"
[ $rc5 = 0 ] && [ $rc2 = 0 ] && echo "rule 4 PASS: W ships" || echo "rule 4 FAIL: nothing ships"
done_
