#!/usr/bin/env bash
# Round 38 rule 3b: exo:ppo beside ppo on gen-v2 validation (2 runs), then fig3 (3 repetitions).
set -uo pipefail
WT=${WT:-/work/wt/diag38}; R=${R:-/work/runs/r38}; H=docs/results
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
X1="exo:ppo"
echo "gen-v2 start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --suite gen-v2 --set validation \
  --policy "$X1" --policy ppo --repeat 2 --reference $H/gen-v2-validation \
  --out $R/val2 --json $R/val2.json > $R/val2.log 2>&1
echo "gen-v2 rc $? $(date -u +%T)"
python3 -m train.verdict $R/val2.json "$X1" ppo --min-ustar 10 --noninferior 0.05 --agree 0.3 \
  > $R/diag-gen-v2.txt 2>&1
echo "fig3 start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli experiment fig3 --policies "$X1" --repetitions 3 \
  --no-sweep --out $R/fig3 > $R/fig3.log 2>&1
echo "fig3 rc $? $(date -u +%T)"
python3 $H/issue16-round14/fig3check.py $R/fig3 "$X1" > $R/diag-fig3.txt 2>&1
echo "done $(date -u +%T)"
