#!/usr/bin/env bash
# Round 63: the rules README.md here declares before any run. O (the shipped M with the shed's
# `once=1`, round 62's exploration) beside M (`ppo`): named4 (4 runs), mid4 (3), bbr3 (10), then
# gen-v19's test set once (3 runs, after its sweep has stored all 8 yardsticks). fig1 and fig3
# are round 62's fig1o (3 runs at 200 s) and fig3o (5 runs), declared and run before this chain
# and not re-run. Every verdict --min-ustar 10 --as-base (rule 19), each block one invocation
# under the testbed lock from a frozen worktree. A fail stops it.
#   WT=/work/wt/r63 R=/work/runs/r63 MAIN=/work/main bash docs/results/issue16-round63/chain63.sh
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}; MAIN=${MAIN:?the checkout gen-v19 is swept into}
H=${H:-ppo:policy/weights/candidates/round62o.pt}
T=${T:-o}
export WT R
mkdir -p "$R"
cd "$WT" || exit 2
export PYTHONPATH=$WT
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__" || exit 2
# shellcheck source=../../../scripts/chain-lib.sh
source scripts/chain-lib.sh
S=$MAIN/docs/results/gen-v19-test

# 1. named4 (4 runs): non-inferiority, as rounds 60-61
block named4$T 4 "--noninferior 0.05" --scenarios bg-1g-30ms,paper-fig1,wan-1g-50ms,lossy-1g-50ms \
  --reference docs/results/named-hold-s2 || stop named4$T

# 2. mid4 (3 runs): non-inferiority with round 60's tolerance
block mid4$T 3 "--noninferior 0.05 --min-tolerance 0.07" \
  --scenario-file configs/sets/mid-rtt-val-cubic.txt --reference docs/results/gen-v1-validation \
  --reference docs/results/gen-v2-validation --reference docs/results/gen-v3-validation \
  || stop mid4$T

# 3. bbr3 (10 runs): a guard here, so rule 18's floor and --clear-loss, without "paired > 0"
block bbr3$T 10 "--scenario-floor 0.05 --clear-loss 0.05" --scenario-file configs/sets/bbr30.txt \
  --reference docs/results/gen-v1-validation --reference docs/results/situations-established \
  || stop "bbr3$T (verdict or run)"
log "$H PASSED VALIDATION (fig1 and fig3: round 62's fig1o and fig3o)"

# 4. test, once: gen-v19's test set, 3 runs, when its sweep has stored all 8 yardsticks
while [ "$(ls "$S"/gen-v19-t0?.json 2>/dev/null | wc -l)" -lt 8 ]; do sleep 30; done
if block test63$T 3 "--noninferior 0.05 --clear-loss 0.05" --suite gen-v19 --set test \
  --reference "$S"; then
  log "$H PASSES THE TEST SET"
else
  log "$H FAILS THE TEST SET"; exit 1
fi
