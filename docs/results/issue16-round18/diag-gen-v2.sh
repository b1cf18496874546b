#!/usr/bin/env bash
# Round 18 diagnostic (README): gen-v2 validation, E18b beside the shipped policy, 2 runs,
# after chain18.sh is done. From the same frozen worktree.
set -uo pipefail
WT=/work/wt/eval18; R=/work/runs/r18; H=$WT/docs/results; C=$WT/policy/weights/candidates
E18="ensemble:$C/hold-bbr18-s2.pt+$C/onoff-bbr18-s5.pt"
export PYTHONPATH=$WT
cd $WT
until grep -q DONE $R/chain.log; do sleep 15; done
grep -q "gen-v2 validation start" $R/chain.log && { echo "chain ran gen-v2 itself"; exit 0; }
echo "diag gen-v2 start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --suite gen-v2 --set validation --policy "$E18" --policy ppo \
   --repeat 2 --reference $H/gen-v2-validation --out $R/val-gen-v2 --json $R/val-gen-v2.json > $R/val-gen-v2.log 2>&1
echo "diag gen-v2 rc $? $(date -u +%T)"
python3 $H/issue16-round15/rule15.py $R/val-gen-v2.json "$E18" ppo --min-ustar 10 > $R/diag-gen-v2.txt 2>&1
echo "DIAGDONE $(date -u +%T)"
