#!/usr/bin/env bash
# Round 24 chain (README rule 2): NAME SPEC beside the shipped policy: gen-v2 validation x2 ->
# fig3 x3 -> the five hand-written scenarios x4 -> gen-v3 validation x2 -> (only if all hold)
# the gen-v2 test set x2, stopping at the first failure. From the frozen worktree /work/wt/eval24.
# bash chain24.sh J24k "judge:ppo:/work/wt/eval24/policy/weights/candidates/hold-kick22-s3.pt"
set -uo pipefail
N=$1; S=$2
WT=${WT:-/work/wt/eval24}; R=${R:-/work/runs/r24}; H=$WT/docs/results
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
L="flock /tmp/xfer-netns.lock"
done_() { echo "DONE $(date -u +%T)"; exit 0; }
verdict() {  # verdict STEP JSON [--test]: round 19's test decides
  python3 -m train.verdict $2 "$S" ppo --min-ustar 10 ${3:-} > $R/rule24-$N-$1.txt 2>&1
  local rc=$?; cat $R/rule24-$N-$1.txt; echo "$1 rule rc $rc $(date -u +%T)"; return $rc
}
run() {  # run STEP REPEAT REFERENCE ARGS...: one evaluate invocation, candidate beside ppo
  local step=$1 rep=$2 ref=$3; shift 3
  echo "$step start $(date -u +%T)"
  $L python3 -m xfer.cli evaluate "$@" --policy "$S" --policy ppo --repeat $rep \
     --reference $H/$ref --out $R/$step-$N --json $R/$step-$N.json > $R/$step-$N.log 2>&1
  echo "$step rc $? $(date -u +%T)"
}
run val-gen-v2 2 gen-v2-validation --suite gen-v2 --set validation
verdict v2 $R/val-gen-v2-$N.json || done_
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
run test-gen-v2 2 gen-v2-test --suite gen-v2 --set test
verdict test $R/test-gen-v2-$N.json --test
done_
