#!/usr/bin/env bash
# Round 52's K52b chain (README.md here): rules 3-5 (bbr3, mid4, named4) beside ppo, no test set
# this session; rules 1-2 are carried from K51's runs (carry52b.txt). WAIT_PID: a chain to wait for.
#   WT=/work/wt/r52b R=/work/runs/r52b K=ppo:policy/weights/candidates/round52b.pt T=k52b- \
#     WAIT_PID=N bash docs/results/issue16-round52/chain52b.sh
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}; K=${K:?candidate}; T=${T:?tag}
D51=$WT/docs/results/issue16-round51; E=$WT/docs/results/issue16-round49/eval49.sh
export WT R PYTHONPATH=$WT
mkdir -p "$R"
cd "$WT" || exit 2
if [ -n "${WAIT_PID:-}" ]; then while kill -0 "$WAIT_PID" 2> /dev/null; do sleep 5; done; fi
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__"
v() { python3 -m train.verdict --min-ustar 10 "$@" | tee -a "$R/verdicts.txt"; return "${PIPESTATUS[0]}"; }
judge() {  # BLOCK JSON VERDICT_ARGS...: rule 16's A/A-by-replay scenarios reported, the rest judged
  local dir=$1 json=$2 x n; shift 2
  x=$(python3 "$D51/aa51.py" "$dir" "${K//[:\/]/-}"); n=$(printf '%s\n' "$x" | grep -c .)
  echo "$(basename "$dir") A/A by replay: ${x//$'\n'/ } ($n)" | tee -a "$R/verdicts.txt"
  # shellcheck disable=SC2086
  v "$@" "$json" "$K" ppo ${x:+--exclude $x}
}
for b in bbr3 mid4 named4; do
  args=(--noninferior 0.05); [ "$b" = mid4 ] && args+=(--min-tolerance 0.07)
  if ! { CAND=$K TAG=$T bash "$E" "$b" && judge "$R/$T$b" "$R/$T$b.json" "${args[@]}"; }; then
    echo "CHAIN STOPPED at $b $(date -u +%T)"; exit 1
  fi
done
echo "CANDIDATE PASSED VALIDATION $(date -u +%T) (test set: a fresh draw, README.md)"
