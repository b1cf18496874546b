#!/usr/bin/env bash
# Sweep gen-v12's test scenarios (README.md here), one per lock, skipping those already stored.
#   WT=/work/wt/sweep51 bash docs/results/gen-v12-test/sweep51.sh [NAME...]
set -uo pipefail
WT=${WT:?frozen worktree}; O=${O:-/work/main/docs/results/gen-v12-test}
cd "$WT" && export PYTHONPATH=$WT
names=("$@"); [ ${#names[@]} -gt 0 ] || names=(gen-v12-t0{1..8})
for n in "${names[@]}"; do
  [ -f "$O/$n.json" ] && continue
  echo "$n start $(date -u +%T)"
  flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --scenario "configs/suites/gen-v12/test/$n.toml" \
    --policy gd --sweep 1,2,4,8,16,32,48 --repeat 1 --out "/work/runs/sweep51/$n" --json "$O/$n.json.tmp" \
    > "/work/runs/sweep51/$n.log" 2>&1 && mv "$O/$n.json.tmp" "$O/$n.json"
  echo "$n rc $? $(date -u +%T)"
done
