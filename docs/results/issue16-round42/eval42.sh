#!/usr/bin/env bash
# Round 42: F42 = fast:grow=2,max_rtt_ms=1:ppo beside ppo. Rule 0 gates; rule 1 gen-v7
# validation (3 runs); rule 2 the LAN situations (2 runs); rule 3 gen-v2 validation's
# sub-millisecond paths (2 runs). BLOCKS picks which; one block at a time. Rule 4 (the test
# set where it acts, once, 2 runs) is BLOCKS=test, run only if rules 1a, 2 and 3 pass (it never
# ran this round). Rule 7: CAND=fast:ramp=5,max_rtt_ms=1:ppo TAG=f43- (F43), the same blocks.
set -uo pipefail
WT=${WT:-/work/wt/r42}; R=${R:-/work/runs/r42}
BLOCKS=${BLOCKS:-"gates g7 sit g2"}
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
mkdir -p $R
F=${CAND:-"fast:grow=2,max_rtt_ms=1:ppo"}
ev() {  # NAME RUNS ARGS... (NAME prefixed by TAG)
  local n=${TAG:-}$1 k=$2; shift 2
  echo "$n start $(date -u +%T)"
  flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate "$@" --policy "$F" --policy ppo \
    --repeat "$k" --out $R/$n --json $R/$n.json > $R/$n.log 2>&1
  echo "$n rc $? $(date -u +%T)"
}
for b in $BLOCKS; do
  case $b in
    gates) python3 -m train.gates "$F" > $R/${TAG:-}gates.txt 2>&1 || { echo "gates fail"; cat $R/${TAG:-}gates.txt; exit 1; } ;;
    g7) ev g7 3 --suite gen-v7 --set validation --reference docs/results/gen-v7-validation ;;
    sit) ev sit 2 --scenario-file configs/sets/situations-lan.txt --reference docs/results/gen-v1-validation ;;
    g2) ev g2 2 --scenario-file configs/sets/gen-v2-lan.txt --reference docs/results/gen-v2-validation ;;
    test) ev test 2 --scenario-file configs/sets/gen-v2-test-lan.txt --reference docs/results/gen-v2-test ;;
  esac
done
