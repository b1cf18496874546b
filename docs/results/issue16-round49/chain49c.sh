#!/usr/bin/env bash
# Round 49c's first gates (README.md's 49c rules): fig3 (3 runs), then bbr3 (3 runs, K49b beside
# as a diagnostic); a fail stops it. The rest of round 49's chain is for a later session.
#   WT=/work/wt/r49c R=/work/runs/r49 bash docs/results/issue16-round49/chain49c.sh
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}
D=$WT/docs/results/issue16-round49; K=ppo:policy/weights/candidates/round49c.pt; T=k49c-
B=ppo:policy/weights/candidates/round49b.pt
export WT R PYTHONPATH=$WT
v() { (cd "$WT" && python3 -m train.verdict --min-ustar 10 "$@") | tee -a "$R/verdicts.txt"; return "${PIPESTATUS[0]}"; }
run() {
  cd "$WT" || return 1
  echo "fig3 start $(date -u +%T)"
  flock /tmp/xfer-netns.lock python3 -m xfer.cli experiment fig3 --policies "$K" --repetitions 3 --no-sweep --out "$R/fig3-${T%-}" > "$R/fig3-${T%-}.log" 2>&1
  python3 "$WT/docs/results/issue16-round14/fig3check.py" "$R/fig3-${T%-}" "$K" | tee -a "$R/verdicts.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || return 1
  CAND="$K $B" TAG=$T bash "$D/eval49.sh" bbr3 || return 1
  (cd "$WT" && python3 -m train.verdict --min-ustar 10 --margin 0 "$R/${T}bbr3.json" "$K" "$B") | tee -a "$R/verdicts.txt"  # diagnostic
  v --margin 0.10 "$R/${T}bbr3.json" "$K" ppo || return 1
  echo "FIRST GATES PASSED $(date -u +%T)"
}
run || echo "CHAIN STOPPED $(date -u +%T)"
echo "CHAIN DONE $(date -u +%T)"
