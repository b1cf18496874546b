#!/usr/bin/env bash
# Round 56, after K55 shipped: issue #16's situations (configs/sets/situations.txt, gen-v1's
# stored yardstick) for the new default (`ppo`) beside round 45's (round45.pt), 3 runs each,
# one invocation. A status reading: it chooses nothing (README.md here).
#   WT=/work/wt/r56s R=/work/runs/r56 bash docs/results/issue16-round56/sit56.sh
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}; n=sit
cd "$WT" && export PYTHONPATH=$WT && mkdir -p "$R"
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__"
echo "$n start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --scenario-file configs/sets/situations.txt \
  --reference docs/results/gen-v1-validation --policy ppo \
  --policy ppo:policy/weights/candidates/round45.pt --repeat 3 \
  --out "$R/$n" --json "$R/$n.json" > "$R/$n.log" 2>&1
echo "$n rc $? $(date -u +%T)"
