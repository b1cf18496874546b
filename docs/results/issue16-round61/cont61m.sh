#!/usr/bin/env bash
# Round 61: M's chain resumed after fig3 (README.md here, "fig3m: M is D there"): gen-v18's test
# set once, 3 runs, --noninferior 0.05 --clear-loss 0.05, as chain61.sh declares it.
#   WT=/work/wt/r61b R=/work/runs/r61 bash docs/results/issue16-round61/cont61m.sh
set -uo pipefail
H=ppo:policy/weights/candidates/round61m.pt
cd "${WT:?frozen worktree}" || exit 2
export R=${R:?run directory}
log() { echo "$* $(date -u +%T)" | tee -a "$R/verdicts.txt"; }
if VERDICT="--noninferior 0.05 --clear-loss 0.05" scripts/beside.sh test61m 3 "$H" \
  --suite gen-v18 --set test --reference docs/results/gen-v18-test 2>&1 | tee -a "$R/verdicts.txt"
  [ "${PIPESTATUS[0]}" = 0 ]; then
  log "$H PASSES THE TEST SET"
else
  log "$H FAILS THE TEST SET"; exit 1
fi
