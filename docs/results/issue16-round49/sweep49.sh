#!/usr/bin/env bash
# Round 49: gen-v11's yardstick (no policy of ours), one scenario per lock; kept ones are skipped.
#   WT=/work/wt/r49 R=/work/runs/r49 bash docs/results/issue16-round49/sweep49.sh
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}
cd "$WT" && export PYTHONPATH=$WT && mkdir -p "$R/gen-v11-test"
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__"
for f in configs/suites/gen-v11/test/*.toml; do
  n=$(basename "$f" .toml)
  [ -s "$R/gen-v11-test/$n.json" ] && { echo "sweep $n kept"; continue; }
  echo "sweep $n start $(date -u +%T)"
  flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --scenario "$f" --policy gd \
    --sweep 1,2,4,8,16,32,48 --repeat 1 --out "$R/gen-v11-sweep" --json "$R/gen-v11-test/$n.json" \
    > "$R/gen-v11-$n.log" 2>&1
  echo "sweep $n rc $? $(date -u +%T)"
done
echo "SWEPT $(date -u +%T)"
