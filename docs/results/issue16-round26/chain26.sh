#!/usr/bin/env bash
# Round 26 chain (README rules 1-3), from the frozen worktree $WT: waits for the gen-v4 sweep
# (sweep26.sh) to end, then
#   rule 1: W = warmup:cc=bbr:ppo beside ppo, 3 runs, on the 5 validation scenarios where W acts;
#   rule 3: gen-v5's yardstick (no policy of ours), one scenario per lock;
#   rule 2: only if rule 1 passes, gen-v5's test set once, W beside ppo, 2 runs.
set -uo pipefail
WT=${WT:-/work/wt/eval26}; R=${R:-/work/runs/r26}; H=$WT/docs/results
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
L="flock /tmp/xfer-netns.lock"
W="warmup:cc=bbr:ppo"
past() { [ -n "${1:-}" ] && [ "$(date -u +%s)" -gt "$(date -u -d "$1" +%s)" ]; }
until grep -q "^DONE" $R/sweep26.out 2>/dev/null; do sleep 20; done
# references: the stored yardsticks, with gen-v4's v05-v08 from this round's sweep
REFS=$R/refs26; mkdir -p $REFS
cp $H/gen-v1-validation/*.json $H/gen-v3-validation/*.json $H/gen-v4-validation/*.json \
   $R/gen-v4-validation/*.json $REFS/
echo "rule 1 start $(date -u +%T)"
S=()
for s in gen-v1/validation/gen-v1-v04 gen-v3/validation/gen-v3-v06 gen-v4/validation/gen-v4-v01 \
         gen-v4/validation/gen-v4-v02 gen-v4/validation/gen-v4-v03; do
  S+=(--scenario configs/suites/$s.toml)
done
$L python3 -m xfer.cli evaluate "${S[@]}" --policy "$W" --policy ppo --repeat 3 --reference $REFS \
   --out $R/val26 --json $R/val26-W.json > $R/val26-W.log 2>&1
echo "rule 1 rc $? $(date -u +%T)"
python3 -m train.verdict $R/val26-W.json "$W" ppo --min-ustar 10 > $R/rule26-W-val.txt 2>&1
V=$?; cat $R/rule26-W-val.txt; echo "rule 1 verdict rc $V"
echo "rule 3 start $(date -u +%T)"
mkdir -p $R/gen-v5-test
for f in configs/suites/gen-v5/test/*.toml; do
  n=$(basename $f .toml)
  if past "${YARD_DEADLINE:-}"; then echo "gen-v5 yardstick stopped before $n: past $YARD_DEADLINE"; break; fi
  echo "sweep $n start $(date -u +%T)"
  $L python3 -m xfer.cli evaluate --scenario $f --policy gd --policy bo \
    --sweep 1,2,4,8,12,16,24,32 --repeat 2 --out $R/gen-v5-sweep --json $R/gen-v5-test/$n.json > $R/gen-v5-$n.log 2>&1
  echo "sweep $n rc $? $(date -u +%T)"
done
if [ $V -ne 0 ]; then echo "rule 2 not run: rule 1 failed"; echo "DONE $(date -u +%T)"; exit 0; fi
if [ $(ls $R/gen-v5-test/*.json | wc -l) -ne 8 ]; then echo "rule 2 not run: yardstick incomplete"; echo "DONE $(date -u +%T)"; exit 0; fi
if past "${TEST_DEADLINE:-}"; then echo "rule 2 not run: past $TEST_DEADLINE, left for the next round"; echo "DONE $(date -u +%T)"; exit 0; fi
echo "rule 2 start $(date -u +%T)"
S=(); for f in configs/suites/gen-v5/test/*.toml; do S+=(--scenario $f); done
$L python3 -m xfer.cli evaluate "${S[@]}" --policy "$W" --policy ppo --repeat 2 \
   --reference $R/gen-v5-test --out $R/test26 --json $R/test-gen-v5-W.json > $R/test-gen-v5-W.log 2>&1
echo "rule 2 rc $? $(date -u +%T)"
python3 -m train.verdict $R/test-gen-v5-W.json "$W" ppo --min-ustar 10 --test > $R/rule26-W-test.txt 2>&1
echo "rule 2 verdict rc $?"; cat $R/rule26-W-test.txt
echo "DONE $(date -u +%T)"
