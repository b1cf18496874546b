#!/usr/bin/env bash
# Round 20 measurement M20 (decides nothing by itself): what adding streams costs beside BBR
# flows on the testbed, per MI. Schedules of fixed steps (+5 every 6 MIs, +1 every 4, a +10
# jump and a -10 drop) and GD, 2 runs each, on hand-bbr-shared-1g, gen-v3-v04 and gen-v3-v08.
# From the frozen worktree /work/wt/eval20; each evaluate takes the testbed lock, so it
# interleaves with chain20.sh between its steps.
set -uo pipefail
WT=/work/wt/eval20; R=/work/runs/r20/m20; H=$WT/docs/results
export PYTHONPATH=$WT
cd $WT
mkdir -p $R
L="flock /tmp/xfer-netns.lock"
P="--policy schedule:1,1,1,1,1,1,6,6,6,6,6,6,11,11,11,11,11,11,16,16,16,16,16,16,21,21,21,21,21,21 --policy schedule:1,1,1,1,2,2,2,2,3,3,3,3,4,4,4,4,5,5,5,5,6,6,6,6,7,7,7,7,8,8,8,8 --policy schedule:2,2,2,2,2,2,2,2,2,2,12,12,12,12,12,12,12,12,12,12,2,2,2,2,2,2,2,2,2,2 --policy gd"
echo "hand start $(date -u +%T)"
$L python3 -m xfer.cli evaluate --scenario configs/suites/gen-v1/validation/hand-bbr-shared-1g.toml $P \
   --repeat 2 --reference $H/gen-v1-validation --out $R/hand --json $R/hand.json > $R/hand.log 2>&1
echo "hand rc $? $(date -u +%T)"
$L python3 -m xfer.cli evaluate --scenario configs/suites/gen-v3/validation/gen-v3-v04.toml \
   --scenario configs/suites/gen-v3/validation/gen-v3-v08.toml $P \
   --repeat 2 --reference $H/gen-v3-validation --out $R/v3 --json $R/v3.json > $R/v3.log 2>&1
echo "v3 rc $? $(date -u +%T)"
echo "DONE $(date -u +%T)"
