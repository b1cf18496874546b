"""Round 49: build a candidate from K48b's bundle and rules (``round48b.json``): with a band49
seed in K3's place (K49), or with the band's member judged (``--judge-band``, K49b).
Run from the repository root:

    python3 docs/results/issue16-round49/make49.py --member policy/weights/candidates/band49-sN.pt
    python3 docs/results/issue16-round49/make49.py --judge-band --out round49b.pt
    python3 docs/results/issue16-round49/make49.py --judge-band --floor-share 0.7 --out round49c.pt
"""

import argparse
import json
from pathlib import Path

from policy.band import BandConfig
from policy.judge import JudgeConfig
from policy.ledger import LedgerConfig
from policy.warmup import WarmupConfig
from train.ship import ship_ensemble

ap = argparse.ArgumentParser()
ap.add_argument("--member", help="the band's member in K3's place")
ap.add_argument("--judge-band", action="store_true", help="judge the band's member (band=1)")
ap.add_argument("--floor-share", type=float, default=1.0, help="the judge's floor_share")
ap.add_argument("--out", default="round49.pt")
a = ap.parse_args()
rec = json.loads(Path("policy/weights/candidates/round48b.json").read_text())["shipped"]
members = [Path(m) for m in rec["members"]]
what = []
if a.member:
    members[-1] = Path(a.member)
    what.append(f"{a.member} (configs/train/band49.toml) deciding inside the band in K3's place")
if a.judge_band:
    what.append(
        "the band's member's adds judged while the band is open (meta judge band=1"
        f"{', floor_share=%g' % a.floor_share if a.floor_share != 1.0 else ''})"
    )
out = ship_ensemble(
    members,
    Path("policy/weights/candidates") / a.out,
    note=(
        "Round 49 candidate (not shipped unless its rules pass): round 48b's bundle (the shipped "
        "pair; hold-kick22-s3 in the band 20-60 ms, not our BBR, median loss of 5 MIs >= 1 %, "
        f"fresh=1) with {' and '.join(what)}. docs/results/issue16-round49/."
    ),
    warmup=WarmupConfig.from_dict(rec["warmup"]),
    ledger=LedgerConfig.from_dict(rec["ledger"]),
    band=BandConfig.from_dict(rec["band"]),
    judge=JudgeConfig(band=1, floor_share=a.floor_share) if a.judge_band else None,
)
print(json.dumps(out["shipped"]["members"]), json.dumps(out["shipped"].get("judge")))
