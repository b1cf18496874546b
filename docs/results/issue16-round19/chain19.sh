#!/usr/bin/env bash
# Round 19 testbed chain (README rules 3-5): gen-v3 validation, E19 beside the shipped policy
# -> the five hand-written scenarios at 4 runs -> rule 5 -> (if it holds) gen-v2 validation.
# From a frozen worktree at /work/wt/eval19. E19 (the spec), R (the output dir) and SKIP_V2
# (stop before gen-v2 validation) may be set from outside (E19c: R=/work/runs/r19c).
set -uo pipefail
WT=/work/wt/eval19; R=${R:-/work/runs/r19}; H=$WT/docs/results; C=$WT/policy/weights/candidates
E19="${E19:-ensemble:$C/hold-cc19-s2.pt+$C/onoff-cc19-s4.pt}"  # E19 (README), or the amendment's E19b
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
L="flock /tmp/xfer-netns.lock"
# A finished gen-v3 step is not run again (07:41: the hand step had a typo, fixed at 07:43).
if [ ! -s $R/val-gen-v3.json ]; then
echo "gen-v3 A/B start $(date -u +%T)"
$L python3 -m xfer.cli evaluate --suite gen-v3 --set validation --policy "$E19" --policy ppo \
   --repeat 2 --reference $H/gen-v3-validation --out $R/val-gen-v3 --json $R/val-gen-v3.json > $R/val-gen-v3.log 2>&1
echo "gen-v3 A/B rc $? $(date -u +%T)"
fi
HANDS=""
for h in bbr-shared-1g lan-capped lan-reno lossy-long onoff-180ms; do
  HANDS="$HANDS --scenario configs/suites/gen-v1/validation/hand-$h.toml"
done
echo "hand x4 start $(date -u +%T)"
$L python3 -m xfer.cli evaluate $HANDS --policy "$E19" --policy ppo \
   --repeat 4 --reference $H/gen-v1-validation --out $R/hand --json $R/hand.json > $R/hand.log 2>&1
echo "hand x4 rc $? $(date -u +%T)"
ok=0
for J in val-gen-v3 hand; do
  echo "== E19 on $J"
  python3 $H/issue16-round15/rule15.py $R/$J.json "$E19" ppo --min-ustar 10 || ok=1
done > $R/rule19.txt 2>&1
echo "== pooled" >> $R/rule19.txt
python3 $H/issue16-round15/rule15.py $R/val-gen-v3.json,$R/hand.json "$E19" ppo --min-ustar 10 >> $R/rule19.txt 2>&1
echo "rule 5: $([ $ok = 0 ] && echo pass || echo fail)" | tee -a $R/rule19.txt
if [ $ok = 0 ] && [ -z "${SKIP_V2:-}" ]; then
  echo "gen-v2 validation start $(date -u +%T)"
  $L python3 -m xfer.cli evaluate --suite gen-v2 --set validation --policy "$E19" --policy ppo \
     --repeat 2 --reference $H/gen-v2-validation --out $R/val-gen-v2 --json $R/val-gen-v2.json > $R/val-gen-v2.log 2>&1
  echo "gen-v2 validation rc $? $(date -u +%T)"
  python3 $H/issue16-round15/rule15.py $R/val-gen-v2.json "$E19" ppo --min-ustar 10 > $R/rule19-v2.txt 2>&1
fi
echo "DONE $(date -u +%T)"
