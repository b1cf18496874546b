# shellcheck shell=bash
# Sourced by a round's chain script (docs/results/issue16-round*/chainNN.sh, from round 62): the
# helpers every chain since round 59 wrote out again. Needs R (the run directory), WT (the frozen
# worktree) and H (the candidate's --policy spec) set, and the caller in "$WT" (`enter` puts it
# there). From round 64 a chain starts
#
#   source "${WT:?frozen worktree}/scripts/chain-lib.sh" && enter
#
#   enter                       exports WT and R, makes R, goes to WT, puts it first on
#                               PYTHONPATH and checks that `import xfer` finds it there (the
#                               preamble rounds 59-63 wrote out in every chain script)
#   log MSG...                  MSG and the time, to the screen and R/verdicts.txt
#   stop BLOCK                  logs "CHAIN STOPPED at BLOCK" and exits 1
#   block NAME REPEAT VERDICT EVALUATE-ARGS...
#                               one scripts/beside.sh block of H beside ppo, its verdict rule
#                               VERDICT, its output kept; the block's status
#   guard NAME REPEAT EVALUATE-ARGS...
#                               a guard block (one the candidate does not target): block with
#                               rule 18's scenario floor and --clear-loss (0.05 each) and
#                               `train.verdict --guard` (no "better overall"), the form a
#                               few-scenario guard needs (rounds 54, 60 and 63 declared
#                               --noninferior there and failed a gain; round 63's first form of
#                               this helper left the verdict's default "> 0" in, and mid4q
#                               failed it at -0.0005)
#   shipped_reading NAME DIR LABEL
#                               evaluation rule 21: status 0 if every run of LABEL under DIR
#                               replays as the shipped policy (`ppo`) decision for decision, in
#                               every transfer; the failed block NAME is then the shipped
#                               policy's reading and the chain goes on. Declare its use in the
#                               round README before the chain runs.
#   paired_positive NAME        the last verdict's paired difference (R/verdicts.txt) must be
#                               > 0 (rule 18's "better overall"): logs "NAME passed" and status
#                               0, or stops the chain at NAME
#   paired_at_least NAME M      the last verdict's paired difference must be >= M (round 64's
#                               "not lower overall", M = -0.05, beside a guard whose floor is
#                               the set's A/A noise): logs it and status 0, or stops at NAME
#   aa_floor AA-JSON RUNS [A B] prints the scenario floor for a block of RUNS runs per label
#                               from an A/A block's `xfer evaluate --json` (train.verdict's
#                               aa_floor: max(0.05, 2 * RMS * sqrt(A/A runs / RUNS)), U* >= 10);
#                               A and B are the pair's labels there (default the shipped
#                               policy's two names, ppo:policy/weights/default.pt and ppo).
#                               Fails, printing nothing on stdout, if the JSON has no such pair
enter() {
  : "${WT:?frozen worktree}" "${R:?run directory}"
  export WT R PYTHONPATH=$WT
  mkdir -p "$R" && cd "$WT" || exit 2
  python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__" || exit 2
}
log() { echo "$* $(date -u +%T)" | tee -a "$R/verdicts.txt"; }
stop() { log "CHAIN STOPPED at $1"; exit 1; }
block() {
  local n=$1 k=$2 vd=$3; shift 3
  VERDICT="$vd" scripts/beside.sh "$n" "$k" "$H" "$@" 2>&1 | tee -a "$R/verdicts.txt"
  return "${PIPESTATUS[0]}"
}
guard() {
  local n=$1 k=$2; shift 2
  block "$n" "$k" "--scenario-floor 0.05 --clear-loss 0.05 --guard" "$@"
}
shipped_reading() {
  local n=$1 dir=$2 label=$3
  if python3 -m train.replay --carried --require-all --policy "$label" "$dir" ppo \
    2>&1 | tee -a "$R/verdicts.txt" && [ "${PIPESTATUS[0]}" = 0 ]; then
    log "== $n failed on runs the shipped policy makes decision for decision: its reading (rule 21)"
    return 0
  fi
  return 1
}
last_paired() {
  sed -n 's/.*paired \([-+][0-9.]*\) +-.*/\1/p' "$R/verdicts.txt" | tail -1
}
paired_positive() {
  local n=$1 d
  d=$(last_paired)
  [ -n "$d" ] || stop "$n (no paired difference in the verdict)"
  awk -v d="$d" 'BEGIN { exit !(d + 0 > 0) }' || stop "$n (paired $d <= 0)"
  log "== $n passed (paired $d)"
}
paired_at_least() {
  local n=$1 m=$2 d
  d=$(last_paired)
  [ -n "$d" ] || stop "$n (no paired difference in the verdict)"
  awk -v d="$d" -v m="$m" 'BEGIN { exit !(d + 0 >= m + 0) }' || stop "$n (paired $d < $m)"
  log "== $n: paired $d >= $m"
}
aa_floor() {
  python3 -c 'import sys
from train.verdict import aa_floor, load
print(f"{aa_floor(load(sys.argv[1]), sys.argv[3], sys.argv[4], int(sys.argv[2]), min_ustar=10):.3f}")' \
    "$1" "$2" "${3:-ppo:policy/weights/default.pt}" "${4:-ppo}"
}
