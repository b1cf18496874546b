#!/usr/bin/env bash
# Round 33 rule 1' (README): chain32.sh's gate and rule-1 lines alone, for QSPEC, from the
# frozen worktree $WT: gen-v2 validation beside ppo, 2 runs, non-inferiority 0.05.
set -uo pipefail
WT=${WT:-/work/wt/eval33b}; R=${R:-/work/runs/r33}; H=$WT/docs/results
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
X=$QSPEC; echo "Q = $X"
python3 -m train.gates --target "$X" > $R/gates33Qb.txt 2>&1; rc=$?; cat $R/gates33Qb.txt
[ $rc = 0 ] || { echo "gates fail"; exit 1; }
echo "rule 1' start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --suite gen-v2 --set validation \
   --policy "$X" --policy ppo --repeat 2 --reference $H/gen-v2-validation \
   --out $R/val-gen-v2-Qb --json $R/val-gen-v2-Qb.json > $R/val-gen-v2-Qb.log 2>&1
echo "rule 1' evaluate rc $? $(date -u +%T)"
python3 -m train.verdict $R/val-gen-v2-Qb.json "$X" ppo --min-ustar 10 --noninferior 0.05 > $R/rule33b-v2.txt 2>&1
rc=$?; cat $R/rule33b-v2.txt; echo "rule 1' verdict rc $rc $(date -u +%T)"
