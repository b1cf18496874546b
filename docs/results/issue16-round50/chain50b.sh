#!/usr/bin/env bash
# Round 50b's chain, exactly as README.md's rules: fig3 (5 runs), fig1, then round 49's blocks
# (docs/results/issue16-round49/eval49.sh); a fail stops it; the test set only after all pass.
#   WT=/work/wt/r50b R=/work/runs/r50b bash .../chain50b.sh
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}
D=$WT/docs/results/issue16-round50; E=$WT/docs/results/issue16-round49/eval49.sh
K=${K:-shed:beta=0.1:ppo}; T=${T:-k50b-}
export WT R PYTHONPATH=$WT
mkdir -p "$R"
v() { (cd "$WT" && python3 -m train.verdict --min-ustar 10 "$@") | tee -a "$R/verdicts.txt"; return "${PIPESTATUS[0]}"; }
run() {
  cd "$WT" || return 1
  echo "fig3 start $(date -u +%T)"
  flock /tmp/xfer-netns.lock python3 -m xfer.cli experiment fig3 --policies "$K" --repetitions 5 --no-sweep --out "$R/fig3-${T%-}" > "$R/fig3-${T%-}.log" 2>&1
  python3 "$D/fig3check50.py" "$R/fig3-${T%-}" "$K" 5 | tee -a "$R/verdicts.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || return 1
  echo "fig1 start $(date -u +%T)"
  flock /tmp/xfer-netns.lock python3 -m xfer.cli experiment fig1 --policies "$K" --repetitions 1 --duration 60 --out "$R/fig1-${T%-}" > "$R/fig1-${T%-}.log" 2>&1
  python3 -c "import json,sys; t=json.load(open('$R/fig1-${T%-}/summary.json'))['policies']['$K']['time_to_optimum_s']; print(f'fig1 time to optimum {t:.4f} s', 'PASS' if t is not None and t <= 6.05 else 'FAIL'); sys.exit(0 if t is not None and t <= 6.05 else 1)" | tee -a "$R/verdicts.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || return 1
  CAND=$K TAG=$T bash "$E" bbr3 && v --noninferior 0.05 "$R/${T}bbr3.json" "$K" ppo || return 1
  CAND=$K TAG=$T bash "$E" mid4 && v --noninferior 0.05 --min-tolerance 0.07 "$R/${T}mid4.json" "$K" ppo || return 1
  CAND=$K TAG=$T bash "$E" named4 && v --noninferior 0.05 "$R/${T}named4.json" "$K" ppo || return 1
  cd "$WT" || return 1
  echo "CANDIDATE PASSED VALIDATION $(date -u +%T)"
}
if run; then
  CAND=$K TAG=$T bash "$E" test && v --test "$R/${T}test.json" "$K" ppo
else
  echo "CHAIN STOPPED: a validation rule failed $(date -u +%T)"
fi
echo "CHAIN DONE $(date -u +%T)"
