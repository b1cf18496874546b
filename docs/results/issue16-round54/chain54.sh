#!/usr/bin/env bash
# Round 54b: candidate E's rules 1-3 as README.md here declares them, from a frozen worktree,
# a fail stopping the chain. Rule 1's block (gen-v15) may already have run: with V15=FILE the
# chain reads that result instead of running it again.
#   WT=/work/wt/r54e R=/work/runs/r54 K=ppo:policy/weights/candidates/round54e.pt T=k54e- \
#     [V15=/work/runs/r54/v15e.json] bash docs/results/issue16-round54/chain54.sh
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
stop() { echo "CHAIN STOPPED at $1 $(date -u +%T)"; exit 1; }
f=${V15:-}
if [ -z "$f" ]; then
  run v15 --suite gen-v15 --set validation --reference docs/results/gen-v15-validation \
    --repeat 3 || stop "v15 (run)"
  f=$R/${T}v15.json
fi
echo "== gen-v15 (rule 1) $(date -u +%T)" >> "$R/verdicts.txt"
v --clear-loss 0.05 --scenario-floor 0.05 "$f" "$K" ppo || stop v15
run guard --scenario-file configs/sets/gen-v2-short.txt \
  --scenario-file configs/sets/situations-lan.txt --reference docs/results/gen-v2-validation \
  --reference docs/results/gen-v1-validation --repeat 2 || stop "guard (run)"
echo "== guard (rule 2) $(date -u +%T)" >> "$R/verdicts.txt"
g=$R/${T}guard.json
v --clear-loss 0.05 --scenario-floor 0.05 "$g" "$K" ppo \
  || v --noninferior 0.05 --clear-loss 0.05 --scenario-floor 0.05 "$g" "$K" ppo || stop guard
echo "CANDIDATE PASSED VALIDATION $(date -u +%T)"
run test --suite gen-v14 --set test --reference docs/results/gen-v14-test --repeat 3 \
  || stop "test (run)"
echo "== test (rule 3) $(date -u +%T)" >> "$R/verdicts.txt"
if v --noninferior 0.05 --clear-loss 0.05 "$R/${T}test.json" "$K" ppo; then
  echo "CANDIDATE PASSES THE TEST SET $(date -u +%T)"
else
  echo "CANDIDATE FAILS THE TEST SET $(date -u +%T)"; exit 1
fi
echo "== test, scenario floor (reported, not judged)" >> "$R/verdicts.txt"
v --clear-loss 0.05 --scenario-floor 0.05 "$R/${T}test.json" "$K" ppo > /dev/null
exit 0
