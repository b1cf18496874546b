"""Round 52: K52 is round 51's K51 (``policy/weights/candidates/round51.json``: the shipped bundle,
the young-transfer probe from 7-12 streams, the shed of beta=0.1) with the shed only from counts
of at most ``--max-n``. Run from the repository root:

    python3 docs/results/issue16-round52/make52.py --max-n 30 --out round52.pt
    python3 docs/results/issue16-round52/make52.py --max-n 30 --min-loss 0.02 \
        --base policy/weights/candidates/round51b.json --out round52b.pt
    python3 docs/results/issue16-round52/make52.py --max-n 30 --min-loss 0.02 \
        --probe-max-loss 0.001 --base policy/weights/candidates/round51b.json --out round52c.pt

``--base`` names the bundle record to start from; its judge and band (if any) are carried, the
band's ``min_loss`` replaced by ``--min-loss`` if given.
"""

import argparse
import json
from dataclasses import replace
from pathlib import Path

from policy.band import BandConfig
from policy.judge import JudgeConfig
from policy.ledger import LedgerConfig
from policy.shed import ShedConfig
from policy.warmup import WarmupConfig
from train.ship import ship_ensemble

ap = argparse.ArgumentParser()
ap.add_argument("--max-n", type=int, default=30, help="the highest count the shed acts from")
ap.add_argument("--out", default="round52.pt")
ap.add_argument("--base", default="policy/weights/candidates/round51.json")
ap.add_argument("--min-loss", type=float, help="the band's min_loss (a base with a band only)")
ap.add_argument("--probe-max-loss", type=float, help="the ledger's probe_max_loss (default: kept)")
a = ap.parse_args()
rec = json.loads(Path(a.base).read_text())["shipped"]
shed = replace(ShedConfig.from_dict(rec["shed"]), max_n=a.max_n)
band = BandConfig.from_dict(rec["band"]) if rec.get("band") else None
if a.min_loss is not None:
    assert band is not None, f"{a.base} has no band"
    band = replace(band, min_loss=a.min_loss)
ledger = LedgerConfig.from_dict(rec["ledger"])
if a.probe_max_loss is not None:
    ledger = replace(ledger, probe_max_loss=a.probe_max_loss)
extra = (
    "" if band is None else f"; its band and judge carried, the band's min_loss {band.min_loss:g}"
)
out = ship_ensemble(
    [Path(m) for m in rec["members"]],
    Path("policy/weights/candidates") / a.out,
    note=(
        f"Round 52 candidate (not shipped unless its rules pass): {a.base} (round 51: the "
        "shipped bundle, the young-transfer probe from 7-12 streams, the shed of beta=0.1) with "
        f"the shed only from counts of at most {a.max_n}{extra}"
        + (
            ""
            if a.probe_max_loss is None
            else f"; the probe only at a 5-MI median loss of at most {a.probe_max_loss:g}"
        )
        + ". docs/results/issue16-round52/."
    ),
    rule=rec["rule"],
    warmup=WarmupConfig.from_dict(rec["warmup"]),
    ledger=ledger,
    shed=shed,
    judge=JudgeConfig.from_dict(rec["judge"]) if rec.get("judge") else None,
    band=band,
)
print(json.dumps(out["shipped"]["ledger"]))
print(json.dumps(out["shipped"]["shed"]), json.dumps(out["shipped"]["band"]))
