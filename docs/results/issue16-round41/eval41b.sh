#!/usr/bin/env bash
# Round 41 rule 6: F41b = fast:max_rtt_ms=1:ppo beside ppo on gen-v7 validation (3 runs, 6a),
# then gen-v2 validation's sub-millisecond paths (2 runs, 6c), then hand-lan-reno (4 runs, 6e),
# all diagnostics since 6b failed (README). One block at a time.
set -uo pipefail
WT=${WT:-/work/wt/r41b}; R=${R:-/work/runs/r41}
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
mkdir -p $R
F="fast:max_rtt_ms=1:ppo"
python3 -m train.gates "$F" > $R/gates-b.txt 2>&1 || { echo "gates fail"; cat $R/gates-b.txt; exit 1; }
ev() {  # NAME RUNS ARGS...
  local n=$1 k=$2; shift 2
  echo "$n start $(date -u +%T)"
  flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate "$@" --policy "$F" --policy ppo \
    --repeat "$k" --out $R/$n --json $R/$n.json > $R/$n.log 2>&1
  echo "$n rc $? $(date -u +%T)"
}
ev b7 3 --suite gen-v7 --set validation --reference docs/results/gen-v7-validation
ev b2 2 --scenario-file configs/sets/gen-v2-lan.txt --reference docs/results/gen-v2-validation
ev breno 4 --scenario-file docs/results/issue16-round41/reno41.txt \
  --reference docs/results/gen-v1-validation
