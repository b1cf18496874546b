#!/usr/bin/env bash
# Round 15 testbed chain: fig3 x3 -> validation A/B (gen-v1, 21 scenarios) -> rule 4 ->
# gen-v2 test A/B -> rule 5. Usage: chain15.sh CAND_SPEC TAG. From a frozen worktree.
set -uo pipefail
CAND="$1"; TAG="$2"; R=/work/runs/r15; WT=/work/wt/eval; H=$WT/docs/results/issue16-round15
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
L="flock /tmp/xfer-netns.lock"
echo "fig3 start $(date -u +%T)"
$L python3 -m xfer.cli experiment fig3 --policies "$CAND" --repetitions 3 --no-sweep --out $R/fig3-$TAG > $R/fig3-$TAG.log 2>&1
python3 $H/../issue16-round14/fig3check.py $R/fig3-$TAG "$CAND" || { echo "fig3 FAIL $(date -u +%T)"; exit 1; }
echo "validation start $(date -u +%T)"
$L python3 -m xfer.cli evaluate --suite gen-v1 --set validation --policy "$CAND" --policy ppo --repeat 2 \
   --reference $WT/docs/results/gen-v1-validation --out $R/val-$TAG --json $R/val-$TAG.json > $R/val-$TAG.log 2>&1 \
   || { echo "validation rc $? $(date -u +%T)"; exit 1; }
python3 $H/rule15.py $R/val-$TAG.json "$CAND" ppo | tee $R/val-$TAG-all.txt
python3 $H/rule15.py $R/val-$TAG.json "$CAND" ppo --exclude gen-v1-v04 | tee $R/val-$TAG.txt \
   || { echo "validation FAIL $(date -u +%T)"; exit 1; }
echo "test start $(date -u +%T)"
$L python3 -m xfer.cli evaluate --suite gen-v2 --set test --policy "$CAND" --policy ppo --repeat 2 \
   --reference $WT/docs/results/gen-v2-test --out $R/test-$TAG --json $R/test-$TAG.json > $R/test-$TAG.log 2>&1 \
   || { echo "test rc $? $(date -u +%T)"; exit 1; }
python3 $H/rule15.py $R/test-$TAG.json "$CAND" ppo --test | tee $R/test-$TAG.txt \
   && echo "SHIP $(date -u +%T)" || echo "test FAIL $(date -u +%T)"
