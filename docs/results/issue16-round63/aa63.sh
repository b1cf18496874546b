#!/usr/bin/env bash
# Round 63: an A/A reading of the on/off class set (README.md here, declared before its run;
# a protocol reading that chooses nothing): the shipped policy beside itself under two labels,
# 4 runs each, one invocation under the testbed lock from a frozen worktree. Its JSON is the
# set's noise for rule 14 (`train.verdict --aa aa-onoff63-class.json ...`).
#   WT=/work/wt/r63aa R=/work/runs/r63aa bash docs/results/issue16-round63/aa63.sh
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}
export WT R
mkdir -p "$R"
cd "$WT" || exit 2
export PYTHONPATH=$WT
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__" || exit 2
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --scenario-file configs/sets/onoff63-class.txt \
  --reference docs/results/gen-v1-validation --reference docs/results/gen-v4-validation \
  --reference docs/results/situations-long-bbr --policy ppo:policy/weights/default.pt --policy ppo \
  --repeat 4 --out "$R/aa-onoff63-class" --json "$R/aa-onoff63-class.json" > "$R/aa.log" 2>&1 || exit 1
python3 -m lab.trace "$R/aa-onoff63-class" > "$R/aa-onoff63-class-trace.txt"
python3 -m train.verdict --min-ustar 10 "$R/aa-onoff63-class.json" ppo:policy/weights/default.pt ppo \
  | tee "$R/verdict-aa.txt"
