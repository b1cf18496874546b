#!/usr/bin/env bash
# Round 60: the rules README.md here declares before any run. H (D with the band's loss window
# at 3 MIs) beside D (`ppo`): bbr3 (10 runs), fig3 (5), fig1 (1), mid4 (3), named4 (4), then
# gen-v18's test set once (3 runs). Every verdict --min-ustar 10 --as-base (rule 19), each
# block one invocation under the testbed lock from a frozen worktree. A fail stops the chain.
#   WT=/work/wt/r60 R=/work/runs/r60 bash docs/results/issue16-round60/chain60.sh
#   WT=/work/wt/r60i R=/work/runs/r60 T=i H=ppo:policy/weights/candidates/round60i.pt \
#     bash docs/results/issue16-round60/chain60.sh
#   WT=/work/wt/r60j R=/work/runs/r60 T=j H=ppo:policy/weights/candidates/round60j.pt NO_TEST=1 \
#     BBR3_RULE="--scenario-floor 0.05 --clear-loss 0.05" bash docs/results/issue16-round60/chain60.sh
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}
H=${H:-ppo:policy/weights/candidates/round60h.pt}
T=${T:-h}  # the blocks' names end in it (bbr3h ...); I's chain: T=i H=ppo:.../round60i.pt
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

# 1. bbr3 (validation, may choose): pass with BBR3_RULE (H's and I's: --noninferior 0.05; J's:
# --scenario-floor 0.05 --clear-loss 0.05, rule 18) and a paired difference > 0
block bbr3$T 10 "${BBR3_RULE:---noninferior 0.05}" --scenario-file configs/sets/bbr30.txt \
  --reference docs/results/gen-v1-validation --reference docs/results/situations-established \
  || stop "bbr3$T (verdict or run)"
d=$(sed -n 's/.*paired \([-+][0-9.]*\) +-.*/\1/p' "$R/verdicts.txt" | tail -1)
python3 -c "import sys; sys.exit(0 if float('$d') > 0 else 1)" || stop "bbr3$T (paired $d <= 0)"
log "== bbr3$T passed (paired $d)"

# 2. fig3: every one of 5 runs JFI >= 0.98 with the link >= 92 %
log "== fig3 start"
flock /tmp/xfer-netns.lock python3 -m xfer.cli experiment fig3 --policies "$H" --repetitions 5 \
  --no-sweep --out "$R/fig3$T" > "$R/fig3$T.log" 2>&1
python3 "$D50/fig3check50.py" "$R/fig3$T" "$H" 5 | tee -a "$R/verdicts.txt"
[ "${PIPESTATUS[0]}" = 0 ] || stop fig3

# 3. fig1: time to optimum <= 6.05 s (one run, as rounds 50-55)
log "== fig1 start"
flock /tmp/xfer-netns.lock python3 -m xfer.cli experiment fig1 --policies "$H" --repetitions 1 \
  --duration 60 --out "$R/fig1$T" > "$R/fig1$T.log" 2>&1
python3 -c "import json,sys; t=json.load(open('$R/fig1$T/summary.json'))['policies']['$H']['time_to_optimum_s']; print(f'fig1 time to optimum {t:.4f} s', 'PASS' if t is not None and t <= 6.05 else 'FAIL'); sys.exit(0 if t is not None and t <= 6.05 else 1)" | tee -a "$R/verdicts.txt"
[ "${PIPESTATUS[0]}" = 0 ] || stop fig1

# 4. mid4 (3 runs) and 5. named4 (4 runs)
block mid4$T 3 "--noninferior 0.05 --min-tolerance 0.07" \
  --scenario-file configs/sets/mid-rtt-val-cubic.txt --reference docs/results/gen-v1-validation \
  --reference docs/results/gen-v2-validation --reference docs/results/gen-v3-validation \
  || stop mid4$T
block named4$T 4 "--noninferior 0.05" --scenarios bg-1g-30ms,paper-fig1,wan-1g-50ms,lossy-1g-50ms \
  --reference docs/results/named-hold-s2 || stop named4$T
log "$H PASSED VALIDATION"
[ -z "${NO_TEST:-}" ] || { log "== test left for a later session (NO_TEST)"; exit 0; }

# 6. test, once: gen-v18's test set, 3 runs
if block test60$T 3 "--noninferior 0.05 --clear-loss 0.05" --suite gen-v18 --set test \
  --reference docs/results/gen-v18-test; then
  log "$H PASSES THE TEST SET"
else
  log "$H FAILS THE TEST SET"; exit 1
fi
