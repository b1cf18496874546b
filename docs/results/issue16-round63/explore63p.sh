#!/usr/bin/env bash
# Round 63: candidate P (round 62's O with policy.rebound at its defaults) on validation, under
# the rules README.md here declares before any run: onoff63p-class (the 4 long on/off BBR paths
# the rebound is for, 3 runs, rule 18's form and a paired difference > 0), then mid4p (3 runs,
# the floor and --clear-loss), then onoff63p-guard (the 9 other on/off paths of >= 30 ms, 3
# runs, the floor and --clear-loss). Beside `ppo`, the shipped M (O did not ship). Every verdict --min-ustar 10
# --as-base (rule 19), each block one invocation under the testbed lock. A fail stops it.
#   WT=/work/wt/r63p R=/work/runs/r63p bash docs/results/issue16-round63/explore63p.sh
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}
H=${H:-ppo:policy/weights/candidates/round63p.pt}
export WT R
mkdir -p "$R"
cd "$WT" || exit 2
export PYTHONPATH=$WT
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__" || exit 2
# shellcheck source=../../../scripts/chain-lib.sh
source scripts/chain-lib.sh
refs=(--reference docs/results/gen-v1-validation --reference docs/results/gen-v2-validation
  --reference docs/results/gen-v3-validation --reference docs/results/gen-v4-validation
  --reference docs/results/gen-v6-validation --reference docs/results/situations-long-bbr)

block onoff63p-class 3 "--scenario-floor 0.05 --clear-loss 0.05" \
  --scenario-file configs/sets/onoff63-class.txt "${refs[@]}" || stop "onoff63p-class (verdict or run)"
paired_positive onoff63p-class
block mid4p 3 "--scenario-floor 0.05 --clear-loss 0.05" \
  --scenario-file configs/sets/mid-rtt-val-cubic.txt "${refs[@]}" || stop "mid4p (verdict or run)"
block onoff63p-guard 3 "--scenario-floor 0.05 --clear-loss 0.05" \
  --scenario-file configs/sets/onoff63-guard.txt "${refs[@]}" || stop "onoff63p-guard (verdict or run)"
log "$H PASSED THE ON/OFF VALIDATION"
