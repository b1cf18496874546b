#!/usr/bin/env bash
# Round 56: K55 on gen-v16's test set once, 5 runs beside the shipped pair in one invocation,
# judged as README.md here declares before any run (rule 19: runs read as they behaved).
#   WT=/work/wt/r56 R=/work/runs/r56 bash docs/results/issue16-round56/chain56.sh
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}
K=ppo:policy/weights/candidates/round55.pt n=k55-test
export PYTHONPATH=$WT
mkdir -p "$R"
cd "$WT" || exit 2
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__"
echo "$n start $(date -u +%T)" | tee -a "$R/verdicts.txt"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --suite gen-v16 --set test \
  --reference docs/results/gen-v16-test --policy "$K" --policy ppo --repeat 5 \
  --out "$R/$n" --json "$R/$n.json" > "$R/$n.log" 2>&1
echo "$n rc $? $(date -u +%T)" | tee -a "$R/verdicts.txt"
if python3 -m train.verdict --min-ustar 10 --noninferior 0.05 --clear-loss 0.05 \
    --as-base "$R/$n" "$R/$n.json" "$K" ppo | tee -a "$R/verdicts.txt"; [ "${PIPESTATUS[0]}" = 0 ]
then echo "K55 PASSES THE TEST SET $(date -u +%T)" | tee -a "$R/verdicts.txt"
else echo "K55 FAILS THE TEST SET $(date -u +%T)" | tee -a "$R/verdicts.txt"; exit 1
fi
