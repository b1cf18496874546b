#!/usr/bin/env bash
# Round 51's order for the rest of the session (README.md, "Rule 3 amended"): K51b's chain from
# its running fig3 to rule 5; if it passes and its bbr3 paired difference is above K51's "no
# decision changed" (0), K51b takes the test set; otherwise K51 goes on from mid4 to the test set.
#   WT=/work/wt/r51x WAIT_PID=N bash .../order51.sh
set -uo pipefail
WT=${WT:?frozen worktree}; C=$WT/docs/results/issue16-round51/chain51.sh
KB=ppo:policy/weights/candidates/round51b.pt; KA=ppo:policy/weights/candidates/round51.pt
out=$(WT=$WT R=/work/runs/r51b K=$KB T=k51b- FROM=fig3 WAIT_PID=${WAIT_PID:-} TEST=0 bash "$C" 2>&1 | tee /dev/stderr)
if grep -q "CANDIDATE PASSED VALIDATION" <<< "$out"; then
  d=$(awk '/bbr3 A\/A by replay/ {f = 1} f && /no decision changed/ {print 0; exit}
    f && /paired/ {for (i = 1; i <= NF; i++) if ($i == "paired") {print $(i + 1); exit}}' \
    /work/runs/r51b/verdicts.txt)
  echo "K51b bbr3 paired difference: ${d:-none (no decision changed)}"
  if awk -v d="${d:-0}" 'BEGIN { exit !(d > 0) }'; then
    echo "K51b goes to the test set $(date -u +%T)"
    WT=$WT R=/work/runs/r51b K=$KB T=k51b- FROM=test bash "$C"
    exit
  fi
fi
echo "K51 goes on from mid4 $(date -u +%T)"
WT=$WT R=/work/runs/r51 K=$KA T=k51- FROM=mid4 bash "$C"
