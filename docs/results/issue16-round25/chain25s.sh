#!/usr/bin/env bash
# Round 25 rule 5: NAME SPEC beside the shipped policy: fig3 x3 -> the five hand-written
# scenarios x4 -> gen-v3 validation x2 -> fig1 x2 -> (only if all hold) the gen-v2 test set x2
# once, stopping at the first failure. From the frozen worktree $WT (default /work/wt/eval25).
# bash chain25s.sh J24s judge:ppo
set -uo pipefail
N=$1; S=$2
WT=${WT:-/work/wt/eval25}; R=${R:-/work/runs/r25}; H=$WT/docs/results
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
L="flock /tmp/xfer-netns.lock"
done_() { echo "DONE $(date -u +%T)"; exit 0; }
verdict() {  # verdict STEP JSON [--test]
  python3 -m train.verdict $2 "$S" ppo --min-ustar 10 ${3:-} > $R/rule25-$N-$1.txt 2>&1
  local rc=$?; cat $R/rule25-$N-$1.txt; echo "$1 rule rc $rc $(date -u +%T)"; return $rc
}
run() {  # run STEP REPEAT REFERENCE ARGS...: one evaluate invocation, candidate beside ppo
  local step=$1 rep=$2 ref=$3; shift 3
  echo "$step start $(date -u +%T)"
  $L python3 -m xfer.cli evaluate "$@" --policy "$S" --policy ppo --repeat $rep \
     --reference $H/$ref --out $R/$step-$N --json $R/$step-$N.json > $R/$step-$N.log 2>&1
  echo "$step rc $? $(date -u +%T)"
}
echo "fig3 start $(date -u +%T)"
$L python3 -m xfer.cli experiment fig3 --policies "$S" --repetitions 3 --no-sweep --out $R/fig3-$N > $R/fig3-$N.log 2>&1
python3 $H/issue16-round14/fig3check.py $R/fig3-$N "$S" > $R/fig3check-$N.txt 2>&1
rc=$?; cat $R/fig3check-$N.txt; echo "fig3 rc $rc $(date -u +%T)"
[ $rc = 0 ] || done_
HANDS=()
for h in bbr-shared-1g lan-capped lan-reno lossy-long onoff-180ms; do
  HANDS+=(--scenario configs/suites/gen-v1/validation/hand-$h.toml)
done
run hand 4 gen-v1-validation "${HANDS[@]}"
verdict hand $R/hand-$N.json || done_
run val-gen-v3 2 gen-v3-validation --suite gen-v3 --set validation
verdict v3 $R/val-gen-v3-$N.json || done_
# fig1 and the test set: chain25.sh (rules 2-3)
bash /tmp/r25/chain25.sh "$N" "$S"
