#!/usr/bin/env bash
# Round 48's chain, exactly as README.md's rules (a fail stops the candidate's chain; gen-v10's
# sweep runs whatever happens, it reads no policy of ours):
#   WT=/work/wt/r48 R=/work/runs/r48 [K=SPEC T=TAG-] bash docs/results/issue16-round48/chain48.sh
# (round 48b: K=ppo:policy/weights/candidates/round48b.pt T=k48b-)
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}
D=$WT/docs/results/issue16-round48; K=${K:-ppo:policy/weights/candidates/round48.pt}; T=${T:-k48-}
export WT R PYTHONPATH=$WT
v() { (cd "$WT" && python3 -m train.verdict --min-ustar 10 "$@") | tee -a "$R/verdicts.txt"; return "${PIPESTATUS[0]}"; }
run() {
  CAND=$K TAG=$T bash "$D/eval48.sh" bbr3 && v --margin 0.10 "$R/${T}bbr3.json" "$K" ppo || return 1
  CAND=$K TAG=$T bash "$D/eval48.sh" mid4 && v --noninferior 0.05 --min-tolerance 0.07 "$R/${T}mid4.json" "$K" ppo || return 1
  CAND=$K TAG=$T bash "$D/eval48.sh" named && v --noninferior 0.05 "$R/${T}named.json" "$K" ppo || return 1
  cd "$WT" || return 1
  echo "fig1 start $(date -u +%T)"
  flock /tmp/xfer-netns.lock python3 -m xfer.cli experiment fig1 --policies "$K" --repetitions 1 --duration 60 --out "$R/fig1-${T%-}" > "$R/fig1-${T%-}.log" 2>&1
  python3 -c "import json,sys; t=json.load(open('$R/fig1-${T%-}/summary.json'))['policies']['$K']['time_to_optimum_s']; print(f'fig1 time to optimum {t:.4f} s', 'PASS' if t is not None and t <= 6.05 else 'FAIL'); sys.exit(0 if t is not None and t <= 6.05 else 1)" | tee -a "$R/verdicts.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || return 1
  echo "fig3 start $(date -u +%T)"
  flock /tmp/xfer-netns.lock python3 -m xfer.cli experiment fig3 --policies "$K" --repetitions 3 --no-sweep --out "$R/fig3-${T%-}" > "$R/fig3-${T%-}.log" 2>&1
  python3 "$WT/docs/results/issue16-round14/fig3check.py" "$R/fig3-${T%-}" "$K" | tee -a "$R/verdicts.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || return 1
  echo "CANDIDATE PASSED VALIDATION $(date -u +%T)"
}
run; ok=$?
bash "$D/sweep48.sh"
if [ $ok = 0 ]; then
  mkdir -p "$WT/docs/results/gen-v10-test" && cp "$R"/gen-v10-test/*.json "$WT/docs/results/gen-v10-test/"
  CAND=$K TAG=$T bash "$D/eval48.sh" test && v --test "$R/${T}test.json" "$K" ppo
fi
echo "CHAIN DONE $(date -u +%T)"
