#!/usr/bin/env bash
# Round 19, S19 (README): onoff-cc19 s5 alone beside the shipped policy on gen-v3 validation.
set -uo pipefail
WT=/work/wt/eval19; R=/work/runs/r19s; H=$WT/docs/results; C=$WT/policy/weights/candidates
export PYTHONPATH=$WT
cd $WT
S19="ppo:$C/onoff-cc19-s5.pt"
echo "S19 gen-v3 start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --suite gen-v3 --set validation \
   --policy "$S19" --policy ppo --repeat 2 --reference $H/gen-v3-validation \
   --out $R/val-gen-v3 --json $R/val-gen-v3.json > $R.log 2>&1
echo "S19 gen-v3 rc $? $(date -u +%T)"
python3 $H/issue16-round15/rule15.py $R/val-gen-v3.json "$S19" ppo --min-ustar 10 > $R.rule.txt 2>&1
echo "rule 3: $([ $? = 0 ] && echo pass || echo fail)" | tee -a $R.rule.txt
