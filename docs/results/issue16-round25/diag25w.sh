#!/usr/bin/env bash
# Round 25 rule 7: warmup:ppo and warmup:cc=bbr:ppo beside ppo, 2 runs, one invocation, on the
# validation scenarios above 60 ms with a stored yardstick; waits for rule 5's chain to end.
# Then (rule 7's last sentence) gen-v4's yardstick if DEADLINE allows.
set -uo pipefail
WT=${WT:-/work/wt/eval25w}; R=${R:-/work/runs/r25}; H=$WT/docs/results
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
until grep -q "^DONE" $R/chain-J24s.out 2>/dev/null; do sleep 20; done
if [ -n "${DIAG_DEADLINE:-}" ] && [ "$(date -u +%s)" -gt "$(date -u -d "$DIAG_DEADLINE" +%s)" ]; then
  echo "diagnostic not started: past $DIAG_DEADLINE (the session's CI needs the testbed)"; echo "DONE $(date -u +%T)"; exit 0
fi
echo "diag start $(date -u +%T)"
S=()
for s in gen-v1/validation/hand-lossy-long gen-v1/validation/hand-onoff-180ms gen-v1/validation/gen-v1-v04 \
         gen-v1/validation/gen-v1-v15 gen-v2/validation/gen-v2-v05 gen-v2/validation/gen-v2-v08 \
         gen-v2/validation/gen-v2-v13 gen-v3/validation/gen-v3-v06; do
  S+=(--scenario configs/suites/$s.toml)
done
REFS=$R/refs25w; mkdir -p $REFS
cp $H/gen-v1-validation/*.json $H/gen-v2-validation/*.json $H/gen-v3-validation/*.json $REFS/
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate "${S[@]}" --policy warmup:ppo \
  --policy warmup:cc=bbr:ppo --policy ppo --repeat 2 --reference $REFS --out $R/diagw \
  --json $R/diagw.json > $R/diagw.log 2>&1
echo "diag rc $? $(date -u +%T)"
for c in warmup:ppo warmup:cc=bbr:ppo; do python3 -m train.verdict $R/diagw.json $c ppo; done > $R/diagw-verdicts.txt 2>&1
cat $R/diagw-verdicts.txt
if [ -n "${DEADLINE:-}" ] && [ "$(date -u +%s)" -gt "$(date -u -d "$DEADLINE" +%s)" ]; then
  echo "gen-v4 yardstick not started: past $DEADLINE"; echo "DONE $(date -u +%T)"; exit 0
fi
mkdir -p $R/gen-v4-validation
for f in configs/suites/gen-v4/validation/*.toml; do
  n=$(basename $f .toml)
  if [ -n "${DEADLINE:-}" ] && [ "$(date -u +%s)" -gt "$(date -u -d "$DEADLINE" +%s)" ]; then
    echo "gen-v4 yardstick stopped before $n: past $DEADLINE"; break
  fi
  echo "sweep $n start $(date -u +%T)"
  flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --scenario $f --policy gd --policy bo \
    --sweep 1,2,4,8,12,16,24,32 --repeat 2 --out $R/gen-v4-sweep --json $R/gen-v4-validation/$n.json > $R/gen-v4-$n.log 2>&1
  echo "sweep $n rc $? $(date -u +%T)"
done
echo "DONE $(date -u +%T)"
