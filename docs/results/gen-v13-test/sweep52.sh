#!/usr/bin/env bash
# Sweep gen-v13's test scenarios (README.md here), one per lock, skipping those already stored.
#   WT=/work/wt/sweep52 bash docs/results/gen-v13-test/sweep52.sh [NAME...]
set -uo pipefail
WT=${WT:?frozen worktree}; O=${O:-/work/main/docs/results/gen-v13-test}
cd "$WT" && export PYTHONPATH=$WT && mkdir -p /work/runs/sweep52
names=("$@"); [ ${#names[@]} -gt 0 ] || names=(gen-v13-t0{1..8})
for n in "${names[@]}"; do
  [ -f "$O/$n.json" ] && continue
  echo "$n start $(date -u +%T)"
  flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --scenario "configs/suites/gen-v13/test/$n.toml" \
    --policy gd --sweep 1,2,4,8,16,32,48 --repeat 1 --out "/work/runs/sweep52/$n" --json "$O/$n.json.tmp" \
    > "/work/runs/sweep52/$n.log" 2>&1 && mv "$O/$n.json.tmp" "$O/$n.json"
  echo "$n rc $? $(date -u +%T)"
done
