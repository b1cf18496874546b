#!/usr/bin/env bash
# Round 59, rule 3 (README.md here): the candidate on gen-v18's test set beside the shipped
# policy, 3 runs, one invocation, judged once with --noninferior 0.05 --clear-loss 0.05.
#   WT=/work/wt/r59 R=/work/runs/r59 [C=ppo:policy/weights/candidates/round59e.pt] \
#     bash docs/results/issue16-round59/test59.sh
set -uo pipefail
C=${C:-ppo:policy/weights/candidates/round59e.pt}
cd "${WT:?frozen worktree}" || exit 2
VERDICT="--noninferior 0.05 --clear-loss 0.05" scripts/beside.sh test59 3 "$C" \
  --suite gen-v18 --set test --reference docs/results/gen-v18-test
