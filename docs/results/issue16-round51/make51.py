"""Round 51: build the candidate from the shipped bundle (``policy/weights/default.json``): round
50c's young-transfer probe started only from ``probe_min`` streams, and the shed carried in the
bundle (so ``ppo`` applies it and the candidate ships as one file). Run from the repository root:

    python3 docs/results/issue16-round51/make51.py --probe-min 7 --out round51.pt
    python3 docs/results/issue16-round51/make51.py \
        --base policy/weights/candidates/round49b.json --out round51b.pt

``--base`` names the bundle record to start from; its judge and band (if any) are carried.
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
ap.add_argument("--probe-min", type=int, default=7, help="the lowest count a probe starts from")
ap.add_argument("--beta", type=float, default=0.1, help="the shed's share of n per retreat")
ap.add_argument("--out", default="round51.pt")
ap.add_argument("--base", default="policy/weights/default.json", help="the bundle to start from")
a = ap.parse_args()
rec = json.loads(Path(a.base).read_text())["shipped"]
ledger = replace(
    LedgerConfig.from_dict(rec["ledger"]),
    probe=4, probe_top=12, probe_rtt_ms=100.0, probe_min_rtt_ms=5.0, probe_within=30,
    probe_min=a.probe_min,
)  # fmt: skip
out = ship_ensemble(
    [Path(m) for m in rec["members"]],
    Path("policy/weights/candidates") / a.out,
    note=(
        f"Round 51 candidate (not shipped unless its rules pass): the bundle of {a.base} ("
        f"{rec['selection'][:400]}) with round 50c's "
        "probe (within the transfer's first 30 MIs, paths of 5-100 ms, a count that stood 4 MIs "
        f"while the pair held or retreated is doubled and kept if it reads better by the band) "
        f"started only from {a.probe_min}-12 streams, and a shed of beta={a.beta:g} (a retreat "
        "drops at least that share of the count). docs/results/issue16-round51/."
    ),
    rule=rec["rule"],
    warmup=WarmupConfig.from_dict(rec["warmup"]),
    ledger=ledger,
    shed=ShedConfig(beta=a.beta),
    judge=JudgeConfig.from_dict(rec["judge"]) if rec.get("judge") else None,
    band=BandConfig.from_dict(rec["band"]) if rec.get("band") else None,
)
print(json.dumps(out["shipped"]["members"]), json.dumps(out["shipped"]["ledger"]))
print(json.dumps(out["shipped"].get("shed")))
