#!/usr/bin/env bash
# Round 59, steps 1-2 (README.md here): the new validation scenario's yardstick (sweep of N,
# GD and BO, once each), then E beside the shipped policy (D) on the development set
# configs/sets/short-shared.txt, 2 runs, one invocation. Validation: this block may choose.
#   WT=/work/wt/r59 R=/work/runs/r59 bash docs/results/issue16-round59/dev59.sh
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}
E=ppo:policy/weights/candidates/round59e.pt
cd "$WT" && export PYTHONPATH=$WT && mkdir -p "$R" docs/results/situations-lan-shared \
  /work/main/docs/results/situations-lan-shared
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__"
y=docs/results/situations-lan-shared/hand-lan-cubic-capped.json
if [ ! -f "/work/main/$y" ]; then
  echo "yardstick start $(date -u +%T)"
  flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate \
    --scenario configs/situations/hand-lan-cubic-capped.toml --policy gd \
    --sweep 1,2,4,8,16,32,48 --repeat 1 --out "$R/yard-lcc" --json "$R/yard-lcc.json" \
    > "$R/yard-lcc.log" 2>&1 || { echo "yardstick failed"; exit 1; }
  cp "$R/yard-lcc.json" "/work/main/$y" && cp "$R/yard-lcc.json" "$y"
  echo "yardstick done $(date -u +%T)"
fi
VERDICT="--noninferior 0.05 --clear-loss 0.05" scripts/beside.sh dev59 2 "$E" \
  --scenario-file configs/sets/short-shared.txt --reference docs/results/situations-lan-shared \
  --reference docs/results/gen-v1-validation --reference docs/results/gen-v7-validation \
  --reference docs/results/gen-v15-validation --reference docs/results/gen-v13-test
