#!/usr/bin/env bash
# Round 63: candidate Q (the shipped M with policy.rebound lo=0.02,settle=1) on validation,
# under the rules README.md here declares before any run: onoff63q-class (the 4 long on/off BBR
# paths, 5 runs, a paired difference > 0, --clear-loss 0.05 and a scenario floor of twice the
# class set's A/A RMS from aa63, scaled from its 4 runs to 5, and at least 0.05), then mid4q (3
# runs, chain-lib's guard). Beside `ppo` (M). Every verdict --min-ustar 10 --as-base (rule 19),
# each block one invocation under the testbed lock. A fail stops it.
#   WT=/work/wt/r63q R=/work/runs/r63q AA=/work/runs/r63aa/aa-onoff63-class.json \
#     bash docs/results/issue16-round63/explore63q.sh
set -uo pipefail
H=${H:-ppo:policy/weights/candidates/round63q.pt}
AA=${AA:?the A/A JSON of aa63.sh}
# shellcheck source=../../../scripts/chain-lib.sh
source "${WT:?frozen worktree}/scripts/chain-lib.sh" && enter
refs=(--reference docs/results/gen-v1-validation --reference docs/results/gen-v2-validation
  --reference docs/results/gen-v3-validation --reference docs/results/gen-v4-validation
  --reference docs/results/situations-long-bbr)
floor=$(python3 -c "
from train.verdict import aa_noise, load
rms, runs, n = aa_noise(load('$AA'), 'ppo:policy/weights/default.pt', 'ppo', min_ustar=10)
print(f'{max(0.05, 2 * rms * (runs / 5) ** 0.5):.3f}')") || stop "onoff63q-class (no A/A floor)"
log "== onoff63q-class: scenario floor $floor (aa63)"
block onoff63q-class 5 "--scenario-floor $floor --clear-loss 0.05" \
  --scenario-file configs/sets/onoff63-class.txt "${refs[@]}" || stop "onoff63q-class (verdict or run)"
paired_positive onoff63q-class
guard mid4q 3 --scenario-file configs/sets/mid-rtt-val-cubic.txt "${refs[@]}" || stop "mid4q (verdict or run)"
log "$H PASSED onoff63q-class AND mid4q"
