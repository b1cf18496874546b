#!/usr/bin/env bash
# Round 51's chain (README.md here): round 50b's rules with rule 3 amended (scenarios where every
# candidate run replays as plain ppo, aa51.py, are excluded; all excluded: "no decision changed").
# FROM names the first stage (fig3 fig1 bbr3 mid4 named4 test); WAIT_PID waits for a block that is
# already running (a fig3 started by chain50b.sh) before anything. TEST=0 stops before the test set.
#   WT=/work/wt/r51 R=/work/runs/r51 K=SPEC T=k51- FROM=mid4 bash .../chain51.sh
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}; K=${K:?candidate}; T=${T:?tag}
D=$WT/docs/results/issue16-round51; D50=$WT/docs/results/issue16-round50
E=$WT/docs/results/issue16-round49/eval49.sh; FROM=${FROM:-fig3}; TEST=${TEST:-1}
export WT R PYTHONPATH=$WT
mkdir -p "$R"
v() { (cd "$WT" && python3 -m train.verdict --min-ustar 10 "$@") | tee -a "$R/verdicts.txt"; return "${PIPESTATUS[0]}"; }
if [ -n "${WAIT_PID:-}" ]; then while kill -0 "$WAIT_PID" 2> /dev/null; do sleep 5; done; fi
on=0
at() { [ "$1" = "$FROM" ] && on=1; [ $on = 1 ]; }
fig3() {
  echo "fig3 start $(date -u +%T)"
  [ -f "$R/fig3-${T%-}/summary.json" ] && [ -n "${WAIT_PID:-}" ] || flock /tmp/xfer-netns.lock python3 -m xfer.cli experiment fig3 --policies "$K" --repetitions 5 --no-sweep --out "$R/fig3-${T%-}" > "$R/fig3-${T%-}.log" 2>&1
  python3 "$D50/fig3check50.py" "$R/fig3-${T%-}" "$K" 5 | tee -a "$R/verdicts.txt"
  return "${PIPESTATUS[0]}"
}
fig1() {
  echo "fig1 start $(date -u +%T)"
  flock /tmp/xfer-netns.lock python3 -m xfer.cli experiment fig1 --policies "$K" --repetitions 1 --duration 60 --out "$R/fig1-${T%-}" > "$R/fig1-${T%-}.log" 2>&1
  python3 -c "import json,sys; t=json.load(open('$R/fig1-${T%-}/summary.json'))['policies']['$K']['time_to_optimum_s']; print(f'fig1 time to optimum {t:.4f} s', 'PASS' if t is not None and t <= 6.05 else 'FAIL'); sys.exit(0 if t is not None and t <= 6.05 else 1)" | tee -a "$R/verdicts.txt"
  return "${PIPESTATUS[0]}"
}
bbr3() {
  CAND=$K TAG=$T bash "$E" bbr3 || return 1
  local dir aa n
  dir=$(ls "$R/${T}bbr3/hand-bbr-shared-1g/logs" | grep -v '^ppo$')
  aa=$(cd "$WT" && python3 "$D/aa51.py" "$R/${T}bbr3" "$dir")
  n=$(printf '%s\n' "$aa" | grep -c .)
  echo "bbr3 A/A by replay: ${aa//$'\n'/ } ($n of 2)" | tee -a "$R/verdicts.txt"
  if [ "$n" = 2 ]; then echo "bbr3: no decision changed PASS" | tee -a "$R/verdicts.txt"; return 0; fi
  # shellcheck disable=SC2086
  v --noninferior 0.05 "$R/${T}bbr3.json" "$K" ppo ${aa:+--exclude $aa}
}
mid4() { CAND=$K TAG=$T bash "$E" mid4 && v --noninferior 0.05 --min-tolerance 0.07 "$R/${T}mid4.json" "$K" ppo; }
named4() { CAND=$K TAG=$T bash "$E" named4 && v --noninferior 0.05 "$R/${T}named4.json" "$K" ppo; }
run() {
  cd "$WT" || return 1
  for s in fig3 fig1 bbr3 mid4 named4; do
    if at "$s"; then "$s" || return 1; fi
  done
  echo "CANDIDATE PASSED VALIDATION $(date -u +%T)"
}
if run; then
  if [ "$TEST" = 1 ]; then
    CAND=$K TAG=$T bash "$E" test && v --test "$R/${T}test.json" "$K" ppo
  else
    echo "TEST NOT RUN (TEST=0): the choice of which candidate goes is README.md's"
  fi
else
  echo "CHAIN STOPPED: a validation rule failed $(date -u +%T)"
fi
echo "CHAIN DONE $(date -u +%T)"
