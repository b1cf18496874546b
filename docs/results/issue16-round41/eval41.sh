#!/usr/bin/env bash
# Round 41 rules 0-3: F41 = fast:ppo beside ppo on gen-v7 validation (3 runs), the LAN
# situations (2 runs), gen-v2 validation's short paths (2 runs). One block at a time.
# f7 and fsit ran; the script was stopped before f2 (rule 3 did not run: README).
set -uo pipefail
WT=${WT:-/work/wt/r41}; R=${R:-/work/runs/r41}
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
mkdir -p $R
F="fast:ppo"
python3 -m train.gates "$F" > $R/gates.txt 2>&1 || { echo "gates fail"; cat $R/gates.txt; exit 1; }
ev() {  # NAME RUNS ARGS...
  local n=$1 k=$2; shift 2
  echo "$n start $(date -u +%T)"
  flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate "$@" --policy "$F" --policy ppo \
    --repeat "$k" --out $R/$n --json $R/$n.json > $R/$n.log 2>&1
  echo "$n rc $? $(date -u +%T)"
}
ev f7 3 --suite gen-v7 --set validation --reference docs/results/gen-v7-validation
ev fsit 2 --scenario-file configs/sets/situations-lan.txt --reference docs/results/gen-v1-validation
ev f2 2 --scenario-file configs/sets/gen-v2-short.txt --reference docs/results/gen-v2-validation
