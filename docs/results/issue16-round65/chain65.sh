#!/usr/bin/env bash
# Round 65: candidate R (the shipped Q + the shed's once=1, round 62's O change) under the rules
# README.md here declares before any run. Beside `ppo` (Q), each block one scripts/beside.sh
# invocation under the testbed lock from a frozen worktree, every verdict --min-ustar 10
# --as-base (rule 19: a run of R that replays as Q's decisions is Q's).
# 1. fig1r: fig1 at its 200 s, 5 runs of R alone (--no-sweep; yardstick round 62's fig1o sweep):
#    time to optimum <= 6 s in at least 4 of 5
# 2. once65-guard: configs/sets/shed-once65.txt (7 paths), 3 runs, floor aa_floor(aa63, 3),
#    --clear-loss 0.05, --guard, and a paired difference >= -0.05
# 3. fig3r: 5 runs of R alone, each JFI >= 0.98 with the link >= 92 %; a fail whose runs all
#    replay as Q decision for decision is Q's reading (rule 21)
# 4. test65r: gen-v20's test set once, 3 runs, the rule of 2. A pass ships R.
# The first fail stops it.
#   WT=/work/wt/r65 R=/work/runs/r65 bash docs/results/issue16-round65/chain65.sh
set -uo pipefail
H=${H:-ppo:policy/weights/candidates/round65r.pt}
AA=docs/results/issue16-round63/aa-onoff63-class.json
# shellcheck source=../../../scripts/chain-lib.sh
source "${WT:?frozen worktree}/scripts/chain-lib.sh" && enter
f3=$(aa_floor "$AA" 3) || stop "no A/A floor"
log "== F3 = $f3 (aa63 at 3 runs)"
rule="--scenario-floor $f3 --clear-loss 0.05 --guard"

# 1. fig1, the figure R is for
log "fig1r start"
flock /tmp/xfer-netns.lock python3 -m xfer.cli experiment fig1 --policies "$H" --repetitions 5 \
  --no-sweep --out "$R/fig1r" > "$R/fig1r.log" 2>&1 || stop "fig1r (run)"
python3 -m lab.trace "$R/fig1r" > "$R/fig1r-trace.txt" 2>&1
python3 docs/results/issue16-round65/fig1check65.py "$R/fig1r" "$H" 5 4 \
  docs/results/issue16-round62/fig1o-summary.json | tee -a "$R/verdicts.txt"
[ "${PIPESTATUS[0]}" = 0 ] || stop "fig1r"
log "== fig1r passed"

# 2. the paths where once=1 can act
block once65-guard 3 "$rule" --scenario-file configs/sets/shed-once65.txt \
  --reference docs/results/gen-v1-validation --reference docs/results/gen-v2-validation \
  --reference docs/results/gen-v3-validation --reference docs/results/situations-established \
  --reference docs/results/situations-long-bbr || stop "once65-guard (verdict or run)"
paired_at_least once65-guard -0.05

# 3. fig3, 5 runs of R alone
log "fig3r start"
flock /tmp/xfer-netns.lock python3 -m xfer.cli experiment fig3 --policies "$H" --repetitions 5 \
  --no-sweep --out "$R/fig3r" > "$R/fig3r.log" 2>&1 || stop "fig3r (run)"
python3 -m lab.trace "$R/fig3r" > "$R/fig3r-trace.txt" 2>&1
if python3 docs/results/issue16-round50/fig3check50.py "$R/fig3r" "$H" 5 | tee -a "$R/verdicts.txt" \
  && [ "${PIPESTATUS[0]}" = 0 ]; then
  log "== fig3r passed"
else
  shipped_reading fig3r "$R/fig3r" "ppo-policy-weights-candidates-round65r.pt" || stop "fig3r"
fi
log "$H PASSED VALIDATION"

# 4. test, once
if block test65r 3 "$rule" --suite gen-v20 --set test --reference docs/results/gen-v20-test; then
  paired_at_least test65r -0.05
  log "$H PASSES THE TEST SET"
else
  log "$H FAILS THE TEST SET"; exit 1
fi
