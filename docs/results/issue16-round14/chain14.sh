#!/usr/bin/env bash
# Round 14 testbed chain: fig3 x3 -> validation A/B beside the shipped policy -> rule 6 ->
# gen-v2 test A/B -> rule 7. Usage: chain14.sh CAND_SPEC TAG. From a frozen worktree.
set -uo pipefail
CAND="$1"; TAG="$2"; R=/work/runs/r14; WT=/work/wt/eval
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
L="flock /tmp/xfer-netns.lock"
echo "fig3 start $(date -u +%T)"
$L xfer experiment fig3 --policies "$CAND" --repetitions 3 --no-sweep --out $R/fig3-$TAG > $R/fig3-$TAG.log 2>&1
python3 $R/fig3check.py $R/fig3-$TAG "$CAND" || { echo "fig3 FAIL $(date -u +%T)"; exit 1; }
echo "validation start $(date -u +%T)"
mkdir -p $R/val-$TAG-json
for f in $R/valref/*.json; do
  n=$(basename $f .json)
  $L xfer evaluate --scenario configs/suites/gen-v1/validation/$n.toml --policy "$CAND" --policy ppo \
     --repeat 2 --reference $R/valref --out $R/val-$TAG --resume --json $R/val-$TAG-json/$n.json > $R/val-$TAG-$n.log 2>&1 \
     || echo "validation $n failed rc $?"
done
python3 $R/tab14.py $R/val-$TAG-json "$CAND" ppo $R/val-$TAG.json | tee $R/val-$TAG.txt
python3 $R/rule14.py $R/val-$TAG.json || { echo "validation FAIL $(date -u +%T)"; exit 1; }
echo "test start $(date -u +%T)"
mkdir -p $R/test-$TAG-json
for f in $WT/configs/suites/gen-v2/test/*.toml; do
  n=$(basename $f .toml)
  case $n in gen-v2-t13|gen-v2-t20) continue;; esac
  $L xfer evaluate --scenario configs/suites/gen-v2/test/$n.toml --policy "$CAND" --policy ppo \
     --repeat 2 --reference $WT/docs/results/gen-v2-test --out $R/test-$TAG --resume --json $R/test-$TAG-json/$n.json > $R/test-$TAG-$n.log 2>&1 \
     || echo "test $n failed rc $?"
done
python3 $R/tab14.py $R/test-$TAG-json "$CAND" ppo $R/test-$TAG.json | tee $R/test-$TAG.txt
python3 $R/rule14.py $R/test-$TAG.json && echo "SHIP $(date -u +%T)" || echo "test FAIL $(date -u +%T)"
