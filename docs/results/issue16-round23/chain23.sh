#!/usr/bin/env bash
# Round 23: F22's rule 4 (README.md): gen-v2 validation (2 runs, round 19's test), then, only if
# it holds, the test set (gen-v2 test, its second use, rule15 --test), F22 beside the shipped
# policy, from the frozen worktree /work/wt/eval23.
set -uo pipefail
WT=/work/wt/eval23; R=${R:-/work/runs/r23}; H=$WT/docs/results; C=$WT/policy/weights/candidates
F22="ensemble:$C/onoff-s4.pt+$C/hold-kick22-s3.pt"
L="flock /tmp/xfer-netns.lock"
mkdir -p $R
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
echo "gen-v2 validation start $(date -u +%T)"
$L python3 -m xfer.cli evaluate --suite gen-v2 --set validation --policy "$F22" --policy ppo \
   --repeat 2 --reference $H/gen-v2-validation --out $R/val-gen-v2 --json $R/val-gen-v2.json > $R/val-gen-v2.log 2>&1
echo "gen-v2 validation rc $? $(date -u +%T)"
python3 $H/issue16-round15/rule15.py $R/val-gen-v2.json "$F22" ppo --min-ustar 10 > $R/rule23-v2.txt 2>&1
rc=$?; cat $R/rule23-v2.txt; echo "gen-v2 rule rc $rc $(date -u +%T)"
[ $rc = 0 ] || { echo "DONE $(date -u +%T)"; exit 0; }
echo "test start $(date -u +%T)"
$L python3 -m xfer.cli evaluate --suite gen-v2 --set test --policy "$F22" --policy ppo \
   --repeat 2 --reference $H/gen-v2-test --out $R/test-gen-v2 --json $R/test-gen-v2.json > $R/test-gen-v2.log 2>&1
echo "test rc $? $(date -u +%T)"
python3 $H/issue16-round15/rule15.py $R/test-gen-v2.json "$F22" ppo --test --min-ustar 10 > $R/rule23-test.txt 2>&1
echo "test rule rc $? $(date -u +%T)"; cat $R/rule23-test.txt
echo "DONE $(date -u +%T)"
