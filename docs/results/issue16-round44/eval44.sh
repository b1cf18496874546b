#!/usr/bin/env bash
# Round 44 rule 5: CAND beside ppo, one block per call, from a frozen worktree (README.md here).
#   WT=/work/wt/r44b R=/work/runs/r44 CAND=ledger:seek=1,max_rtt_ms=20:ppo TAG=l45- \
#     bash docs/results/issue16-round44/eval44.sh sitlan|g7|g2short|test
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}; CAND=${CAND:?candidate spec}
cd "$WT" && export PYTHONPATH=$WT && mkdir -p "$R"
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__"
b=$1; n=${TAG:-}$b
case $b in
  sitlan) set -- 4 --scenario-file configs/sets/situations-lan.txt --reference docs/results/gen-v1-validation ;;
  g7) set -- 3 --suite gen-v7 --set validation --reference docs/results/gen-v7-validation ;;
  g2short) set -- 2 --scenario-file configs/sets/gen-v2-short.txt --reference docs/results/gen-v2-validation ;;
  test) set -- 2 --scenario-file configs/sets/gen-v2-test-short.txt --reference docs/results/gen-v2-test ;;  # rule 6
  *) echo "unknown block $b" >&2; exit 2 ;;
esac
k=$1; shift
echo "$n start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate "$@" --policy "$CAND" --policy ppo \
  --repeat "$k" --out "$R/$n" --json "$R/$n.json" > "$R/$n.log" 2>&1
echo "$n rc $? $(date -u +%T)"
