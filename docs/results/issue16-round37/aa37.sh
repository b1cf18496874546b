#!/usr/bin/env bash
# Round 37 rule 5: the shipped policy beside itself (A = round 26's bundle as a spec) on rule
# 2b's scenarios, exactly as the chain runs them.
set -uo pipefail
WT=${WT:-/work/wt/eval37c}; R=${R:-/work/runs/r37}
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
A="warmup:cc=bbr:ensemble:policy/weights/candidates/hold-s2.pt+policy/weights/candidates/onoff-s4.pt"
H=docs/results; L="flock /tmp/xfer-netns.lock"
echo "aa start $(date -u +%T)"
$L python3 -m xfer.cli evaluate --suite gen-v7 --set validation --policy "$A" --policy ppo \
  --repeat 2 --reference $H/gen-v7-validation --out $R/gen-v7-aa --json $R/gen-v7-aa.json \
  > $R/gen-v7-aa.log 2>&1
$L python3 -m xfer.cli evaluate --scenario-file configs/sets/situations.txt \
  --reference $H/gen-v1-validation --policy "$A" --policy ppo --repeat 2 --out $R/situations-aa \
  --json $R/situations-aa.json > $R/situations-aa.log 2>&1
python3 -m train.verdict $R/gen-v7-aa.json,$R/situations-aa.json "$A" ppo --min-ustar 10 \
  > $R/rule2b-aa.txt 2>&1
echo "aa rc $? $(date -u +%T)"; tail -2 $R/rule2b-aa.txt
