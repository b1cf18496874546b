#!/usr/bin/env bash
# Round 58: D on gen-v17's test set, once, 3 runs beside K55 (README.md here, last section).
#   WT=/work/wt/r58t R=/work/runs/r58 bash docs/results/issue16-round58/test58d.sh
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}; n=test-d
D=ppo:policy/weights/candidates/round58d.pt
cd "$WT" && export PYTHONPATH=$WT && mkdir -p "$R"
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__"
echo "$n start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --suite gen-v17 --set test \
  --reference docs/results/gen-v17-test --policy "$D" --policy ppo --repeat 3 \
  --out "$R/$n" --json "$R/$n.json" > "$R/$n.log" 2>&1
echo "$n rc $? $(date -u +%T)"
python3 -m train.verdict --min-ustar 10 --noninferior 0.05 --clear-loss 0.05 \
  --as-base "$R/$n" "$R/$n.json" "$D" ppo
echo "verdict rc $?"
