"""Round 54: what the inner policy asks right after a failed probe, with the probe's MIs in
its history (as E ran) and without them (the shipped bundle fed the same MIs minus the
probe's two). Both are exact: each controller is deterministic and is fed only MIs that were
measured before the decision in question, so no counterfactual MI is invented. The question
is whether hiding a probe's MIs would have kept the inner policy at the count it left.

Usage, from the repository root:
    PYTHONPATH=. python3 docs/results/issue16-round54/aftermath54.py CAND_SPEC BASE_SPEC LOG.jsonl...
"""

import sys
from pathlib import Path

from policy.base import ControllerConfig, make_controller
from policy.signals import SignalVector
from train.replay import records


def run(spec: str, recs: list[SignalVector]) -> list[int]:
    """``spec``'s count after each MI of ``recs``, closed-loop (as ``train.replay.differs``)."""
    c = make_controller(spec, ControllerConfig(max_streams=64))
    return [c.decide(r) for r in recs]


if __name__ == "__main__":
    cand, base = sys.argv[1], sys.argv[2]
    tally = {"below": 0, "same": 0, "above": 0}
    hidden = dict(tally)
    for f in map(Path, sys.argv[3:]):
        recs = records(f, steady=True)  # the drain MIs at a run's end: no controller decides
        c = make_controller(cand, ControllerConfig(max_streams=64))
        led = c.ledger  # type: ignore[attr-defined]
        asked, started = [], []
        for r in recs:
            before = led.probes
            asked.append(c.decide(r))
            started.append(led.probes > before)
        for i, src in enumerate(r.streams for r in recs):
            # a probe asked at decision i runs MIs i+1 (join) and i+2 (entered); decision i+2
            # keeps it or returns; MI i+3 is the first back at the count it left
            if not started[i] or i + 3 >= len(recs) or recs[i + 3].streams != src:
                continue
            after_full = asked[i + 3]
            after_hidden = run(base, recs[: i + 1] + [recs[i + 3]])[-1]
            for t, n in ((tally, after_full), (hidden, after_hidden)):
                t["below" if n < src else "same" if n == src else "above"] += 1
            print(
                f"{f.parts[-4]} {f.name} MI {i + 1}: {src} -> {recs[i + 1].streams}, back; "
                f"next ask with the probe in history {after_full}, hidden {after_hidden}"
            )
    print("with the probe's MIs in history:", tally)
    print("with them hidden:              ", hidden)
