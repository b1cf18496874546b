#!/usr/bin/env bash
# Round 24 choice (README rule 1): J24s and J24k, 2 runs, on hand-bbr-shared-1g and gen-v2-v10,
# logs kept, from the frozen worktree /work/wt/eval24.
set -uo pipefail
WT=/work/wt/eval24; R=${R:-/work/runs/r24}; H=$WT/docs/results; C=$WT/policy/weights/candidates
J24S="judge:ppo"; J24K="judge:ppo:$C/hold-kick22-s3.pt"
L="flock /tmp/xfer-netns.lock"
export PYTHONPATH=$WT
mkdir -p $R; cd $WT
python3 -c "import xfer,sys; assert xfer.__file__.startswith('$WT'), xfer.__file__"
echo "diag start $(date -u +%T)"
$L python3 -m xfer.cli evaluate --scenario configs/suites/gen-v1/validation/hand-bbr-shared-1g.toml \
   --policy "$J24S" --policy "$J24K" --repeat 2 \
   --reference $H/gen-v1-validation --out $R/diag-bbr --json $R/diag-bbr.json > $R/diag-bbr.log 2>&1
echo "bbr rc $? $(date -u +%T)"
$L python3 -m xfer.cli evaluate --scenario configs/suites/gen-v2/validation/gen-v2-v10.toml \
   --policy "$J24S" --policy "$J24K" --repeat 2 \
   --reference $H/gen-v2-validation --out $R/diag-v10 --json $R/diag-v10.json > $R/diag-v10.log 2>&1
echo "v10 rc $? $(date -u +%T)"
echo "DONE $(date -u +%T)"
