#!/usr/bin/env bash
# Round 27 chain (README rules 1-2), from the frozen worktree $WT: waits for gen-v6's yardstick
# (sweep27.sh), then
#   rule 1: C and G beside ppo, 3 runs, on the ten validation scenarios where they act;
#   rule 2: the candidate rule 1 chose, beside ppo, once on gen-v5's test set, 2 runs.
set -uo pipefail
WT=${WT:-/work/wt/eval27b}; R=${R:-/work/runs/r27}; H=$WT/docs/results
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
L="flock /tmp/xfer-netns.lock"
K=$WT/policy/weights/candidates
C="warmup:cc=bbr,carry=1:ensemble:$K/hold-s2.pt+$K/onoff-s4.pt"
G="guard:cc=bbr,rtt_above_ms=62.5,settle_rtts=16,hold_growth=2:ppo"
past() { [ -n "${1:-}" ] && [ "$(date -u +%s)" -gt "$(date -u -d "$1" +%s)" ]; }
until grep -q "^DONE" $R/sweep27.out 2>/dev/null; do sleep 20; done
REFS=$R/refs27; mkdir -p $REFS
cp $H/gen-v3-validation/*.json $H/gen-v4-validation/*.json $R/gen-v6-validation/*.json $REFS/
echo "rule 1 start $(date -u +%T)"
S=()
for s in gen-v3/validation/gen-v3-v06 gen-v4/validation/gen-v4-v01 gen-v4/validation/gen-v4-v02 \
         gen-v4/validation/gen-v4-v03; do
  S+=(--scenario configs/suites/$s.toml)
done
for f in configs/suites/gen-v6/validation/*.toml; do S+=(--scenario $f); done
$L python3 -m xfer.cli evaluate "${S[@]}" --policy "$C" --policy "$G" --policy ppo --repeat 3 \
   --reference $REFS --out $R/val27 --json $R/val27.json > $R/val27.log 2>&1
echo "rule 1 rc $? $(date -u +%T)"
python3 -m train.verdict $R/val27.json "$C" ppo --min-ustar 10 > $R/rule27-C-val.txt 2>&1
VC=$?; cat $R/rule27-C-val.txt; echo "rule 1 C verdict rc $VC"
python3 -m train.verdict $R/val27.json "$G" ppo --min-ustar 10 > $R/rule27-G-val.txt 2>&1
VG=$?; cat $R/rule27-G-val.txt; echo "rule 1 G verdict rc $VG"
diff_of() { sed -n 's/.*paired \([-+][0-9.]*\) .*/\1/p' "$1" | tail -1; }
PICK=""; PN=""
if [ $VC -eq 0 ] && [ $VG -eq 0 ]; then
  if python3 -c "import sys; sys.exit(0 if float('$(diff_of $R/rule27-C-val.txt)') >= float('$(diff_of $R/rule27-G-val.txt)') else 1)"; then
    PICK="$C"; PN=C; else PICK="$G"; PN=G; fi
elif [ $VC -eq 0 ]; then PICK="$C"; PN=C
elif [ $VG -eq 0 ]; then PICK="$G"; PN=G
fi
if [ -z "$PICK" ]; then echo "rule 2 not run: neither candidate passed rule 1"; echo "DONE $(date -u +%T)"; exit 0; fi
echo "rule 1 chose $PN"
if past "${TEST_DEADLINE:-}"; then echo "rule 2 not run: past $TEST_DEADLINE, left for the next round"; echo "DONE $(date -u +%T)"; exit 0; fi
echo "rule 2 start $(date -u +%T)"
S=(); for f in configs/suites/gen-v5/test/*.toml; do S+=(--scenario $f); done
$L python3 -m xfer.cli evaluate "${S[@]}" --policy "$PICK" --policy ppo --repeat 2 \
   --reference $H/gen-v5-test --out $R/test27 --json $R/test-gen-v5-$PN.json > $R/test-gen-v5-$PN.log 2>&1
echo "rule 2 rc $? $(date -u +%T)"
python3 -m train.verdict $R/test-gen-v5-$PN.json "$PICK" ppo --min-ustar 10 --test --exclude gen-v5-t01 > $R/rule27-$PN-test.txt 2>&1
echo "rule 2 verdict rc $?"; cat $R/rule27-$PN-test.txt
python3 -m train.verdict $R/test-gen-v5-$PN.json "$PICK" ppo --min-ustar 10 --test > $R/rule27-$PN-test-with-t01.txt 2>&1
echo "with t01 (reported, not the rule):"; tail -1 $R/rule27-$PN-test-with-t01.txt
echo "DONE $(date -u +%T)"
