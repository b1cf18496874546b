#!/usr/bin/env bash
# Round 62, after fig1s (declared in README.md before its runs): an exploration of O (the
# shipped M with shed once=1), development only: it chooses nothing this round and O does not
# ship from it. fig1 at the paper's 200 s (3 runs), then fig3 (5 runs, the same check as
# rounds 50-61). Under the testbed lock, from a frozen worktree.
#   WT=/work/wt/r62c R=/work/runs/r62 bash docs/results/issue16-round62/explore62o.sh
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}
O=ppo:policy/weights/candidates/round62o.pt
cd "$WT" && export PYTHONPATH=$WT || exit 2
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__" || exit 2
echo "fig1o start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli experiment fig1 --policies "$O" --repetitions 3 \
  --out "$R/fig1o" > "$R/fig1o.log" 2>&1
echo "fig1o rc $? $(date -u +%T)"
echo "fig3o start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli experiment fig3 --policies "$O" --repetitions 5 \
  --no-sweep --out "$R/fig3o" > "$R/fig3o.log" 2>&1
echo "fig3o rc $? $(date -u +%T)"
python3 docs/results/issue16-round50/fig3check50.py "$R/fig3o" "$O" 5
