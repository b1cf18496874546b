#!/usr/bin/env bash
# Round 57: issue #16's situations for two from-scratch rebuilds of K55 (RA, RB: README.md
# section 4) beside the shipped K55 (`ppo`), 3 runs each, one invocation. Validation only.
#   WT=/work/wt/r57 R=/work/runs/r57 bash docs/results/issue16-round57/sit57.sh
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}; n=sit
RA=ppo:/work/runs/scratch56/bundle.pt RB=ppo:/work/runs/r57/bundle-cbwr.pt
cd "$WT" && export PYTHONPATH=$WT && mkdir -p "$R"
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__"
echo "$n start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --scenario-file configs/sets/situations.txt \
  --reference docs/results/gen-v1-validation --policy "$RA" --policy "$RB" --policy ppo \
  --repeat 3 --out "$R/$n" --json "$R/$n.json" > "$R/$n.log" 2>&1
echo "$n rc $? $(date -u +%T)"
for b in "$RA" "$RB"; do
  python3 -m train.verdict --min-ustar 10 --noninferior 0.05 --clear-loss 0.05 \
    --as-base "$R/$n" "$R/$n.json" "$b" ppo
  echo "verdict rc $?"
done
