#!/usr/bin/env bash
# Round 47: candidates beside ppo, one block per call, from a frozen worktree (README.md here).
#   WT=/work/wt/r47 R=/work/runs/r47 CAND="SPEC [SPEC...]" TAG=c47- \
#     bash docs/results/issue16-round47/eval47.sh est|dev|bbr|bbr3|mid|mid4|midtest|named|sitlan|g7|g2short|test
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}; CAND=${CAND-}  # empty: ppo alone (a status reading)
cd "$WT" && export PYTHONPATH=$WT && mkdir -p "$R"
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__"
b=$1; n=${TAG:-}$b
case $b in
  est) set -- 2 --scenario configs/situations/hand-bbr-established-1g.toml --reference docs/results/situations-established ;;
  dev) set -- 2 --scenario-file configs/sets/dev47.txt --reference docs/results/gen-v7-validation --reference docs/results/gen-v1-validation ;;
  bbr) set -- 4 --scenario-file configs/sets/bbr30.txt --reference docs/results/gen-v1-validation --reference docs/results/situations-established ;;
  bbr3) set -- 3 --scenario-file configs/sets/bbr30.txt --reference docs/results/gen-v1-validation --reference docs/results/situations-established ;;
  mid) set -- 3 --scenario-file configs/sets/mid-rtt-val.txt --reference docs/results/gen-v1-validation --reference docs/results/gen-v2-validation --reference docs/results/gen-v3-validation ;;
  mid4) set -- 3 --scenario-file configs/sets/mid-rtt-val-cubic.txt --reference docs/results/gen-v1-validation --reference docs/results/gen-v2-validation --reference docs/results/gen-v3-validation ;;
  midtest) set -- 3 --scenario-file configs/sets/mid-rtt-test.txt --reference docs/results/issue16-test-hold-s2 --reference docs/results/gen-v2-test ;;
  named) set -- 2 --scenarios bg-1g-30ms,paper-fig1,wan-1g-50ms,lossy-1g-50ms --reference docs/results/named-hold-s2 ;;
  sitlan) set -- 4 --scenario-file configs/sets/situations-lan.txt --reference docs/results/gen-v1-validation ;;
  g7) set -- 3 --suite gen-v7 --set validation --reference docs/results/gen-v7-validation ;;
  g2short) set -- 2 --scenario-file configs/sets/gen-v2-short.txt --reference docs/results/gen-v2-validation ;;
  test) set -- 3 --suite gen-v9 --set test --reference docs/results/gen-v9-test ;;
  *) echo "unknown block $b" >&2; exit 2 ;;
esac
k=$1; shift
pol=(); for c in $CAND; do pol+=(--policy "$c"); done
echo "$n start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate "$@" "${pol[@]}" --policy ppo \
  --repeat "$k" --out "$R/$n" --json "$R/$n.json" > "$R/$n.log" 2>&1
echo "$n rc $? $(date -u +%T)"
