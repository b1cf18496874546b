#!/usr/bin/env bash
# The testbed chain a stream-policy candidate runs beside the shipped policy (issue #16's
# protocol since round 32; docs/evaluation.md). Run it from a frozen worktree of the commit
# whose round README states the rules, one chain at a time (no other testbed or CPU-heavy
# work beside it):
#
#   X=SPEC TAG=NAME [R=OUTDIR] [TEST_DEADLINE=HH:MM] [AGREE=D] [RUNS2=N] [FROM=2] [SIT=0] \
#     [GATES=base] [DRY=1] scripts/candidate-chain.sh
#
# 0. train.gates --target X must pass. GATES=base runs train.gates X (without the target
#    gates) instead: only for a wrapper of the shipped policy, which fails the target gate
#    `stays` itself (round 40), and only where a round's README says so before it runs.
# 1. gen-v2 validation, X beside ppo, 2 runs, order rotated: train.verdict --min-ustar 10
#    --noninferior 0.05 (paired mean - 2 SE >= -0.05, X's minimum >= ppo's - 0.05).
# 2. configs/sets/warmup10.txt (round 28's ten warm-up scenarios), RUNS2 runs (default 3):
#    --margin 0.05, with the split by kind ("8+": the three where 8+ streams are best). Runs as
#    a diagnostic (chooses nothing) if rule 1 failed.
# 2b. (round 37) Situation 3 and the issue's situations: gen-v7 validation (BBR rivals joining
#    short paths) and configs/sets/situations.txt (the hand-written five), X beside ppo, 2 runs
#    each, pooled: train.verdict --min-ustar 10 (paired mean > 0, X's minimum >= ppo's - 0.05).
#    SIT=0 skips it, only where a round's README says so before it runs.
# 3. fig3, 3 repetitions: JFI >= 0.98 with the link >= 92 % used in every run.
# 4. gen-v2 test, once, 2 runs, train.verdict --test: only if 1-3 (and 2b) pass and it can
#    start by TEST_DEADLINE (unset: it does not run). Shipping is the caller's, by its README's
#    rule.
# AGREE=D (unset: every scenario) reads rules 1, 2 and 2b's minimums only over scenarios whose
# runs agree within D (train.verdict --agree; round 35: gen-v3-v06's ratio swings -0.5..+0.2 at
# the same counts with its rivals' loss). A round's README names it before its candidate runs.
# FROM=2 starts at rule 2 (after the gates): only where a round's README says, before it runs,
# that rule 1's result on fresh runs of this same candidate stands (round 36: C35's round 35).
# Stops at the first failed rule (except 1, see 2). Every output is $R/*-$TAG.*; DRY=1 prints
# the commands instead of running them.
set -uo pipefail
: "${X:?X=SPEC, the candidate}" "${TAG:?TAG=NAME, for the output files}"
cd "$(dirname "$0")/.." && export PYTHONPATH=$PWD  # this checkout's code, scenarios, yardsticks
R=${R:-/work/runs/$TAG}; H=docs/results; L="flock /tmp/xfer-netns.lock"
mkdir -p "$R"
AG=(); [ -n "${AGREE:-}" ] && AG=(--agree "$AGREE")
run() { if [ -n "${DRY:-}" ]; then echo "+ $*"; else "$@"; fi; }
to() { local f=$1; shift; if [ -n "${DRY:-}" ]; then echo "+ $* > $f"; else "$@" > "$f" 2>&1; fi; }
verdict() {
  local f=$1; shift
  to "$f" python3 -m train.verdict "$@"; local rc=$?
  [ -z "${DRY:-}" ] && cat "$f"; return $rc
}
stop() { echo "DONE $(date -u +%T): $1"; exit 0; }
# beside NAME RUNS ARGS...: X beside ppo on ARGS' scenarios, order rotated, under the testbed lock;
# the log, run directory and JSON are $R/NAME-$TAG.*
beside() {
  local n=$1 k=$2; shift 2
  to "$R/$n-$TAG.log" $L python3 -m xfer.cli evaluate "$@" --policy "$X" --policy ppo \
    --repeat "$k" --out "$R/$n-$TAG" --json "$R/$n-$TAG.json"
}
echo "$TAG = $X"
TG=(--target); [ "${GATES:-}" = base ] && TG=()
to "$R/gates-$TAG.txt" python3 -m train.gates "${TG[@]}" "$X" || stop "gates fail ($R/gates-$TAG.txt)"
rule1=0
if [ "${FROM:-1}" = 2 ]; then
  echo "rule 1 not run (FROM=2): its earlier result stands"
else
  echo "rule 1 start $(date -u +%T)"
  beside val-gen-v2 2 --suite gen-v2 --set validation --reference $H/gen-v2-validation
  verdict "$R/rule1-$TAG.txt" "$R/val-gen-v2-$TAG.json" "$X" ppo --min-ustar 10 \
    --noninferior 0.05 "${AG[@]}"
  rule1=$?; [ $rule1 = 0 ] || echo "rule 1 FAILS: rule 2's scenarios run as a diagnostic"
fi
echo "rule 2 start $(date -u +%T)"
REFS=(); for v in 3 4 6; do REFS+=(--reference "$H/gen-v$v-validation"); done
beside warmup10 "${RUNS2:-3}" --scenario-file configs/sets/warmup10.txt "${REFS[@]}"
verdict "$R/rule2-$TAG.txt" "$R/warmup10-$TAG.json" "$X" ppo --min-ustar 10 --margin 0.05 "${AG[@]}"
rule2=$?
# Each kind is LABEL:the scenarios --exclude drops; the label names the ones that remain
# ("8+": gen-v3-v06, gen-v4-v03, gen-v6-v01, where 8+ streams are best).
for kind in "8+:gen-v4-v01 gen-v4-v02 gen-v6-v02 gen-v6-v03 gen-v6-v04 gen-v6-v05 gen-v6-v06" \
            "rest:gen-v3-v06 gen-v4-v03 gen-v6-v01"; do
  echo "kind ${kind%%:*}"
  run python3 -m train.verdict "$R/warmup10-$TAG.json" "$X" ppo --min-ustar 10 --margin 0.05 \
    "${AG[@]}" --exclude ${kind#*:} 2>&1 | tail -4
done
[ $rule1 = 0 ] && [ $rule2 = 0 ] || stop "rule 1 rc $rule1, rule 2 rc $rule2"
if [ "${SIT:-1}" = 0 ]; then
  echo "rule 2b not run (SIT=0)"
else
  echo "rule 2b start $(date -u +%T)"
  beside gen-v7 2 --suite gen-v7 --set validation --reference $H/gen-v7-validation
  beside situations 2 --scenario-file configs/sets/situations.txt \
    --reference $H/gen-v1-validation
  verdict "$R/rule2b-$TAG.txt" "$R/gen-v7-$TAG.json,$R/situations-$TAG.json" "$X" ppo \
    --min-ustar 10 "${AG[@]}" || stop "rule 2b fails ($R/rule2b-$TAG.txt)"
fi
echo "rule 3 start $(date -u +%T)"
to "$R/fig3-$TAG.log" $L python3 -m xfer.cli experiment fig3 --policies "$X" --repetitions 3 \
  --no-sweep --out "$R/fig3-$TAG"
to "$R/rule3-$TAG.txt" python3 $H/issue16-round14/fig3check.py "$R/fig3-$TAG" "$X" \
  || stop "rule 3 fails ($R/rule3-$TAG.txt)"
[ -n "${TEST_DEADLINE:-}" ] || stop "rules 1-3 pass; no TEST_DEADLINE: the test set waits"
[ "$(date -u +%s)" -le "$(date -u -d "$TEST_DEADLINE" +%s)" ] \
  || stop "rules 1-3 pass; past $TEST_DEADLINE"
echo "rule 4 start $(date -u +%T)"
beside test-gen-v2 2 --suite gen-v2 --set test --reference $H/gen-v2-test
verdict "$R/rule4-$TAG.txt" "$R/test-gen-v2-$TAG.json" "$X" ppo --min-ustar 10 --test
stop "rule 4 rc $?"
