#!/usr/bin/env bash
# Round 23, H23's chain (README): fig3 x3 -> gen-v2 validation x2 -> the five hand-written
# scenarios x4 -> gen-v3 validation x2, H23 beside the shipped policy, stopping at the first
# failure. From the frozen worktree /work/wt/eval23h.
set -uo pipefail
WT=/work/wt/eval23h; R=${R:-/work/runs/r23}; H=$WT/docs/results; C=$WT/policy/weights/candidates
H23="ppo:$C/hold-kick22-s3.pt"
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
L="flock /tmp/xfer-netns.lock"
done_() { echo "DONE $(date -u +%T)"; exit 0; }
judge() {  # judge NAME JSON: round 19's test decides; the --agree proposal is reported beside
  python3 $H/issue16-round15/rule15.py $2 "$H23" ppo --min-ustar 10 > $R/rule23h-$1.txt 2>&1
  local rc=$?; cat $R/rule23h-$1.txt; echo "$1 rule rc $rc $(date -u +%T)"
  python3 -m train.verdict $2 "$H23" ppo --min-ustar 10 --agree 0.3 2>&1 | tail -1 | sed 's/^/agree 0.3 (deciding nothing): /'
  return $rc
}
echo "fig3 start $(date -u +%T)"
$L python3 -m xfer.cli experiment fig3 --policies "$H23" --repetitions 3 --no-sweep --out $R/fig3-H23 > $R/fig3-H23.log 2>&1
python3 $H/issue16-round14/fig3check.py $R/fig3-H23 "$H23" > $R/fig3check-H23.txt 2>&1
rc=$?; cat $R/fig3check-H23.txt; echo "fig3 rc $rc $(date -u +%T)"
[ $rc = 0 ] || done_
echo "gen-v2 validation start $(date -u +%T)"
$L python3 -m xfer.cli evaluate --suite gen-v2 --set validation --policy "$H23" --policy ppo \
   --repeat 2 --reference $H/gen-v2-validation --out $R/val-gen-v2-H23 --json $R/val-gen-v2-H23.json > $R/val-gen-v2-H23.log 2>&1
echo "gen-v2 validation rc $? $(date -u +%T)"
judge v2 $R/val-gen-v2-H23.json || done_
HANDS=""
for h in bbr-shared-1g lan-capped lan-reno lossy-long onoff-180ms; do
  HANDS="$HANDS --scenario configs/suites/gen-v1/validation/hand-$h.toml"
done
echo "hand x4 start $(date -u +%T)"
$L python3 -m xfer.cli evaluate $HANDS --policy "$H23" --policy ppo \
   --repeat 4 --reference $H/gen-v1-validation --out $R/hand-H23 --json $R/hand-H23.json > $R/hand-H23.log 2>&1
echo "hand x4 rc $? $(date -u +%T)"
judge hand $R/hand-H23.json || done_
echo "gen-v3 start $(date -u +%T)"
$L python3 -m xfer.cli evaluate --suite gen-v3 --set validation --policy "$H23" --policy ppo \
   --repeat 2 --reference $H/gen-v3-validation --out $R/val-gen-v3-H23 --json $R/val-gen-v3-H23.json > $R/val-gen-v3-H23.log 2>&1
echo "gen-v3 rc $? $(date -u +%T)"
judge v3 $R/val-gen-v3-H23.json
done_
