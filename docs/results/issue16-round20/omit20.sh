#!/usr/bin/env bash
# Round 20 O20 (descriptive): the shipped policy with its first MI hidden, beside itself, on
# hand-bbr-shared-1g, 4 runs. From a frozen worktree of main at the commit that added it.
set -uo pipefail
cd /work/wt/o20; export PYTHONPATH=/work/wt/o20
R=/work/runs/r20/o20; mkdir -p $R
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --scenario configs/suites/gen-v1/validation/hand-bbr-shared-1g.toml \
   --policy ppo:omit=1:policy/weights/default.pt --policy ppo --repeat 4 \
   --reference docs/results/gen-v1-validation --out $R --json $R/o20.json > $R/o20.log 2>&1
echo "rc $? $(date -u +%T)"
