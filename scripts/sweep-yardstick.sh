#!/usr/bin/env bash
# Sweep a generated suite's set once for its stored yardstick (U*, GD, BO; docs/evaluation.md):
# one scenario per testbed lock, from a frozen worktree, skipping those already stored, so an
# interrupted sweep resumes where it stopped. Run it before any candidate sees the set.
#
#   WT=/work/wt/sweep [O=DIR] [R=RUNDIR] [COUNTS=1,2,4,8,16,32,48] [DRY=1] \
#     scripts/sweep-yardstick.sh SUITE SET [NAME...]
#   WT=/work/wt/sweep O=DIR [R=RUNDIR] ... scripts/sweep-yardstick.sh FILE.toml...
#
# DRY=1 prints each command (after "+ ") instead of running it.
# O (default: docs/results/SUITE-SET of the checkout this script is in; required with files)
# gets one NAME.json per scenario, written only when its run finished; R (default
# /work/runs/sweep-SUITE, or /work/runs/sweep-files) keeps the logs. The second form sweeps
# hand-written scenarios (configs/situations/*.toml, paths relative to WT) the same way.
# Replaces the per-suite copies (gen-v12-test/sweep51.sh, gen-v13-test/sweep52.sh) and the
# one-scenario sweeps round 62 wrote into its chain scripts.
set -uo pipefail
usage() { sed -n '2,17p' "$0" >&2; exit 2; }
[ $# -ge 1 ] || usage
WT=${WT:?frozen worktree}; here=$(cd "$(dirname "$0")/.." && pwd)
COUNTS=${COUNTS:-1,2,4,8,16,32,48}
files=()
if [[ $1 == *.toml ]]; then
  O=${O:?O=DIR: where the yardsticks of hand-written scenarios go}; R=${R:-/work/runs/sweep-files}
  for f in "$@"; do
    [[ $f == /* ]] || f=$WT/$f
    files+=("$f")
  done
else
  [ $# -ge 2 ] || usage
  suite=$1 set=$2; shift 2
  O=${O:-$here/docs/results/$suite-$set}; R=${R:-/work/runs/sweep-$suite}
  dir=$WT/configs/suites/$suite/$set
  [ -d "$dir" ] || { echo "no scenarios at $dir" >&2; exit 2; }
  if [ $# -eq 0 ]; then
    files=("$dir"/*.toml)
  else
    for n in "$@"; do files+=("$dir/$n.toml"); done
  fi
fi
cd "$WT" && export PYTHONPATH=$WT
[ -n "${DRY:-}" ] || mkdir -p "$O" "$R"
rc=0
for f in "${files[@]}"; do
  n=$(basename "$f" .toml)
  [ -f "$O/$n.json" ] && continue
  [ -f "$f" ] || { echo "no scenario $f" >&2; rc=2; continue; }
  cmd=(flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --scenario "$f"
    --policy gd --sweep "$COUNTS" --repeat 1 --out "$R/$n" --json "$O/$n.json.tmp")
  if [ -n "${DRY:-}" ]; then echo "+ ${cmd[*]}"; continue; fi
  echo "$n start $(date -u +%T)"
  "${cmd[@]}" > "$R/$n.log" 2>&1 && mv "$O/$n.json.tmp" "$O/$n.json"
  r=$?; [ $r -eq 0 ] || rc=1
  echo "$n rc $r $(date -u +%T)"
done
exit $rc
