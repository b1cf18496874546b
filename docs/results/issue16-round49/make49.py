"""Round 49: build K49 (``policy/weights/candidates/round49.pt``): K48b's bundle and rules with
the chosen band49 seed in K3's place. Run from the repository root:

    python3 docs/results/issue16-round49/make49.py policy/weights/candidates/band49-sN.pt
"""

import json
import sys
from pathlib import Path

from policy.band import BandConfig
from policy.ledger import LedgerConfig
from policy.warmup import WarmupConfig
from train.ship import ship_ensemble

rec = json.loads(Path("policy/weights/candidates/round48b.json").read_text())["shipped"]
members = [Path(m) for m in rec["members"][:-1]] + [Path(sys.argv[1])]
out = ship_ensemble(
    members,
    Path("policy/weights/candidates/round49.pt"),
    note=(
        "Round 49 candidate (not shipped unless its rules pass): round 48b's bundle (the shipped "
        f"pair; the band 20-60 ms, not our BBR, median loss of 5 MIs >= 1 %, fresh=1) with "
        f"{sys.argv[1]} (configs/train/band49.toml) deciding inside the band in place of "
        "hold-kick22-s3. docs/results/issue16-round49/."
    ),
    warmup=WarmupConfig.from_dict(rec["warmup"]),
    ledger=LedgerConfig.from_dict(rec["ledger"]),
    band=BandConfig.from_dict(rec["band"]),
)
print(json.dumps(out["shipped"]["members"]), json.dumps(out["shipped"]["band"]))
