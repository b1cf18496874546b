#!/usr/bin/env bash
# Round 54: rules 2 and 3 of README.md here for the candidate rule 1 chose, from a frozen
# worktree, a fail stopping the chain (rule 1 is read by hand from gen-v15's block first).
#   WT=/work/wt/r54c R=/work/runs/r54 K=ppo:policy/weights/candidates/round54X.pt T=k54x- \
#     bash docs/results/issue16-round54/chain54.sh
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}; K=${K:?candidate}; T=${T:?tag}
export PYTHONPATH=$WT
mkdir -p "$R"
cd "$WT" || exit 2
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__"
v() { python3 -m train.verdict --min-ustar 10 "$@" | tee -a "$R/verdicts.txt"; return "${PIPESTATUS[0]}"; }
run() {  # NAME EVALUATE-ARGS...: one block beside ppo, under the testbed lock
  local n=$T$1; shift
  echo "$n start $(date -u +%T)"
  flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate "$@" --policy "$K" --policy ppo \
    --out "$R/$n" --json "$R/$n.json" > "$R/$n.log" 2>&1
  local rc=$?; echo "$n rc $rc $(date -u +%T)"; return $rc
}
run guard --scenario-file configs/sets/gen-v2-short.txt --scenario-file configs/sets/situations-lan.txt \
  --reference docs/results/gen-v2-validation --reference docs/results/gen-v1-validation --repeat 2 \
  || { echo "CHAIN STOPPED at guard (run)"; exit 1; }
echo "== guard (rule 2) $(date -u +%T)" >> "$R/verdicts.txt"
v --noninferior 0.05 --clear-loss 0.05 "$R/${T}guard.json" "$K" ppo \
  || { echo "CHAIN STOPPED at guard $(date -u +%T)"; exit 1; }
echo "CANDIDATE PASSED VALIDATION $(date -u +%T)"
run test --suite gen-v14 --set test --reference docs/results/gen-v14-test --repeat 3 \
  || { echo "CHAIN STOPPED at test (run)"; exit 1; }
echo "== test (rule 3) $(date -u +%T)" >> "$R/verdicts.txt"
if v --noninferior 0.05 --clear-loss 0.05 "$R/${T}test.json" "$K" ppo; then
  echo "CANDIDATE PASSES THE TEST SET $(date -u +%T)"
else
  echo "CANDIDATE FAILS THE TEST SET $(date -u +%T)"; exit 1
fi
