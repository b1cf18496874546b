#!/usr/bin/env bash
# Round 61: the rules README.md here declares before any run. M (D + band max_n=1 + judge
# back=1) beside D (`ppo`): bbr3 (10 runs), named4 (4), fig3 (5), then gen-v18's test set once
# (3 runs). mid4 and fig1 are D's by closed-loop replay (M makes D's every decision on mid4j's
# and fig1d's runs, rule 17) and are not run. Every verdict --min-ustar 10 --as-base (rule 19),
# each block one invocation under the testbed lock from a frozen worktree. A fail stops it.
#   WT=/work/wt/r61 R=/work/runs/r61 bash docs/results/issue16-round61/chain61.sh
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}
H=${H:-ppo:policy/weights/candidates/round61m.pt}
T=${T:-m}
D50=$WT/docs/results/issue16-round50
export WT R
mkdir -p "$R"
cd "$WT" || exit 2
export PYTHONPATH=$WT
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__" || exit 2
log() { echo "$* $(date -u +%T)" | tee -a "$R/verdicts.txt"; }
stop() { log "CHAIN STOPPED at $1"; exit 1; }
block() {  # NAME REPEAT VERDICT EVALUATE-ARGS...: scripts/beside.sh, its output kept
  local n=$1 k=$2 vd=$3; shift 3
  VERDICT="$vd" scripts/beside.sh "$n" "$k" "$H" "$@" 2>&1 | tee -a "$R/verdicts.txt"
  return "${PIPESTATUS[0]}"
}

# 1. bbr3 (validation, may choose): rule 18's form for two scenarios and a paired difference > 0
block bbr3$T 10 "--scenario-floor 0.05 --clear-loss 0.05" --scenario-file configs/sets/bbr30.txt \
  --reference docs/results/gen-v1-validation --reference docs/results/situations-established \
  || stop "bbr3$T (verdict or run)"
d=$(sed -n 's/.*paired \([-+][0-9.]*\) +-.*/\1/p' "$R/verdicts.txt" | tail -1)
python3 -c "import sys; sys.exit(0 if float('$d') > 0 else 1)" || stop "bbr3$T (paired $d <= 0)"
log "== bbr3$T passed (paired $d)"

# 2. named4 (4 runs)
block named4$T 4 "--noninferior 0.05" --scenarios bg-1g-30ms,paper-fig1,wan-1g-50ms,lossy-1g-50ms \
  --reference docs/results/named-hold-s2 || stop named4$T

# 3. fig3: every one of 5 runs JFI >= 0.98 with the link >= 92 %
log "== fig3 start"
flock /tmp/xfer-netns.lock python3 -m xfer.cli experiment fig3 --policies "$H" --repetitions 5 \
  --no-sweep --out "$R/fig3$T" > "$R/fig3$T.log" 2>&1
python3 "$D50/fig3check50.py" "$R/fig3$T" "$H" 5 | tee -a "$R/verdicts.txt"
[ "${PIPESTATUS[0]}" = 0 ] || stop fig3
log "$H PASSED VALIDATION"

# 4. test, once: gen-v18's test set, 3 runs
if block test61$T 3 "--noninferior 0.05 --clear-loss 0.05" --suite gen-v18 --set test \
  --reference docs/results/gen-v18-test; then
  log "$H PASSES THE TEST SET"
else
  log "$H FAILS THE TEST SET"; exit 1
fi
