"""Replay a controller on recorded ``--json-stream`` logs (it is deterministic): its counts per MI,
``K`` where the band was open and ``p`` where it was not, how many counts differ from the log,
and the band judge's verdicts (round 48's replay48.py plus the judge's paid/unpaid adds). The
drain MIs at a run's end (the controller is not asked there) are left out.

Usage, from the repository root:
    PYTHONPATH=. python3 docs/results/issue16-round49/replay49.py SPEC LOG.jsonl...
"""

import json
import sys
from pathlib import Path

from policy.base import ControllerConfig, make_controller
from train.replay import records

if __name__ == "__main__":
    spec = sys.argv[1]
    for f in sys.argv[2:]:
        lines = [json.loads(x) for x in Path(f).read_text().splitlines() if x.strip()]
        drain = [d.get("drain", False) for d in lines if d.get("event") == "interval"]
        recs = records(Path(f))
        assert len(recs) == len(drain), f
        recs = [r for r, d in zip(recs, drain, strict=True) if not d]
        c = make_controller(spec, ControllerConfig(max_streams=64))
        out, differ, paid, unpaid, judges = [], 0, 0, 0, set()
        for i, r in enumerate(recs):
            t = c.decide(r)
            band = getattr(c, "band", None)
            inside = band is not None and band.config.applies(r.min_rtt_ms, r.cc, band.loss())
            differ += i + 1 < len(recs) and recs[i + 1].streams != t
            out.append(("K" if inside else "p") + str(t))
            j = getattr(c, "judge", None)
            if j is not None:
                judges.add(j)
        for j in judges:
            paid, unpaid = paid + j.paid, unpaid + j.unpaid
        print(Path(f).parts[-4], Path(f).name, "differ", differ, f"paid {paid} unpaid {unpaid}",
              " ".join(out))  # fmt: skip
