#!/usr/bin/env bash
# Round 49's chain, exactly as README.md's rules: a fail stops K49's chain; gen-v11's sweep runs
# whatever happens (it reads no policy of ours), the test only after 1-4 pass.
#   WT=/work/wt/r49 R=/work/runs/r49 [K=SPEC T=TAG-] bash docs/results/issue16-round49/chain49.sh
# (round 49b: K=ppo:policy/weights/candidates/round49b.pt T=k49b-)
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}
D=$WT/docs/results/issue16-round49; K=${K:-ppo:policy/weights/candidates/round49.pt}; T=${T:-k49-}
B=ppo:policy/weights/candidates/round48b.pt  # K48b: a diagnostic beside K49 in bbr3 only
export WT R PYTHONPATH=$WT
v() { (cd "$WT" && python3 -m train.verdict --min-ustar 10 "$@") | tee -a "$R/verdicts.txt"; return "${PIPESTATUS[0]}"; }
run() {
  CAND="$K $B" TAG=$T bash "$D/eval49.sh" bbr3 || return 1
  (cd "$WT" && python3 -m train.verdict --min-ustar 10 --margin 0 "$R/${T}bbr3.json" "$K" "$B") | tee -a "$R/verdicts.txt"  # diagnostic
  v --margin 0.10 "$R/${T}bbr3.json" "$K" ppo || return 1
  CAND=$K TAG=$T bash "$D/eval49.sh" mid4 && v --noninferior 0.05 --min-tolerance 0.07 "$R/${T}mid4.json" "$K" ppo || return 1
  CAND=$K TAG=$T bash "$D/eval49.sh" named4 && v --noninferior 0.05 "$R/${T}named4.json" "$K" ppo || return 1
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
while pgrep -f sweep49.sh > /dev/null; do sleep 20; done  # a sweep started apart finishes first
bash "$D/sweep49.sh"  # sweeps only what is missing
if [ $ok = 0 ]; then
  mkdir -p "$WT/docs/results/gen-v11-test" && cp "$R"/gen-v11-test/*.json "$WT/docs/results/gen-v11-test/"
  CAND=$K TAG=$T bash "$D/eval49.sh" test && v --test "$R/${T}test.json" "$K" ppo
else
  echo "CHAIN STOPPED: K49 failed a validation rule $(date -u +%T)"
fi
echo "CHAIN DONE $(date -u +%T)"
