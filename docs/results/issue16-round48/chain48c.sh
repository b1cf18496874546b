#!/usr/bin/env bash
# Round 48c's chain (README.md's 48c rules): fig1, fig3, the named four at 4 fresh runs, then
# gen-v10's test set once; a fail stops it.
#   WT=/work/wt/r48c R=/work/runs/r48 bash docs/results/issue16-round48/chain48c.sh
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}
D=$WT/docs/results/issue16-round48; K=ppo:policy/weights/candidates/round48b.pt; T=k48c-
export WT R PYTHONPATH=$WT
v() { (cd "$WT" && python3 -m train.verdict --min-ustar 10 "$@") | tee -a "$R/verdicts.txt"; return "${PIPESTATUS[0]}"; }
run() {
  cd "$WT" || return 1
  echo "fig1 start $(date -u +%T)"
  flock /tmp/xfer-netns.lock python3 -m xfer.cli experiment fig1 --policies "$K" --repetitions 1 --duration 60 --out "$R/fig1-${T%-}" > "$R/fig1-${T%-}.log" 2>&1
  python3 -c "import json,sys; t=json.load(open('$R/fig1-${T%-}/summary.json'))['policies']['$K']['time_to_optimum_s']; print(f'fig1 time to optimum {t:.4f} s', 'PASS' if t is not None and t <= 6.05 else 'FAIL'); sys.exit(0 if t is not None and t <= 6.05 else 1)" | tee -a "$R/verdicts.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || return 1
  echo "fig3 start $(date -u +%T)"
  flock /tmp/xfer-netns.lock python3 -m xfer.cli experiment fig3 --policies "$K" --repetitions 3 --no-sweep --out "$R/fig3-${T%-}" > "$R/fig3-${T%-}.log" 2>&1
  python3 "$WT/docs/results/issue16-round14/fig3check.py" "$R/fig3-${T%-}" "$K" | tee -a "$R/verdicts.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || return 1
  CAND=$K TAG=$T bash "$D/eval48.sh" named4 && v --noninferior 0.05 "$R/${T}named4.json" "$K" ppo || return 1
  echo "CANDIDATE PASSED VALIDATION $(date -u +%T)"
}
run || { echo "CHAIN STOPPED $(date -u +%T)"; exit 1; }
bash "$D/sweep48.sh"  # every scenario kept by now; it sweeps what is missing
mkdir -p "$WT/docs/results/gen-v10-test" && cp "$R"/gen-v10-test/*.json "$WT/docs/results/gen-v10-test/"
CAND=$K TAG=$T bash "$D/eval48.sh" test && v --test "$R/${T}test.json" "$K" ppo
echo "CHAIN DONE $(date -u +%T)"
