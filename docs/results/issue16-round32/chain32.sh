#!/usr/bin/env bash
# Round 32 chain for the candidate Q (README: testbed chain), from the frozen worktree $WT
# whose candidates/ holds Q's members; stops at the first rule that fails, except that a
# failed rule 1 still runs rule 2's scenarios as diagnostic D32 (chooses nothing).
# HOLD/ONOFF name Q's members (set by the caller); QSPEC overrides the whole spec.
set -uo pipefail
WT=${WT:-/work/wt/eval32}; R=${R:-/work/runs/r32}; H=$WT/docs/results; K=$WT/policy/weights/candidates
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
L="flock /tmp/xfer-netns.lock"
X=${QSPEC:-"warmup:cc=bbr,probe=6:ensemble:$K/$HOLD.pt+$K/$ONOFF.pt"}
echo "Q = $X"
done_() { echo "DONE $(date -u +%T)"; exit 0; }
echo "rule S1 $(date -u +%T)"
python3 -m train.gates --target "$X" > $R/gates32Q.txt 2>&1; rc=$?; cat $R/gates32Q.txt; echo "gates rc $rc"
[ $rc = 0 ] || done_
echo "rule 1 start $(date -u +%T)"
$L python3 -m xfer.cli evaluate --suite gen-v2 --set validation --policy "$X" --policy ppo \
   --repeat 2 --reference $H/gen-v2-validation --out $R/val-gen-v2-Q --json $R/val-gen-v2-Q.json > $R/val-gen-v2-Q.log 2>&1
echo "rule 1 evaluate rc $? $(date -u +%T)"
python3 -m train.verdict $R/val-gen-v2-Q.json "$X" ppo --min-ustar 10 --noninferior 0.05 > $R/rule32-v2.txt 2>&1
rule1=$?; cat $R/rule32-v2.txt; echo "rule 1 verdict rc $rule1"
[ $rule1 = 0 ] || echo "rule 1 FAILS: what follows is diagnostic D32 (rule 2's scenarios; chooses nothing)"
REFS=$R/refs32v; mkdir -p $REFS
cp $H/gen-v3-validation/*.json $H/gen-v4-validation/*.json $H/gen-v6-validation/*.json $REFS/
S=()
for s in gen-v3/validation/gen-v3-v06 gen-v4/validation/gen-v4-v01 gen-v4/validation/gen-v4-v02 \
         gen-v4/validation/gen-v4-v03; do
  S+=(--scenario configs/suites/$s.toml)
done
for f in configs/suites/gen-v6/validation/*.toml; do S+=(--scenario $f); done
echo "rule 2 start $(date -u +%T)"
$L python3 -m xfer.cli evaluate "${S[@]}" --policy "$X" --policy ppo --repeat 3 \
   --reference $REFS --out $R/val32 --json $R/val32.json > $R/val32.log 2>&1
echo "rule 2 evaluate rc $? $(date -u +%T)"
python3 -m train.verdict $R/val32.json "$X" ppo --min-ustar 10 --margin 0.05 > $R/rule32-val.txt 2>&1
rc=$?; cat $R/rule32-val.txt; echo "rule 2 verdict rc $rc"
for kind in "many:gen-v4-v01 gen-v4-v02 gen-v6-v02 gen-v6-v03 gen-v6-v04 gen-v6-v05 gen-v6-v06" \
            "few:gen-v3-v06 gen-v4-v03 gen-v6-v01"; do  # diagnostic: each kind alone
  echo "kind ${kind%%:*} (best N >= 8 = many)"
  python3 -m train.verdict $R/val32.json "$X" ppo --min-ustar 10 --margin 0.05 --exclude ${kind#*:} 2>&1 | tail -4
done > $R/rule32-val-kinds.txt; cat $R/rule32-val-kinds.txt
[ $rule1 = 0 ] && [ $rc = 0 ] || done_
echo "rule 3 fig3 start $(date -u +%T)"
$L python3 -m xfer.cli experiment fig3 --policies "$X" --repetitions 3 --no-sweep --out $R/fig3-Q > $R/fig3-Q.log 2>&1
python3 $H/issue16-round14/fig3check.py $R/fig3-Q "$X" > $R/fig3check-Q.txt 2>&1
rc=$?; cat $R/fig3check-Q.txt; echo "rule 3 rc $rc $(date -u +%T)"
[ $rc = 0 ] && echo "rules 1-3 PASS: Q is kept for the next round's test run (nothing ships this round)"
done_
