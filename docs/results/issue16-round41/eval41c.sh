#!/usr/bin/env bash
# Round 41 rule 7: F41c = fast:grow=1,max_rtt_ms=1:ppo beside ppo on gen-v7 validation (3 runs,
# 7a), the LAN situations (2 runs, 7b), gen-v2 validation's sub-millisecond paths (2 runs, 7c).
# One block at a time.
set -uo pipefail
WT=${WT:-/work/wt/r41c}; R=${R:-/work/runs/r41}
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
mkdir -p $R
F="fast:grow=1,max_rtt_ms=1:ppo"
python3 -m train.gates "$F" > $R/gates-c.txt 2>&1 || { echo "gates fail"; cat $R/gates-c.txt; exit 1; }
ev() {  # NAME RUNS ARGS...
  local n=$1 k=$2; shift 2
  echo "$n start $(date -u +%T)"
  flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate "$@" --policy "$F" --policy ppo \
    --repeat "$k" --out $R/$n --json $R/$n.json > $R/$n.log 2>&1
  echo "$n rc $? $(date -u +%T)"
}
ev c7 3 --suite gen-v7 --set validation --reference docs/results/gen-v7-validation
ev csit 2 --scenario-file configs/sets/situations-lan.txt --reference docs/results/gen-v1-validation
ev c2 2 --scenario-file configs/sets/gen-v2-lan.txt --reference docs/results/gen-v2-validation
