#!/usr/bin/env bash
# Round 59, rule 2 (README.md here): the candidate beside the shipped policy on the validation
# paths of at most 20 ms (gen-v2-short's 11, fast-3g-10ms, lossy-500m-20ms), 2 runs, one
# invocation; passes with --noninferior 0.05 --clear-loss 0.05.
#   WT=/work/wt/r59 R=/work/runs/r59 [C=ppo:policy/weights/candidates/round59e.pt] \
#     bash docs/results/issue16-round59/guard59.sh
set -uo pipefail
C=${C:-ppo:policy/weights/candidates/round59e.pt}
cd "${WT:?frozen worktree}" || exit 2
VERDICT="--noninferior 0.05 --clear-loss 0.05" scripts/beside.sh guard59 2 "$C" \
  --scenario-file configs/sets/short-guard.txt \
  --reference docs/results/gen-v2-validation --reference docs/results/named-hold-s2
