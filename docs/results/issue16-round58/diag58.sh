#!/usr/bin/env bash
# Round 58's diagnostic (README.md here): D (judge over 3 MIs) beside K55 on bbr3's two
# scenarios, 8 runs, one invocation. Not a shipping rule.
#   WT=/work/wt/r58cd R=/work/runs/r58 bash docs/results/issue16-round58/diag58.sh
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}; n=diag-d
D=ppo:policy/weights/candidates/round58d.pt
cd "$WT" && export PYTHONPATH=$WT && mkdir -p "$R"
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__"
echo "$n start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --scenario-file configs/sets/bbr30.txt \
  --reference docs/results/gen-v1-validation --reference docs/results/situations-established \
  --policy "$D" --policy ppo --repeat 8 --out "$R/$n" --json "$R/$n.json" > "$R/$n.log" 2>&1
echo "$n rc $? $(date -u +%T)"
python3 -m train.verdict --min-ustar 10 --noninferior 0.05 --as-base "$R/$n" "$R/$n.json" "$D" ppo
echo "verdict rc $?"
