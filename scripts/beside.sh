#!/usr/bin/env bash
# One block of a shipping rule (docs/evaluation.md, "The rules"): a candidate beside the shipped
# policy (`ppo`) in one `xfer evaluate` invocation under the testbed lock, from a frozen
# worktree, then `train.verdict --as-base` on its runs (a candidate run that replays as ppo's
# decisions counts as ppo's, rule 19). The round scripts under docs/results/issue16-round*/
# call it once per declared block, so each block's command is written once.
#
#   WT=/work/wt/NAME R=/work/runs/rNN [VERDICT="--noninferior 0.05"] [MIN_USTAR=10] \
#     scripts/beside.sh BLOCK REPEAT CANDIDATE EVALUATE_ARGS...
#
# BLOCK names the block: R/BLOCK holds its logs, R/BLOCK.json its result, R/BLOCK.log evaluate's
# output and R/BLOCK-trace.txt every run's per-MI trace (`lab.trace`: the text a round commits,
# since run directories do not outlive the machine). REPEAT is the runs per policy; CANDIDATE a
# --policy spec (e.g. ppo:policy/weights/candidates/round59e.pt); EVALUATE_ARGS pick the
# scenarios and references (--scenario-file F --reference DIR ...). VERDICT holds the block's
# declared rule. Exit status: evaluate's if it failed, else the verdict's (0 a pass). DRY=1
# prints the three commands (after "+ ") instead of running them.
set -uo pipefail
[ $# -ge 4 ] || { sed -n '2,17p' "$0" >&2; exit 2; }
WT=${WT:?frozen worktree}; R=${R:?run directory}
block=$1 repeat=$2 cand=$3; shift 3
[[ $repeat =~ ^[1-9][0-9]*$ ]] || { echo "REPEAT must be a positive count, got '$repeat'" >&2; exit 2; }
cd "$WT" && export PYTHONPATH=$WT || exit 2
ev=(flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate "$@" --policy "$cand" --policy ppo
  --repeat "$repeat" --out "$R/$block" --json "$R/$block.json")
# shellcheck disable=SC2206  # VERDICT is a list of options
vd=(python3 -m train.verdict --min-ustar "${MIN_USTAR:-10}" ${VERDICT:-} --as-base "$R/$block"
  "$R/$block.json" "$cand" ppo)
tr=(python3 -m lab.trace "$R/$block")
if [ -n "${DRY:-}" ]; then echo "+ ${ev[*]}"; echo "+ ${tr[*]} > $R/$block-trace.txt"; echo "+ ${vd[*]}"; exit 0; fi
mkdir -p "$R"
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__" || exit 2
echo "$block start $(date -u +%T)"
"${ev[@]}" > "$R/$block.log" 2>&1
rc=$?
echo "$block rc $rc $(date -u +%T)"
[ $rc -eq 0 ] || exit $rc
"${tr[@]}" > "$R/$block-trace.txt" || echo "$block: no trace written" >&2
"${vd[@]}"
rc=$?
echo "$block verdict rc $rc"
exit $rc
