#!/usr/bin/env bash
# Round 46: candidates beside ppo, one block per call, from a frozen worktree (README.md here).
#   WT=/work/wt/r46 R=/work/runs/r46 CAND="SPEC [SPEC...]" TAG=l46- \
#     bash docs/results/issue16-round46/eval46.sh clock|dev|devlan|sitlan|g7|g2short|sit|test
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}; CAND=${CAND-}  # empty: ppo alone (a status reading)
cd "$WT" && export PYTHONPATH=$WT && mkdir -p "$R"
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__"
b=$1; n=${TAG:-}$b
case $b in
  clock) set -- 2 --scenario configs/suites/gen-v8/test/gen-v8-t07.toml --reference docs/results/gen-v8-test ;;  # the harness fix
  dev) set -- 2 --scenario-file configs/sets/dev46.txt --reference docs/results/gen-v8-test ;;
  devlan) set -- 2 --scenario configs/suites/gen-v1/validation/hand-lan-reno.toml --reference docs/results/gen-v1-validation ;;
  sitlan) set -- 4 --scenario-file configs/sets/situations-lan.txt --reference docs/results/gen-v1-validation ;;
  g7) set -- 3 --suite gen-v7 --set validation --reference docs/results/gen-v7-validation ;;
  g2short) set -- 2 --scenario-file configs/sets/gen-v2-short.txt --reference docs/results/gen-v2-validation ;;
  sit) set -- 4 --scenario-file configs/sets/situations.txt --reference docs/results/gen-v1-validation ;;
  test) set -- 3 --suite gen-v9 --set test --reference docs/results/gen-v9-test ;;
  *) echo "unknown block $b" >&2; exit 2 ;;
esac
k=$1; shift
pol=(); for c in $CAND; do pol+=(--policy "$c"); done
echo "$n start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate "$@" "${pol[@]}" --policy ppo \
  --repeat "$k" --out "$R/$n" --json "$R/$n.json" > "$R/$n.log" 2>&1
echo "$n rc $? $(date -u +%T)"
