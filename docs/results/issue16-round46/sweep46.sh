#!/usr/bin/env bash
# Round 46 rule 1: gen-v9's yardstick (no policy of ours), one scenario per lock.
#   WT=/work/wt/r46s R=/work/runs/r46 bash docs/results/issue16-round46/sweep46.sh
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}
cd "$WT" && export PYTHONPATH=$WT && mkdir -p "$R/gen-v9-test"
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__"
for f in configs/suites/gen-v9/test/*.toml; do
  n=$(basename "$f" .toml)
  [ -s "$R/gen-v9-test/$n.json" ] && { echo "sweep $n kept"; continue; }  # t01: no schedule, swept before the clock fix
  echo "sweep $n start $(date -u +%T)"
  flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --scenario "$f" --policy gd \
    --sweep 1,2,4,8,16,32,48 --repeat 1 --out "$R/gen-v9-sweep" --json "$R/gen-v9-test/$n.json" \
    > "$R/gen-v9-$n.log" 2>&1
  echo "sweep $n rc $? $(date -u +%T)"
done
echo "DONE $(date -u +%T)"
