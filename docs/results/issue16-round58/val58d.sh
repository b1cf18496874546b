#!/usr/bin/env bash
# Round 58's last blocks (README.md here, "D's validation"): D beside K55 on bbr3 (10 runs, one
# invocation), then named4 (4 runs, one invocation; D differs from K55 on one stored run). fig3,
# fig1 and mid4 are carried (rule 17). Every verdict --as-base. A fail stops.
#   WT=/work/wt/r58d R=/work/runs/r58 bash docs/results/issue16-round58/val58d.sh
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}
D=ppo:policy/weights/candidates/round58d.pt
cd "$WT" && export PYTHONPATH=$WT && mkdir -p "$R"
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__"
v() { python3 -m train.verdict --min-ustar 10 "$@" | tee -a "$R/verdicts-d.txt"; return "${PIPESTATUS[0]}"; }
stop() { echo "STOPPED at $1 $(date -u +%T)" | tee -a "$R/verdicts-d.txt"; exit 1; }
ev() {  # NAME REPEAT SCENARIO-ARGS...
  local n=$1 k=$2; shift 2
  echo "== $n start $(date -u +%T)" | tee -a "$R/verdicts-d.txt"
  flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate "$@" --policy "$D" --policy ppo \
    --repeat "$k" --out "$R/$n" --json "$R/$n.json" > "$R/$n.log" 2>&1
  local rc=$?; echo "== $n rc $rc $(date -u +%T)" | tee -a "$R/verdicts-d.txt"; return $rc
}
ev bbr3d 10 --scenario-file configs/sets/bbr30.txt --reference docs/results/gen-v1-validation \
  --reference docs/results/situations-established || stop "bbr3d (run)"
out=$(v --noninferior 0.05 --as-base "$R/bbr3d" "$R/bbr3d.json" "$D" ppo); rc=$?
d=$(printf '%s\n' "$out" | sed -n 's/.*paired \([-+][0-9.]*\) +-.*/\1/p' | tail -1)
python3 -c "import sys; sys.exit(0 if $rc == 0 and float('$d') > 0 else 1)" || stop "bbr3d ($d)"
ev named4d 4 --scenarios bg-1g-30ms,paper-fig1,wan-1g-50ms,lossy-1g-50ms \
  --reference docs/results/named-hold-s2 || stop "named4d (run)"
v --noninferior 0.05 --as-base "$R/named4d" "$R/named4d.json" "$D" ppo || stop named4d
echo "D PASSED VALIDATION $(date -u +%T)" | tee -a "$R/verdicts-d.txt"
