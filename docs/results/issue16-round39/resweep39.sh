#!/usr/bin/env bash
# Round 39 rule 4a: a second sweep of the situations (one run per count), against the stored yardstick.
set -uo pipefail
WT=${WT:-/work/wt/oracle39}; R=${R:-/work/runs/r39}
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
pols=(); for n in 1 2 4 8 12 16 24 32; do pols+=(--policy fixed:$n); done
echo "resweep start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --scenario-file configs/sets/situations.txt \
  "${pols[@]}" --repeat 1 \
  --reference docs/results/gen-v1-validation --out $R/resweep --json $R/resweep.json > $R/resweep.log 2>&1
echo "resweep rc $? $(date -u +%T)"
