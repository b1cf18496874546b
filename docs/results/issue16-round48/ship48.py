"""Round 48c rule 3: ship K48b (``policy/weights/candidates/round48b.pt``'s members and rules) as
``policy/weights/default.pt`` with the note given; run from the repository root only if the
rules passed.

Usage: python3 docs/results/issue16-round48/ship48.py "NOTE"
"""

import json
import sys
from pathlib import Path

from policy.band import BandConfig
from policy.ledger import LedgerConfig
from policy.warmup import WarmupConfig
from train.ship import ship_ensemble

rec = json.loads(Path("policy/weights/candidates/round48b.json").read_text())["shipped"]
out = ship_ensemble(
    [Path(m) for m in rec["members"]],
    Path("policy/weights/default.pt"),
    note=sys.argv[1],
    warmup=WarmupConfig.from_dict(rec["warmup"]),
    ledger=LedgerConfig.from_dict(rec["ledger"]),
    band=BandConfig.from_dict(rec["band"]),
)
print(json.dumps(out["shipped"]["band"]))
