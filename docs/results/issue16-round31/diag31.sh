#!/usr/bin/env bash
# Round 31 diagnostic D31 (README): chain31.sh rule 2 alone, after R failed rule 1.
# worktree $WT (candidates/ holds R's members).
# X is R's spec with $K standing for the worktree's candidates/ (set by the caller).
set -uo pipefail
WT=${WT:-/work/wt/eval31}; R=${R:-/work/runs/r31}; H=$WT/docs/results; K=$WT/policy/weights/candidates
export PYTHONPATH=$WT
cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
L="flock /tmp/xfer-netns.lock"
X="warmup:cc=bbr:ensemble:$K/$HOLD.pt+$K/$ONOFF.pt"
echo "R = $X"
done_() { echo "DONE $(date -u +%T)"; exit 0; }
REFS=$R/refs31v; mkdir -p $REFS
cp $H/gen-v3-validation/*.json $H/gen-v4-validation/*.json $H/gen-v6-validation/*.json $REFS/
S=()
for s in gen-v3/validation/gen-v3-v06 gen-v4/validation/gen-v4-v01 gen-v4/validation/gen-v4-v02 \
         gen-v4/validation/gen-v4-v03; do
  S+=(--scenario configs/suites/$s.toml)
done
for f in configs/suites/gen-v6/validation/*.toml; do S+=(--scenario $f); done
echo "rule 2 start $(date -u +%T)"
$L python3 -m xfer.cli evaluate "${S[@]}" --policy "$X" --policy ppo --repeat 3 \
   --reference $REFS --out $R/val31 --json $R/val31.json > $R/val31.log 2>&1
echo "rule 2 evaluate rc $? $(date -u +%T)"
python3 -m train.verdict $R/val31.json "$X" ppo --min-ustar 10 --margin 0.05 > $R/rule31-val.txt 2>&1
rc=$?; cat $R/rule31-val.txt; echo "rule 2 verdict rc $rc"
for kind in "many:gen-v4-v01 gen-v4-v02 gen-v6-v02 gen-v6-v03 gen-v6-v04 gen-v6-v05 gen-v6-v06" \
            "few:gen-v3-v06 gen-v4-v03 gen-v6-v01"; do  # diagnostic: each kind alone
  echo "kind ${kind%%:*} (best N >= 8 = many)"
  python3 -m train.verdict $R/val31.json "$X" ppo --min-ustar 10 --margin 0.05 --exclude ${kind#*:} 2>&1 | tail -4
done > $R/rule31-val-kinds.txt; cat $R/rule31-val-kinds.txt
echo "DONE $(date -u +%T)"
