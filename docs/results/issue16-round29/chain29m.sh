#!/usr/bin/env bash
# Round 29 chain for M (README: Candidate M; rule 0, the gates, passed at 11:44), from the
# frozen worktree $WT whose candidates/ holds M's members; stops at the first rule that fails.
set -uo pipefail
WT=${WT:-/work/wt/eval29m}; R=${R:-/work/runs/r29}; H=$WT/docs/results; K=$WT/policy/weights/candidates
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
L="flock /tmp/xfer-netns.lock"
X="warmup:cc=bbr:ensemble:$K/hold-wu28m-s2.pt+$K/onoff-wu28m-s4.pt"
echo "X = $X"
done_() { echo "DONE $(date -u +%T)"; exit 0; }
echo "rule 0 start $(date -u +%T)"
python3 -m train.gates "$X" > $R/gates29m.txt 2>&1; rc=$?; cat $R/gates29m.txt; echo "rule 0 gates rc $rc"
[ $rc = 0 ] || done_
REFS=$R/refs29v; mkdir -p $REFS
cp $H/gen-v3-validation/*.json $H/gen-v4-validation/*.json $H/gen-v6-validation/*.json $REFS/
S=()
for s in gen-v3/validation/gen-v3-v06 gen-v4/validation/gen-v4-v01 gen-v4/validation/gen-v4-v02 \
         gen-v4/validation/gen-v4-v03; do
  S+=(--scenario configs/suites/$s.toml)
done
for f in configs/suites/gen-v6/validation/*.toml; do S+=(--scenario $f); done
echo "rule 1 start $(date -u +%T)"
$L python3 -m xfer.cli evaluate "${S[@]}" --policy "$X" --policy ppo --repeat 3 \
   --reference $REFS --out $R/val29m --json $R/val29m.json > $R/val29m.log 2>&1
echo "rule 1 evaluate rc $? $(date -u +%T)"
python3 -m train.verdict $R/val29m.json "$X" ppo --min-ustar 10 --margin 0.05 > $R/rule29m-val.txt 2>&1
rc=$?; cat $R/rule29m-val.txt; echo "rule 1 verdict rc $rc"
for kind in "many:gen-v4-v01 gen-v4-v02 gen-v6-v02 gen-v6-v03 gen-v6-v04 gen-v6-v05 gen-v6-v06" \
            "few:gen-v3-v06 gen-v4-v03 gen-v6-v01"; do  # diagnostic: each kind alone
  echo "kind ${kind%%:*} (best N >= 8 = many)"
  python3 -m train.verdict $R/val29m.json "$X" ppo --min-ustar 10 --margin 0.05 --exclude ${kind#*:} 2>&1 | tail -4
done > $R/rule29m-val-kinds.txt; cat $R/rule29m-val-kinds.txt
[ $rc = 0 ] || done_
echo "rule 2 fig3 start $(date -u +%T)"
$L python3 -m xfer.cli experiment fig3 --policies "$X" --repetitions 3 --no-sweep --out $R/fig3-M > $R/fig3-M.log 2>&1
python3 $H/issue16-round14/fig3check.py $R/fig3-M "$X" > $R/fig3check-M.txt 2>&1
rc=$?; cat $R/fig3check-M.txt; echo "rule 2 rc $rc $(date -u +%T)"
[ $rc = 0 ] || done_
past() { [ "$(date -u +%s)" -gt "$(date -u -d "$1" +%s)" ]; }
if past 13:05; then echo "rule 3 not run: not started before 13:05 UTC, left for the next round"; done_; fi
echo "rule 3 start $(date -u +%T)"
$L python3 -m xfer.cli evaluate --suite gen-v2 --set validation --policy "$X" --policy ppo \
   --repeat 2 --reference $H/gen-v2-validation --out $R/val-gen-v2-M --json $R/val-gen-v2-M.json > $R/val-gen-v2-M.log 2>&1
echo "rule 3 evaluate rc $? $(date -u +%T)"
python3 -m train.verdict $R/val-gen-v2-M.json "$X" ppo --min-ustar 10 --noninferior 0.05 > $R/rule29m-v2.txt 2>&1
rc=$?; cat $R/rule29m-v2.txt; echo "rule 3 verdict rc $rc"
[ $rc = 0 ] && echo "rules 0-3 PASS: M is kept for the next round's test runs (nothing ships this round)"
done_
