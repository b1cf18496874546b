#!/usr/bin/env bash
# Round 49: candidates beside ppo, one block per call, from a frozen worktree (README.md here).
#   WT=/work/wt/r49 R=/work/runs/r49 CAND="SPEC [SPEC...]" TAG=k49- \
#     bash docs/results/issue16-round49/eval49.sh bbr3|mid4|named4|test
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}; CAND=${CAND-}  # empty: ppo alone (a status reading)
cd "$WT" && export PYTHONPATH=$WT && mkdir -p "$R"
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__"
b=$1; n=${TAG:-}$b
case $b in
  bbr3) set -- 3 --scenario-file configs/sets/bbr30.txt --reference docs/results/gen-v1-validation --reference docs/results/situations-established ;;
  mid4) set -- 3 --scenario-file configs/sets/mid-rtt-val-cubic.txt --reference docs/results/gen-v1-validation --reference docs/results/gen-v2-validation --reference docs/results/gen-v3-validation ;;
  named4) set -- 4 --scenarios bg-1g-30ms,paper-fig1,wan-1g-50ms,lossy-1g-50ms --reference docs/results/named-hold-s2 ;;
  test) set -- 3 --suite gen-v11 --set test --reference docs/results/gen-v11-test ;;
  *) echo "unknown block $b" >&2; exit 2 ;;
esac
k=$1; shift
pol=(); for c in $CAND; do pol+=(--policy "$c"); done
echo "$n start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate "$@" "${pol[@]}" --policy ppo \
  --repeat "$k" --out "$R/$n" --json "$R/$n.json" > "$R/$n.log" 2>&1
echo "$n rc $? $(date -u +%T)"
