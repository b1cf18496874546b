#!/usr/bin/env bash
# Round 45 rule 1: gen-v8's yardstick (no policy of ours), one scenario per lock.
#   WT=/work/wt/r45s R=/work/runs/r45 bash docs/results/issue16-round45/sweep45.sh
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}
cd "$WT" && export PYTHONPATH=$WT && mkdir -p "$R/gen-v8-test"
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__"
for f in configs/suites/gen-v8/test/*.toml; do
  n=$(basename "$f" .toml)
  echo "sweep $n start $(date -u +%T)"
  flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --scenario "$f" --policy gd \
    --sweep 1,2,4,8,16,32,48 --repeat 1 --out "$R/gen-v8-sweep" --json "$R/gen-v8-test/$n.json" \
    > "$R/gen-v8-$n.log" 2>&1
  echo "sweep $n rc $? $(date -u +%T)"
done
echo "DONE $(date -u +%T)"
