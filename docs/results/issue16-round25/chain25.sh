#!/usr/bin/env bash
# Round 25 chain (README rules 2-3): NAME SPEC beside the shipped policy: fig1 x2 (30 s,
# fig1tto24.py; both runs by 6.01 s) -> (only if it holds) the gen-v2 test set x2, once.
# From the frozen worktree $WT (default /work/wt/eval25).
# bash chain25.sh F22 "ensemble:$WT/policy/weights/candidates/onoff-s4.pt+$WT/policy/weights/candidates/hold-kick22-s3.pt"
set -uo pipefail
N=$1; S=$2
WT=${WT:-/work/wt/eval25}; R=${R:-/work/runs/r25}; H=$WT/docs/results
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
L="flock /tmp/xfer-netns.lock"
done_() { echo "DONE $(date -u +%T)"; exit 0; }
echo "fig1 start $(date -u +%T)"
$L python3 -m xfer.cli experiment fig1 --policies "$S,ppo" --duration 30 --repetitions 2 \
   --no-sweep --out $R/fig1-$N > $R/fig1-$N.log 2>&1
echo "fig1 rc $? $(date -u +%T)"
python3 $H/issue16-round24/fig1tto24.py $R/fig1-$N > $R/fig1tto25-$N.txt 2>&1; cat $R/fig1tto25-$N.txt
# rule 2: both of the candidate's runs (log dirs other than ppo) reach the optimum by 6.01 s
python3 - $R/fig1tto25-$N.txt <<'PY' || done_
import re, sys
cand = [l for l in open(sys.argv[1]) if l.strip() and not l.startswith("ppo ")]
t = [float(m.group(1)) if (m := re.search(r"optimum\s+([\d.]+) s", l)) else 1e9 for l in cand]
print(f"fig1 rule: candidate runs {t}: {'PASS' if len(t) == 2 and max(t) <= 6.01 else 'FAIL'}")
sys.exit(0 if len(t) == 2 and max(t) <= 6.01 else 1)
PY
# rule 6 (scheduling only): the test set starts only if it can end, with CI after it, inside the session
if [ -n "${TEST_DEADLINE:-}" ] && [ "$(date -u +%s)" -gt "$(date -u -d "$TEST_DEADLINE" +%s)" ]; then
  echo "test not started: past $TEST_DEADLINE (rule 6), left for the next round"; done_
fi
echo "test start $(date -u +%T)"
$L python3 -m xfer.cli evaluate --suite gen-v2 --set test --policy "$S" --policy ppo --repeat 2 \
   --reference $H/gen-v2-test --out $R/test-gen-v2-$N --json $R/test-gen-v2-$N.json > $R/test-gen-v2-$N.log 2>&1
echo "test rc $? $(date -u +%T)"
python3 -m train.verdict $R/test-gen-v2-$N.json "$S" ppo --min-ustar 10 --test > $R/rule25-$N-test.txt 2>&1
echo "test rule rc $?"; cat $R/rule25-$N-test.txt
done_
