#!/usr/bin/env bash
# Round 62: the rules README.md here declares before any run. N (the shipped M with the band's
# upper edge at 110 ms) beside M (`ppo`): the hand-written scenario's yardstick first (before any
# policy of ours runs there), then long62n (validation, 3 runs), then gen-v19's test set once
# (3 runs, after its sweep has stored all 8 yardsticks). named4, mid4, bbr3, fig1 and fig3 are
# M's by construction (their paths' minimum RTT is at most 60 ms, where N's band is M's) and by
# closed-loop replay (rule 17), and are not run. Every verdict --min-ustar 10 --as-base (rule 19),
# each block one invocation under the testbed lock from a frozen worktree. A fail stops it.
#   WT=/work/wt/r62 R=/work/runs/r62 MAIN=/work/main bash docs/results/issue16-round62/chain62.sh
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}; MAIN=${MAIN:?the checkout gen-v19 is swept into}
H=${H:-ppo:policy/weights/candidates/round62n.pt}
export WT R
mkdir -p "$R"
cd "$WT" || exit 2
export PYTHONPATH=$WT
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__" || exit 2
# shellcheck source=../../../scripts/chain-lib.sh
source scripts/chain-lib.sh
Y=$MAIN/docs/results/situations-long-bbr
S=$MAIN/docs/results/gen-v19-test

# 0. the yardstick of the hand-written validation scenario (U*, GD, BO), before any policy of ours
hand=hand-bbr-onoff-shallow-80ms
if [ ! -f "$Y/$hand.json" ]; then
  log "== yardstick $hand start"
  mkdir -p "$Y"
  flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --scenario "configs/situations/$hand.toml" \
    --policy gd --sweep 1,2,4,8,16,32,48 --repeat 1 --out "$R/sweep-$hand" \
    --json "$Y/$hand.json.tmp" > "$R/sweep-$hand.log" 2>&1 || stop "yardstick $hand"
  mv "$Y/$hand.json.tmp" "$Y/$hand.json"
  log "== yardstick $hand done"
fi

# 1. long62 (validation, may choose): rule 18's form and a paired difference > 0
block long62n 3 "--scenario-floor 0.05 --clear-loss 0.05" --scenario-file configs/sets/long-bbr62.txt \
  --reference docs/results/gen-v1-validation --reference docs/results/gen-v2-validation \
  --reference docs/results/gen-v4-validation --reference "$Y" || stop "long62n (verdict or run)"
d=$(sed -n 's/.*paired \([-+][0-9.]*\) +-.*/\1/p' "$R/verdicts.txt" | tail -1)
python3 -c "import sys; sys.exit(0 if float('$d') > 0 else 1)" || stop "long62n (paired $d <= 0)"
log "== long62n passed (paired $d)"
log "$H PASSED VALIDATION"

# 2. test, once: gen-v19's test set, 3 runs, when its sweep has stored all 8 yardsticks
while [ "$(ls "$S"/gen-v19-t0?.json 2>/dev/null | wc -l)" -lt 8 ]; do sleep 30; done
if block test62n 3 "--noninferior 0.05 --clear-loss 0.05" --suite gen-v19 --set test \
  --reference "$S"; then
  log "$H PASSES THE TEST SET"
else
  log "$H FAILS THE TEST SET"; exit 1
fi
