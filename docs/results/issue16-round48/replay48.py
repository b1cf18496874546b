"""Replay a controller on recorded ``--json-stream`` logs (it is deterministic): its counts per MI,
``K`` where the band was open and ``p`` where it was not, and how many counts differ from the log.

Usage, from the repository root:
    PYTHONPATH=. python3 docs/results/issue16-round48/replay48.py SPEC LOG.jsonl...
"""

import json
import sys
from pathlib import Path

from policy.base import ControllerConfig, make_controller
from policy.signals import SignalVector


def records(path: str) -> list[dict]:
    """The interval records of one log."""
    with Path(path).open() as f:
        return [r for r in map(json.loads, f) if r.get("event") == "interval"]


def signals(r: dict) -> SignalVector:
    """The signal vector one interval record carries."""
    keys = SignalVector.__dataclass_fields__.keys()
    return SignalVector(**{k: r[k] for k in keys if k in r and k != "paths"})


if __name__ == "__main__":
    spec = sys.argv[1]
    for f in sys.argv[2:]:
        recs = records(f)
        c = make_controller(spec, ControllerConfig(max_streams=64))
        out, differ = [], 0
        for i, r in enumerate(recs):
            t = c.decide(signals(r))
            band = getattr(c, "band", None)
            inside = band is not None and band.config.applies(
                r["min_rtt_ms"], r.get("cc"), band.loss()
            )
            differ += i + 1 < len(recs) and recs[i + 1]["streams"] != t
            out.append(("K" if inside else "p") + str(t))
        print(Path(f).parts[-4], Path(f).name, "differ", differ, " ".join(out))
