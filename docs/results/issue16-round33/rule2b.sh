#!/usr/bin/env bash
# Round 33 rule 2' (README): chain32.sh's rule-2 lines alone, for QSPEC, from the frozen
# worktree $WT: round 28's ten scenarios where the warm-up acts, 3 runs, margin 0.05, with the
# split by kind (the first block lists the three where 8+ streams are best).
set -uo pipefail
WT=${WT:-/work/wt/eval33b}; R=${R:-/work/runs/r33}; H=$WT/docs/results
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
X=$QSPEC; echo "Q = $X"
REFS=$R/refs33b; mkdir -p $REFS
cp $H/gen-v3-validation/*.json $H/gen-v4-validation/*.json $H/gen-v6-validation/*.json $REFS/
S=()
for s in gen-v3/validation/gen-v3-v06 gen-v4/validation/gen-v4-v01 gen-v4/validation/gen-v4-v02 \
         gen-v4/validation/gen-v4-v03; do
  S+=(--scenario configs/suites/$s.toml)
done
for f in configs/suites/gen-v6/validation/*.toml; do S+=(--scenario $f); done
echo "rule 2' start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate "${S[@]}" --policy "$X" --policy ppo \
   --repeat 3 --reference $REFS --out $R/val33b --json $R/val33b.json > $R/val33b.log 2>&1
echo "rule 2' evaluate rc $? $(date -u +%T)"
python3 -m train.verdict $R/val33b.json "$X" ppo --min-ustar 10 --margin 0.05 > $R/rule33b-val.txt 2>&1
rc=$?; cat $R/rule33b-val.txt; echo "rule 2' verdict rc $rc"
for kind in "8+:gen-v4-v01 gen-v4-v02 gen-v6-v02 gen-v6-v03 gen-v6-v04 gen-v6-v05 gen-v6-v06" \
            "rest:gen-v3-v06 gen-v4-v03 gen-v6-v01"; do
  echo "kind ${kind%%:*}"
  python3 -m train.verdict $R/val33b.json "$X" ppo --min-ustar 10 --margin 0.05 --exclude ${kind#*:} 2>&1 | tail -4
done > $R/rule33b-val-kinds.txt; cat $R/rule33b-val-kinds.txt
echo "rule 2' done $(date -u +%T)"
