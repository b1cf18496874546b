#!/usr/bin/env bash
# Round 16 testbed chain: (wait for gen-v2 validation yardstick v11-v16) -> validation A/B
# gen-v1 -> gen-v2 -> rule 3 -> fig3 x3 -> rule 4. Usage: chain16.sh CAND_SPEC TAG.
# From a frozen worktree at /work/wt/eval.
set -uo pipefail
CAND="$1"; TAG="$2"; R=/work/runs/r16; WT=/work/wt/eval; H=$WT/docs/results
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
L="flock /tmp/xfer-netns.lock"
until grep -q "gen-v2-v16 rc" $R/yard.log; do sleep 20; done
cp $R/gen-v2-v1[1-6].json $H/gen-v2-validation/  # the yardstick swept this round (data only)
for S in gen-v1 gen-v2; do
  echo "validation $S start $(date -u +%T)"
  $L python3 -m xfer.cli evaluate --suite $S --set validation --policy "$CAND" --policy ppo --repeat 2 \
     --reference $H/$S-validation --out $R/val-$S-$TAG --json $R/val-$S-$TAG.json > $R/val-$S-$TAG.log 2>&1 \
     || { echo "validation $S rc $? $(date -u +%T)"; exit 1; }
done
python3 $H/issue16-round15/rule15.py $R/val-gen-v1-$TAG.json,$R/val-gen-v2-$TAG.json "$CAND" ppo \
   --min-ustar 10 | tee $R/val-$TAG.txt || { echo "validation FAIL $(date -u +%T)"; exit 1; }
echo "fig3 start $(date -u +%T)"
$L python3 -m xfer.cli experiment fig3 --policies "$CAND" --repetitions 3 --no-sweep --out $R/fig3-$TAG > $R/fig3-$TAG.log 2>&1
python3 $H/issue16-round14/fig3check.py $R/fig3-$TAG "$CAND" && echo "ON $(date -u +%T)" || echo "fig3 FAIL $(date -u +%T)"
