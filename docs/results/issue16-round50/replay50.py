"""Replay a controller on recorded ``--json-stream`` logs (it is deterministic): its counts per MI,
``P`` where the ledger started a probe in that decision, ``k`` where it kept one, ``p``
elsewhere; how many counts differ from the log (0: the replay is the run's decisions). The
drain MIs at a run's end (the controller is not asked there) are left out.

Usage, from the repository root:
    PYTHONPATH=. python3 docs/results/issue16-round50/replay50.py SPEC LOG.jsonl...
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
        inner = getattr(c, "inner", c)  # a wrapper (``shed:``) around ppo: ppo's ledger
        out, differ = [], 0
        for i, r in enumerate(recs):
            led = getattr(inner, "ledger", None)
            before = (led.probes, led.kept) if led is not None else (0, 0)
            t = c.decide(r)
            after = (led.probes, led.kept) if led is not None else (0, 0)
            mark = "P" if after[0] > before[0] else "k" if after[1] > before[1] else "p"
            differ += i + 1 < len(recs) and recs[i + 1].streams != t
            out.append(mark + str(t))
        led = getattr(inner, "ledger", None)
        probes = f"probes {led.probes} kept {led.kept}" if led is not None else "no ledger"
        print(Path(f).parts[-4], Path(f).name, "differ", differ, probes, " ".join(out))
