#!/usr/bin/env bash
# Round 60: J's chain resumed after fig1 (README.md here, "fig1: J is D there"): mid4j (3 runs,
# --noninferior 0.05 --min-tolerance 0.07) and named4j (4 runs, --noninferior 0.05), as
# chain60.sh declares them; gen-v18's test waits for the next session.
#   WT=/work/wt/r60k R=/work/runs/r60 bash docs/results/issue16-round60/cont60j.sh
set -uo pipefail
H=ppo:policy/weights/candidates/round60j.pt
cd "${WT:?frozen worktree}" || exit 2
export R=${R:?run directory}
log() { echo "$* $(date -u +%T)" | tee -a "$R/verdicts.txt"; }
VERDICT="--noninferior 0.05 --min-tolerance 0.07" scripts/beside.sh mid4j 3 "$H" \
  --scenario-file configs/sets/mid-rtt-val-cubic.txt --reference docs/results/gen-v1-validation \
  --reference docs/results/gen-v2-validation --reference docs/results/gen-v3-validation \
  2>&1 | tee -a "$R/verdicts.txt"
[ "${PIPESTATUS[0]}" = 0 ] || { log "CHAIN STOPPED at mid4j"; exit 1; }
VERDICT="--noninferior 0.05" scripts/beside.sh named4j 4 "$H" \
  --scenarios bg-1g-30ms,paper-fig1,wan-1g-50ms,lossy-1g-50ms \
  --reference docs/results/named-hold-s2 2>&1 | tee -a "$R/verdicts.txt"
[ "${PIPESTATUS[0]}" = 0 ] || { log "CHAIN STOPPED at named4j"; exit 1; }
log "$H PASSED VALIDATION (fig1 carried: J is D there)"
