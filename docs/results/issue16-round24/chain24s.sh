#!/usr/bin/env bash
# Round 24, J24s: gen-v2 validation x2, then (only if it holds) fig3 x3. From /work/wt/eval24b.
set -uo pipefail
WT=/work/wt/eval24b; R=/work/runs/r24; H=$WT/docs/results; N=J24s; S="judge:ppo"
export PYTHONPATH=$WT; cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
L="flock /tmp/xfer-netns.lock"
echo "val-gen-v2 start $(date -u +%T)"
$L python3 -m xfer.cli evaluate --suite gen-v2 --set validation --policy "$S" --policy ppo --repeat 2 \
   --reference $H/gen-v2-validation --out $R/val-gen-v2-$N --json $R/val-gen-v2-$N.json > $R/val-gen-v2-$N.log 2>&1
echo "val-gen-v2 rc $? $(date -u +%T)"
python3 -m train.verdict $R/val-gen-v2-$N.json "$S" ppo --min-ustar 10 > $R/rule24-$N-v2.txt 2>&1
rc=$?; cat $R/rule24-$N-v2.txt; echo "v2 rule rc $rc $(date -u +%T)"
if [ $rc = 0 ]; then
  $L python3 -m xfer.cli experiment fig3 --policies "$S" --repetitions 3 --no-sweep --out $R/fig3-$N > $R/fig3-$N.log 2>&1
  python3 $H/issue16-round14/fig3check.py $R/fig3-$N "$S" > $R/fig3check-$N.txt 2>&1
  echo "fig3 rc $? $(date -u +%T)"; cat $R/fig3check-$N.txt
fi
echo "DONE $(date -u +%T)"
