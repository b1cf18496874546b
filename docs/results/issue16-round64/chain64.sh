#!/usr/bin/env bash
# Round 64: candidate Q (round 63's M + policy.rebound lo=0.02,settle=1) under the rules README.md
# here declares before any run. Beside `ppo` (M), each block one scripts/beside.sh invocation
# under the testbed lock from a frozen worktree, every verdict --min-ustar 10 --as-base (rule 19).
# 1. mid4q2 (3 runs, chain-lib's guard: floor 0.05, --clear-loss 0.05, --guard)
# 2. onoff64q-guard (onoff63-guard.txt, 3 runs, floor F3 from aa63, --clear-loss 0.05, --guard,
#    and a paired difference >= -0.05)
# 3. fig3q (5 runs, each JFI >= 0.98 with the link >= 92 %; a fail where the rebound fires in no
#    transfer is M's reading, rule 21)
# 4. test64q: gen-v19's test set once, 3 runs, the rule of 2. A pass ships Q.
# The first fail stops it.
#   WT=/work/wt/r64 R=/work/runs/r64 bash docs/results/issue16-round64/chain64.sh
set -uo pipefail
H=${H:-ppo:policy/weights/candidates/round63q.pt}
AA=docs/results/issue16-round63/aa-onoff63-class.json
# shellcheck source=../../../scripts/chain-lib.sh
source "${WT:?frozen worktree}/scripts/chain-lib.sh" && enter
refs=(--reference docs/results/gen-v1-validation --reference docs/results/gen-v2-validation
  --reference docs/results/gen-v3-validation --reference docs/results/gen-v6-validation)
# the paired difference of the last verdict must be >= $2
paired_at_least() {
  local n=$1 m=$2 d
  d=$(sed -n 's/.*paired \([-+][0-9.]*\) +-.*/\1/p' "$R/verdicts.txt" | tail -1)
  [ -n "$d" ] || stop "$n (no paired difference in the verdict)"
  awk -v d="$d" -v m="$m" 'BEGIN { exit !(d + 0 >= m + 0) }' || stop "$n (paired $d < $m)"
  log "== $n: paired $d >= $m"
}
f3=$(python3 -c "
from train.verdict import aa_noise, load
rms, runs, n = aa_noise(load('$AA'), 'ppo:policy/weights/default.pt', 'ppo', min_ustar=10)
print(f'{max(0.05, 2 * rms * (runs / 3) ** 0.5):.3f}')") || stop "no A/A floor"
log "== F3 = $f3 (aa63 at 3 runs)"

# 1. mid4, again, on fresh runs, as round 63 declared
guard mid4q2 3 --scenario-file configs/sets/mid-rtt-val-cubic.txt "${refs[@]}" \
  || stop "mid4q2 (verdict or run)"

# 2. the on/off guard set
block onoff64q-guard 3 "--scenario-floor $f3 --clear-loss 0.05 --guard" \
  --scenario-file configs/sets/onoff63-guard.txt "${refs[@]}" || stop "onoff64q-guard (verdict or run)"
paired_at_least onoff64q-guard -0.05

# 3. fig3, 5 runs of Q alone
log "fig3q start"
flock /tmp/xfer-netns.lock python3 -m xfer.cli experiment fig3 --policies "$H" --repetitions 5 \
  --no-sweep --out "$R/fig3q" > "$R/fig3q.log" 2>&1 || stop "fig3q (run)"
python3 -m lab.trace "$R/fig3q" > "$R/fig3q-trace.txt" 2>&1
if python3 docs/results/issue16-round50/fig3check50.py "$R/fig3q" "$H" 5 | tee -a "$R/verdicts.txt"; then
  log "== fig3q passed"
else
  python3 docs/results/issue16-round63/fires63.py "$R/fig3q-trace.txt" lo=0.02 settle=1 \
    | tee "$R/fig3q-fires.txt" | tail -1 | tee -a "$R/verdicts.txt"
  grep -q "^0 runs where it fires" "$R/fig3q-fires.txt" || stop "fig3q (the rebound fired)"
  log "== fig3q failed with no firing in any transfer: M's reading (rule 21)"
fi
log "$H PASSED VALIDATION"

# 4. test, once
if block test64q 3 "--scenario-floor $f3 --clear-loss 0.05 --guard" --suite gen-v19 --set test \
  --reference docs/results/gen-v19-test; then
  paired_at_least test64q -0.05
  log "$H PASSES THE TEST SET"
else
  log "$H FAILS THE TEST SET"; exit 1
fi
