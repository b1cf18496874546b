"""Round 54: what the inner policy asks right after a failed probe, with the probe's MIs in
its history (as E ran) and without them (the shipped bundle fed the same MIs minus the
probe's two). Both are exact: each controller is deterministic and is fed only MIs that were
measured before the decision in question, so no counterfactual MI is invented. The question
is whether hiding a probe's MIs would have kept the inner policy at the count it left.

Usage, from the repository root:
    PYTHONPATH=. python3 docs/results/issue16-round54/aftermath54.py CAND_SPEC BASE_SPEC LOG.jsonl...
"""

import json
import sys
from pathlib import Path

from policy.base import ControllerConfig, make_controller
from train.replay import records


def steady(f: Path) -> list:
    lines = [json.loads(x) for x in f.read_text().splitlines() if x.strip()]
    drain = [d.get("drain", False) for d in lines if d.get("event") == "interval"]
    return [r for r, d in zip(records(f), drain, strict=True) if not d]


def run(spec: str, recs: list) -> tuple[list[int], object]:
    c = make_controller(spec, ControllerConfig(max_streams=64))
    return [c.decide(r) for r in recs], c


if __name__ == "__main__":
    cand, base = sys.argv[1], sys.argv[2]
    tally = {"below": 0, "same": 0, "above": 0}
    hidden = dict(tally)
    for f in map(Path, sys.argv[3:]):
        recs = steady(f)
        c = make_controller(cand, ControllerConfig(max_streams=64))
        led = c.ledger  # type: ignore[attr-defined]
        for i, r in enumerate(recs):
            before = (led.probes, led.kept)
            c.decide(r)
            started = led.probes > before[0]
            # a probe asked at decision i runs MIs i+1 (join) and i+2 (entered); decision i+2
            # keeps it or returns; MI i+3 is the first back at the count it left
            if not started or i + 3 >= len(recs) or recs[i + 3].streams != recs[i].streams:
                continue
            src = recs[i].streams
            after_full = run(cand, recs[: i + 4])[0][-1]
            after_hidden = run(base, recs[: i + 1] + [recs[i + 3]])[0][-1]
            for t, n in ((tally, after_full), (hidden, after_hidden)):
                t["below" if n < src else "same" if n == src else "above"] += 1
            print(
                f"{f.parts[-4]} {f.name} MI {i + 1}: {src} -> {recs[i + 1].streams}, back; "
                f"next ask with the probe in history {after_full}, hidden {after_hidden}"
            )
    print("with the probe's MIs in history:", tally)
    print("with them hidden:              ", hidden)
