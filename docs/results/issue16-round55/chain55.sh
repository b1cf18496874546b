#!/usr/bin/env bash
# Round 55: K55's rules as README.md here declares them before any run: fig3 (5 runs), fig1,
# bbr3, mid4, named4 (round 51's validation rules), then gen-v14's test set once, judged over
# all its scorable scenarios (non-inferiority 0.05, minimum within 0.05, no clear loss of 0.05).
# A fail stops the chain.
#   WT=/work/wt/r55 R=/work/runs/r55 K=ppo:policy/weights/candidates/round55.pt T=k55- \
#     bash docs/results/issue16-round55/chain55.sh
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}; K=${K:?candidate}; T=${T:?tag}
D51=$WT/docs/results/issue16-round51; D50=$WT/docs/results/issue16-round50
E=$WT/docs/results/issue16-round49/eval49.sh
export WT R PYTHONPATH=$WT
mkdir -p "$R"
cd "$WT" || exit 2
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__"
v() { python3 -m train.verdict --min-ustar 10 "$@" | tee -a "$R/verdicts.txt"; return "${PIPESTATUS[0]}"; }
stop() { echo "CHAIN STOPPED at $1 $(date -u +%T)" | tee -a "$R/verdicts.txt"; exit 1; }
echo "== fig3 start $(date -u +%T)" | tee -a "$R/verdicts.txt"
flock /tmp/xfer-netns.lock python3 -m xfer.cli experiment fig3 --policies "$K" --repetitions 5 \
  --no-sweep --out "$R/fig3-${T%-}" > "$R/fig3-${T%-}.log" 2>&1
python3 "$D50/fig3check50.py" "$R/fig3-${T%-}" "$K" 5 | tee -a "$R/verdicts.txt"
[ "${PIPESTATUS[0]}" = 0 ] || stop fig3
echo "== fig1 start $(date -u +%T)" | tee -a "$R/verdicts.txt"
flock /tmp/xfer-netns.lock python3 -m xfer.cli experiment fig1 --policies "$K" --repetitions 1 \
  --duration 60 --out "$R/fig1-${T%-}" > "$R/fig1-${T%-}.log" 2>&1
python3 -c "import json,sys; t=json.load(open('$R/fig1-${T%-}/summary.json'))['policies']['$K']['time_to_optimum_s']; print(f'fig1 time to optimum {t:.4f} s', 'PASS' if t is not None and t <= 6.05 else 'FAIL'); sys.exit(0 if t is not None and t <= 6.05 else 1)" | tee -a "$R/verdicts.txt"
[ "${PIPESTATUS[0]}" = 0 ] || stop fig1
CAND=$K TAG=$T bash "$E" bbr3 || stop "bbr3 (run)"
dir=$(ls "$R/${T}bbr3/hand-bbr-shared-1g/logs" | grep -v '^ppo$')
aa=$(python3 "$D51/aa51.py" "$R/${T}bbr3" "$dir"); n=$(printf '%s\n' "$aa" | grep -c .)
echo "== bbr3 A/A by replay: ${aa//$'\n'/ } ($n of 2) $(date -u +%T)" | tee -a "$R/verdicts.txt"
if [ "$n" != 2 ]; then
  # shellcheck disable=SC2086
  v --noninferior 0.05 "$R/${T}bbr3.json" "$K" ppo ${aa:+--exclude $aa} || stop bbr3
fi
CAND=$K TAG=$T bash "$E" mid4 || stop "mid4 (run)"
echo "== mid4 $(date -u +%T)" >> "$R/verdicts.txt"
v --noninferior 0.05 --min-tolerance 0.07 "$R/${T}mid4.json" "$K" ppo || stop mid4
CAND=$K TAG=$T bash "$E" named4 || stop "named4 (run)"
echo "== named4 $(date -u +%T)" >> "$R/verdicts.txt"
v --noninferior 0.05 "$R/${T}named4.json" "$K" ppo || stop named4
echo "CANDIDATE PASSED VALIDATION $(date -u +%T)" | tee -a "$R/verdicts.txt"
n=${T}test
echo "$n start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --suite gen-v14 --set test \
  --reference docs/results/gen-v14-test --policy "$K" --policy ppo --repeat 3 \
  --out "$R/$n" --json "$R/$n.json" > "$R/$n.log" 2>&1
echo "$n rc $? $(date -u +%T)"
echo "== test: all scorable scenarios $(date -u +%T)" >> "$R/verdicts.txt"
if v --noninferior 0.05 --clear-loss 0.05 "$R/$n.json" "$K" ppo; then
  echo "K55 PASSES THE TEST SET $(date -u +%T)" | tee -a "$R/verdicts.txt"
else
  echo "K55 FAILS THE TEST SET $(date -u +%T)" | tee -a "$R/verdicts.txt"; exit 1
fi
