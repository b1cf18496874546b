#!/usr/bin/env bash
# Round 53: K52c's three members trained from scratch side by side on this 2-core machine
# (issue #16's "training a shippable policy from scratch stays <= 30 min"), then bundled as
# K52c is (its record's rule and wrappers, `train.ship.ship_from_record`) and compared with the stored members. Nothing else runs.
# REC names another record over the same three members (round 56: K55's round55.json).
#   WT=/work/wt/r53s R=/work/runs/scratch53 [REC=...json] bash docs/results/issue16-round53/scratch53.sh
set -uo pipefail
WT=${WT:?frozen worktree}; R=${R:?run directory}
REC=${REC:-policy/weights/candidates/round52c.json}
cd "$WT" && export PYTHONPATH=$WT && mkdir -p "$R"
python3 -c "import xfer; assert xfer.__file__.startswith('$WT'), xfer.__file__"
t0=$(date +%s); echo "start $(date -u +%T)"
for job in hold:2 onoff:4 hold-kick22:3; do
  cfg=${job%:*} seed=${job#*:}
  ( s=$(date +%s); python3 -m xfer.cli train "configs/train/$cfg.toml" --seed "$seed" \
      --out "$R/$cfg-s$seed" > "$R/$cfg-s$seed.log" 2>&1
    echo "$cfg-s$seed rc $? $(( $(date +%s) - s )) s" ) &
done
wait
echo "all three done: $(( $(date +%s) - t0 )) s wall $(date -u +%T)"
python3 - "$R" "$REC" <<'PY'
import json, sys
from pathlib import Path
import torch
from train.ship import ship_from_record
R = Path(sys.argv[1])
record = Path(sys.argv[2])
rec = json.loads(record.read_text())["shipped"]
new = [R / "hold-s2/policy.pt", R / "onoff-s4/policy.pt", R / "hold-kick22-s3/policy.pt"]
for old, mine in zip(rec["members"], new):
    a, b = torch.load(old, weights_only=False), torch.load(mine, weights_only=False)
    sa, sb = a.get("state_dict", a), b.get("state_dict", b)
    same = sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa
                                          if isinstance(sa[k], torch.Tensor))
    print(f"{mine.parent.name}: weights {'identical to' if same else 'differ from'} {old}")
ship_from_record(record, R / "bundle.pt", "round 53 from scratch", members=new)
print("bundle", R / "bundle.pt")
PY
echo "end $(date -u +%T)"
