#!/usr/bin/env bash
# Round 50c after fig3 and fig1: chain50b.sh's rules 3-5 as written (bbr3, mid4, named4), without
# rule 6 (gen-v11's test set), which the session had no time left for (README.md). The chain
# was stopped while bbr3 ran; this waits for that block, then reads it and runs the rest.
#   WT=/work/wt/r50c R=/work/runs/r50c BBR3_PID=N bash .../rest50c.sh
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}; E=$WT/docs/results/issue16-round49/eval49.sh
K=shed:beta=0.1:ppo:policy/weights/candidates/round50c.pt; T=k50c-
export WT R PYTHONPATH=$WT
v() { (cd "$WT" && python3 -m train.verdict --min-ustar 10 "$@") | tee -a "$R/verdicts.txt"; return "${PIPESTATUS[0]}"; }
while kill -0 "${BBR3_PID:?}" 2> /dev/null; do sleep 5; done
run() {
  v --noninferior 0.05 "$R/${T}bbr3.json" "$K" ppo || return 1
  CAND=$K TAG=$T bash "$E" mid4 && v --noninferior 0.05 --min-tolerance 0.07 "$R/${T}mid4.json" "$K" ppo || return 1
  CAND=$K TAG=$T bash "$E" named4 && v --noninferior 0.05 "$R/${T}named4.json" "$K" ppo || return 1
  echo "CANDIDATE PASSED VALIDATION (test set not run this session) $(date -u +%T)"
}
run || echo "STOPPED: a validation rule failed $(date -u +%T)"
echo "REST DONE $(date -u +%T)"
