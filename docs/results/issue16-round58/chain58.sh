#!/usr/bin/env bash
# Round 58: the rules README.md here declares before any run. Two candidates (A: the band's loss
# window 3 MIs, B: 4) beside K55 (`ppo`) on bbr3 (5 runs, one invocation); the better passing
# one goes on through fig3 (A only: B replays as K55 on all five round-55 runs), mid4, named4,
# and then gen-v17's test set once (5 runs). Every verdict replays runs as the policy that made
# them (--as-base, rule 19). A fail stops the chain.
#   WT=/work/wt/r58 R=/work/runs/r58 bash docs/results/issue16-round58/chain58.sh
# The second pair (C, D: the judge over 2 and 3 MIs) replays as K55 on fig3, fig1 and mid4
# (carried, rule 17) and runs named4 whole (one bg-1g-30ms run differs by one decision):
#   WT=/work/wt/r58cd R=/work/runs/r58 A=ppo:policy/weights/candidates/round58c.pt \
#     B=ppo:policy/weights/candidates/round58d.pt BBR3=bbr3cd N4=named4cd FIG3= SKIP_MID4=1 \
#     bash docs/results/issue16-round58/chain58.sh
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}
A=${A:-ppo:policy/weights/candidates/round58a.pt} B=${B:-ppo:policy/weights/candidates/round58b.pt}
BBR3=${BBR3:-bbr3}  # the bbr3 block's name (the second pair's: bbr3cd)
N4=${N4:-named4}  # the named4 block's name (the second pair's: named4cd)
FIG3=${FIG3-$A}  # the candidate that must run fig3 if chosen (empty: neither; both carried)
D50=$WT/docs/results/issue16-round50
export PYTHONPATH=$WT
mkdir -p "$R"
cd "$WT" || exit 2
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__"
v() { python3 -m train.verdict --min-ustar 10 "$@" | tee -a "$R/verdicts.txt"; return "${PIPESTATUS[0]}"; }
stop() { echo "CHAIN STOPPED at $1 $(date -u +%T)" | tee -a "$R/verdicts.txt"; exit 1; }
ev() {  # NAME REPEAT SCENARIO-ARGS... -- POLICIES...
  local n=$1 k=$2; shift 2; local args=(); while [ "$1" != -- ]; do args+=("$1"); shift; done; shift
  local pol=(); for p in "$@"; do pol+=(--policy "$p"); done
  echo "== $n start $(date -u +%T)" | tee -a "$R/verdicts.txt"
  flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate "${args[@]}" "${pol[@]}" --policy ppo \
    --repeat "$k" --out "$R/$n" --json "$R/$n.json" > "$R/$n.log" 2>&1
  local rc=$?; echo "== $n rc $rc $(date -u +%T)" | tee -a "$R/verdicts.txt"; return $rc
}
paired() { sed -n 's/.*paired \([-+][0-9.]*\) +-.*/\1/p' | tail -1; }

ev "$BBR3" 5 --scenario-file configs/sets/bbr30.txt --reference docs/results/gen-v1-validation \
  --reference docs/results/situations-established -- "$A" "$B" || stop "bbr3 (run)"
best=""; bestd=""
for c in "$A" "$B"; do
  out=$(v --noninferior 0.05 --as-base "$R/$BBR3" "$R/$BBR3.json" "$c" ppo); rc=$?
  d=$(printf '%s\n' "$out" | paired)
  echo "$BBR3 $c: rc $rc paired $d" | tee -a "$R/verdicts.txt"
  if [ "$rc" = 0 ] && python3 -c "import sys; sys.exit(0 if float('$d') > 0 else 1)"; then
    # the larger paired difference; on a tie the later (milder) one, B
    if [ -z "$best" ] || python3 -c "import sys; sys.exit(0 if float('$d') >= float('$bestd') else 1)"; then
      best=$c; bestd=$d
    fi
  fi
done
[ -n "$best" ] || stop "$BBR3 (neither candidate passes)"
echo "== chosen on $BBR3: $best ($bestd) $(date -u +%T)" | tee -a "$R/verdicts.txt"
if [ "$best" = "$FIG3" ]; then
  echo "== fig3 start $(date -u +%T)" | tee -a "$R/verdicts.txt"
  flock /tmp/xfer-netns.lock python3 -m xfer.cli experiment fig3 --policies "$best" --repetitions 5 \
    --no-sweep --out "$R/fig3" > "$R/fig3.log" 2>&1
  python3 "$D50/fig3check50.py" "$R/fig3" "$best" 5 | tee -a "$R/verdicts.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || stop fig3
fi
if [ -z "${SKIP_MID4:-}" ]; then
  ev mid4 3 --scenario-file configs/sets/mid-rtt-val-cubic.txt --reference docs/results/gen-v1-validation \
    --reference docs/results/gen-v2-validation --reference docs/results/gen-v3-validation -- "$best" \
    || stop "mid4 (run)"
  v --noninferior 0.05 --min-tolerance 0.07 --as-base "$R/mid4" "$R/mid4.json" "$best" ppo || stop mid4
fi
ev "$N4" 4 --scenarios bg-1g-30ms,paper-fig1,wan-1g-50ms,lossy-1g-50ms \
  --reference docs/results/named-hold-s2 -- "$best" || stop "named4 (run)"
v --noninferior 0.05 --as-base "$R/$N4" "$R/$N4.json" "$best" ppo || stop named4
echo "CANDIDATE PASSED VALIDATION $(date -u +%T)" | tee -a "$R/verdicts.txt"
ev test 5 --suite gen-v17 --set test --reference docs/results/gen-v17-test -- "$best" || stop "test (run)"
echo "== test: all scorable scenarios $(date -u +%T)" >> "$R/verdicts.txt"
if v --noninferior 0.05 --clear-loss 0.05 --as-base "$R/test" "$R/test.json" "$best" ppo; then
  echo "$best PASSES THE TEST SET $(date -u +%T)" | tee -a "$R/verdicts.txt"
else
  echo "$best FAILS THE TEST SET $(date -u +%T)" | tee -a "$R/verdicts.txt"; exit 1
fi
