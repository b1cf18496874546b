#!/usr/bin/env bash
# Round 43: F43 = fast:ramp=5,max_rtt_ms=1:ppo beside ppo, a second look (README.md here).
# BLOCKS=g7: rule 1, gen-v7's four sub-ms validation scenarios, 5 fresh runs.
# BLOCKS=test: rule 2, the test set where it acts (gen-v2-test-lan), once, 2 runs; only if
# rule 1 passes. One block at a time, from a frozen worktree of the commit adding the rules.
# Rule 5 (F44): CAND=fast:ramp=5,fine=1,max_rtt_ms=1:ppo TAG=f44- and the blocks g7, sit (the
# LAN situations, 2 runs), g2 (gen-v2 validation's sub-ms paths, 2 runs), test.
set -uo pipefail
WT=${WT:-/work/wt/r43}; R=${R:-/work/runs/r43}
BLOCKS=${BLOCKS:-g7}
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
mkdir -p $R
F=${CAND:-"fast:ramp=5,max_rtt_ms=1:ppo"}
ev() {  # NAME RUNS ARGS... (NAME prefixed by TAG)
  local n=${TAG:-}$1 k=$2; shift 2
  echo "$n start $(date -u +%T)"
  flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate "$@" --policy "$F" --policy ppo \
    --repeat "$k" --out $R/$n --json $R/$n.json > $R/$n.log 2>&1
  echo "$n rc $? $(date -u +%T)"
}
for b in $BLOCKS; do
  case $b in
    g7) ev g7 5 --scenario-file configs/sets/gen-v7-lan.txt --reference docs/results/gen-v7-validation ;;
    sitall) ev sitall 2 --scenario-file configs/sets/situations.txt --reference docs/results/gen-v1-validation ;;  # rule 9
    sit) ev sit 2 --scenario-file configs/sets/situations-lan.txt --reference docs/results/gen-v1-validation ;;
    g2) ev g2 2 --scenario-file configs/sets/gen-v2-lan.txt --reference docs/results/gen-v2-validation ;;
    test) ev test 2 --scenario-file configs/sets/gen-v2-test-lan.txt --reference docs/results/gen-v2-test ;;
  esac
done
