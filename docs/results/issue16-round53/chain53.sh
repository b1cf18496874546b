#!/usr/bin/env bash
# Round 53: K52c's rules 3-6 as committed in issue16-round52/README.md (rules 1-2 were read or
# carried in round 52). bbr3 with rule 16's A/A scenarios reported, not judged; mid4 and named4
# judged over all their scenarios; then gen-v13's test set once, beside ppo (rule 1 and, as for
# K52, rule 2 over the scenarios that are not A/A by replay; all eight are reported too).
#   WT=/work/wt/r53 R=/work/runs/r53 K=ppo:policy/weights/candidates/round52c.pt T=k52c- \
#     bash docs/results/issue16-round53/chain53.sh
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}; K=${K:?candidate}; T=${T:?tag}
D51=$WT/docs/results/issue16-round51; E=$WT/docs/results/issue16-round49/eval49.sh
export WT R PYTHONPATH=$WT
mkdir -p "$R"
cd "$WT" || exit 2
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__"
v() { python3 -m train.verdict --min-ustar 10 "$@" | tee -a "$R/verdicts.txt"; return "${PIPESTATUS[0]}"; }
aa() {  # BLOCK: the scenarios where the candidate's logs replay as the pair's (rule 16)
  local x n; x=$(python3 "$D51/aa51.py" "$1" "${K//[:\/]/-}"); n=$(printf '%s\n' "$x" | grep -c .)
  echo "$(basename "$1") A/A by replay: ${x//$'\n'/ } ($n)" >> "$R/verdicts.txt"
  printf '%s' "$x"
}
for b in bbr3 mid4 named4; do
  if ! CAND=$K TAG=$T bash "$E" "$b"; then echo "CHAIN STOPPED at $b (run) $(date -u +%T)"; exit 1; fi
  x=$(aa "$R/$T$b"); args=(--noninferior 0.05)
  [ "$b" = mid4 ] && args+=(--min-tolerance 0.07)
  # shellcheck disable=SC2086
  [ "$b" = bbr3 ] && args+=(${x:+--exclude $x})
  echo "== $b $(date -u +%T)" >> "$R/verdicts.txt"
  if ! v "${args[@]}" "$R/$T$b.json" "$K" ppo; then echo "CHAIN STOPPED at $b $(date -u +%T)"; exit 1; fi
done
echo "CANDIDATE PASSED VALIDATION $(date -u +%T)"
n=${T}test
echo "$n start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --suite gen-v13 --set test \
  --reference docs/results/gen-v13-test --policy "$K" --policy ppo --repeat 3 \
  --out "$R/$n" --json "$R/$n.json" > "$R/$n.log" 2>&1
echo "$n rc $? $(date -u +%T)"
x=$(aa "$R/$n/gen-v13-test")
echo "== test (rule 1 non-inferiority over non-A/A, rule 2 min) $(date -u +%T)" >> "$R/verdicts.txt"
# shellcheck disable=SC2086
if v --noninferior 0.05 "$R/$n.json" "$K" ppo ${x:+--exclude $x}; then
  echo "K52c PASSES THE TEST SET $(date -u +%T)"
else
  echo "K52c FAILS THE TEST SET $(date -u +%T)"; v "$R/$n.json" "$K" ppo > /dev/null; exit 1
fi
echo "== test, all scenarios (reported, not judged)" >> "$R/verdicts.txt"
v "$R/$n.json" "$K" ppo > /dev/null
