#!/usr/bin/env bash
# Sweep a generated suite's set once for its stored yardstick (U*, GD, BO; docs/evaluation.md):
# one scenario per testbed lock, from a frozen worktree, skipping those already stored, so an
# interrupted sweep resumes where it stopped. Run it before any candidate sees the set.
#
#   WT=/work/wt/sweep [O=DIR] [R=RUNDIR] [COUNTS=1,2,4,8,16,32,48] [DRY=1] \
#     scripts/sweep-yardstick.sh SUITE SET [NAME...]
#
# DRY=1 prints each command (after "+ ") instead of running it.
# O (default: docs/results/SUITE-SET of the checkout this script is in) gets one NAME.json per
# scenario, written only when its run finished; R (default /work/runs/sweep-SUITE) keeps the
# logs. Replaces the per-suite copies (gen-v12-test/sweep51.sh, gen-v13-test/sweep52.sh).
set -uo pipefail
[ $# -ge 2 ] || { sed -n '2,12p' "$0" >&2; exit 2; }
suite=$1 set=$2; shift 2
WT=${WT:?frozen worktree}; here=$(cd "$(dirname "$0")/.." && pwd)
O=${O:-$here/docs/results/$suite-$set}; R=${R:-/work/runs/sweep-$suite}
COUNTS=${COUNTS:-1,2,4,8,16,32,48}
dir=$WT/configs/suites/$suite/$set
[ -d "$dir" ] || { echo "no scenarios at $dir" >&2; exit 2; }
cd "$WT" && export PYTHONPATH=$WT
[ -n "${DRY:-}" ] || mkdir -p "$O" "$R"
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for f in "$dir"/*.toml; do names+=("$(basename "$f" .toml)"); done
fi
rc=0
for n in "${names[@]}"; do
  [ -f "$O/$n.json" ] && continue
  [ -f "$dir/$n.toml" ] || { echo "no scenario $dir/$n.toml" >&2; rc=2; continue; }
  cmd=(flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --scenario "$dir/$n.toml"
    --policy gd --sweep "$COUNTS" --repeat 1 --out "$R/$n" --json "$O/$n.json.tmp")
  if [ -n "${DRY:-}" ]; then echo "+ ${cmd[*]}"; continue; fi
  echo "$n start $(date -u +%T)"
  "${cmd[@]}" > "$R/$n.log" 2>&1 && mv "$O/$n.json.tmp" "$O/$n.json"
  r=$?; [ $r -eq 0 ] || rc=1
  echo "$n rc $r $(date -u +%T)"
done
exit $rc
