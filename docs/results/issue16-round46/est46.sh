#!/usr/bin/env bash
# Round 46: issue #16's situation 3 with the rival established (head_start_s = 5): its
# yardstick (sweep as hand-bbr-shared-1g's, GD and BO once), then the shipped policy, 4 runs.
#   WT=/work/wt/r46e R=/work/runs/r46 bash docs/results/issue16-round46/est46.sh
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}
cd "$WT" && export PYTHONPATH=$WT && mkdir -p "$R/established"
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__"
f=configs/situations/hand-bbr-established-1g.toml; n=$(basename "$f" .toml)
echo "sweep $n start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --scenario "$f" --policy gd \
  --sweep 1,2,4,8,12,16,24,32 --repeat 1 --out "$R/established-sweep" --json "$R/established/$n.json" \
  > "$R/established-sweep.log" 2>&1
echo "sweep $n rc $? $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --scenario "$f" --policy ppo --repeat 4 \
  --reference "$R/established" --out "$R/s46-est" --json "$R/s46-est.json" > "$R/s46-est.log" 2>&1
echo "ppo $n rc $? $(date -u +%T)"
