"""Round 50: build a candidate from the shipped bundle (``policy/weights/default.json``) with the
ledger's probe switched on for a transfer's first MIs (a transfer that joins a busy link).
Run from the repository root:

    python3 docs/results/issue16-round50/make50.py --probe 4 --probe-top 12 --rtt 100 \
        --within 30 --out round50.pt
    python3 docs/results/issue16-round50/make50.py --min-rtt 5 --out round50c.pt
"""

import argparse
import json
from dataclasses import replace
from pathlib import Path

from policy.ledger import LedgerConfig
from policy.warmup import WarmupConfig
from train.ship import ship_ensemble

ap = argparse.ArgumentParser()
ap.add_argument("--probe", type=int, default=4, help="MIs a count stands before a probe")
ap.add_argument("--probe-top", type=int, default=12, help="the highest count a probe starts from")
ap.add_argument("--rtt", type=float, default=100.0, help="probe_rtt_ms: the probe's RTT gate")
ap.add_argument("--min-rtt", type=float, default=0.0, help="probe_min_rtt_ms: above a LAN")
ap.add_argument("--within", type=int, default=30, help="probe_within: the transfer's first MIs")
ap.add_argument("--out", default="round50.pt")
a = ap.parse_args()
rec = json.loads(Path("policy/weights/default.json").read_text())["shipped"]
members = [Path(m) for m in rec["members"]]
ledger = replace(
    LedgerConfig.from_dict(rec["ledger"]),
    probe=a.probe, probe_top=a.probe_top, probe_rtt_ms=a.rtt, probe_within=a.within,
    probe_min_rtt_ms=a.min_rtt,
)  # fmt: skip
out = ship_ensemble(
    members,
    Path("policy/weights/candidates") / a.out,
    note=(
        "Round 50 candidate (not shipped unless its rules pass): the shipped bundle (round 13's "
        "pair, warm-up rtts=16 cc=bbr, ledger seek=1 max_rtt_ms=20 noise=2) with the ledger's "
        f"probe on: within the transfer's first {a.within} MIs, on paths of at most {a.rtt:g} "
        f"ms (above {a.min_rtt:g} ms), a count of at most {a.probe_top} that stood {a.probe} "
        "MIs while the pair held or retreated is doubled for one entered MI and kept if it reads better by the band. "
        "docs/results/issue16-round50/."
    ),
    rule=rec["rule"],
    warmup=WarmupConfig.from_dict(rec["warmup"]),
    ledger=ledger,
)
print(json.dumps(out["shipped"]["members"]), json.dumps(out["shipped"]["ledger"]))
