#!/usr/bin/env bash
# Round 52's chain (README.md here): rules 4-5 (mid4, named4) for K52 beside ppo, then gen-v12's
# test set once (rule 6). Rules 1-3 are carried from round 51's K51 runs (carry52.txt).
#   WT=/work/wt/r52 R=/work/runs/r52 K=ppo:policy/weights/candidates/round52.pt T=k52- \
#     bash docs/results/issue16-round52/chain52.sh
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}; K=${K:?candidate}; T=${T:?tag}
D51=$WT/docs/results/issue16-round51; E=$WT/docs/results/issue16-round49/eval49.sh
export WT R PYTHONPATH=$WT
mkdir -p "$R"
cd "$WT" || exit 2
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__"
v() { python3 -m train.verdict --min-ustar 10 "$@" | tee -a "$R/verdicts.txt"; return "${PIPESTATUS[0]}"; }
aa() {  # rule 16: scenarios where every candidate run replays as plain ppo
  python3 "$D51/aa51.py" "$1" "${K//[:\/]/-}"  # the log directory: the spec, : and / as -
}
judge() {  # BLOCK_DIR JSON VERDICT_ARGS...: A/A-by-replay scenarios reported, the rest judged
  local dir=$1 json=$2 x n; shift 2
  x=$(aa "$dir"); n=$(printf '%s\n' "$x" | grep -c .)
  echo "$(basename "$dir") A/A by replay: ${x//$'\n'/ } ($n)" | tee -a "$R/verdicts.txt"
  # shellcheck disable=SC2086
  v "$@" "$json" "$K" ppo ${x:+--exclude $x}
}
if ! { CAND=$K TAG=$T bash "$E" mid4 && judge "$R/${T}mid4" "$R/${T}mid4.json" --noninferior 0.05 --min-tolerance 0.07; }; then
  echo "CHAIN STOPPED at mid4 $(date -u +%T)"; exit 1
fi
if ! { CAND=$K TAG=$T bash "$E" named4 && judge "$R/${T}named4" "$R/${T}named4.json" --noninferior 0.05; }; then
  echo "CHAIN STOPPED at named4 $(date -u +%T)"; exit 1
fi
echo "CANDIDATE PASSED VALIDATION $(date -u +%T)"
n=${T}test
echo "$n start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --suite gen-v12 --set test --policy "$K" \
  --policy ppo --repeat 3 --reference docs/results/gen-v12-test --out "$R/$n" --json "$R/$n.json" \
  > "$R/$n.log" 2>&1
echo "$n rc $? $(date -u +%T)"
judge "$R/$n/gen-v12-test" "$R/$n.json" --test
echo "CHAIN DONE $(date -u +%T)"
