#!/usr/bin/env bash
# Round 59's exploration (README.md here; development only, it ships nothing and chooses no
# candidate for a test set): F (E with the ledger's probe_down) beside the shipped policy (D)
# on the guard's failing path and the three development paths where the band acted, 2 runs,
# one invocation.
#   WT=/work/wt/r59x R=/work/runs/r59 bash docs/results/issue16-round59/explore59.sh
set -uo pipefail
cd "${WT:?frozen worktree}" || exit 2
VERDICT="--noninferior 0.05 --clear-loss 0.05" scripts/beside.sh explore59 2 \
  ppo:policy/weights/candidates/round59f.pt \
  --scenario configs/suites/gen-v2/validation/gen-v2-v12.toml \
  --scenario configs/situations/hand-lan-cubic-capped.toml \
  --scenario configs/suites/gen-v7/validation/gen-v7-v02.toml \
  --scenario configs/suites/gen-v1/validation/hand-lan-reno.toml \
  --reference docs/results/gen-v2-validation --reference docs/results/situations-lan-shared \
  --reference docs/results/gen-v7-validation --reference docs/results/gen-v1-validation
