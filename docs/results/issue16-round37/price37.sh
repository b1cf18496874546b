#!/usr/bin/env bash
# Round 37 rule 4: a guard's price on gen-v2 validation beside the shipped policy (X=SPEC TAG=NAME).
set -uo pipefail
WT=${WT:-/work/wt/eval37b}; R=${R:-/work/runs/r37}
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
echo "rule 4 $TAG = $X start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --suite gen-v2 --set validation \
  --policy "$X" --policy ppo --repeat 2 --reference docs/results/gen-v2-validation \
  --out $R/val-gen-v2-$TAG --json $R/val-gen-v2-$TAG.json > $R/val-gen-v2-$TAG.log 2>&1
echo "rule 4 rc $? $(date -u +%T)"
python3 -m train.verdict $R/val-gen-v2-$TAG.json "$X" ppo --min-ustar 10 --noninferior 0.05 \
  --agree 0.3 > $R/rule4-$TAG.txt 2>&1; echo "verdict rc $?"; cat $R/rule4-$TAG.txt
