"""What a controller would have asked, MI by MI, on another policy's testbed runs.

    python3 -m train.replay RUN_DIR SPEC [SPEC ...] [--policy NAME] [--carried]

Each run's logged signal vectors (``RUN_DIR/[SUITE-SET/]SCENARIO/logs/NAME/r*-t1.jsonl``,
NAME the policy that ran, default ``ppo``) are fed to each SPEC in turn; before each MI the spec's
target is set to the count that ran in it, so each decision is the spec's answer to the
history that policy actually made. One step, not a closed loop: it says which way a filter
or a wrapper pushes, in seconds and without testbed time, not where it would settle. Printed
per scenario and spec: the share of MIs it asks to add and to retreat, over every run.

Besides controller specs, :data:`EDITS` names the shipped policy shown an edited signal
(``noloss``: loss 0; ``nortt``: RTT ratio 1 and gradient 0), as yardsticks of what each
signal does. Round 38 (``docs/results/issue16-round38/``): on gen-v7 the shipped policy asks
to retreat in 27-52 % of the MIs, 1-9 % shown no loss and 11-28 % shown no queueing.
A spec must have a settable ``target`` (``ppo``, ``ensemble``, the wrappers around them).

``--carried`` replays closed-loop instead (:func:`carried`, any controller): per scenario and
spec, how many runs the spec would have made decision for decision (every transfer of the run,
``r1-t1``, ``r1-t2``, ..., with 0 differing decisions: ``docs/evaluation.md`` rules 16, 17 and
19), and the differing decisions of the rest. NAME is the directory the policy's logs are in
(``ppo:policy/weights/x.pt`` logs to ``ppo-policy-weights-x.pt``).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path

from lab.runlog import read_intervals
from policy.base import ControllerConfig, make_controller
from policy.signals import SignalVector

FIELDS = frozenset(f.name for f in dataclasses.fields(SignalVector)) - {"paths"}
EDITS: dict[str, Callable[[SignalVector], SignalVector]] = {
    "noloss": lambda s: dataclasses.replace(s, loss_rate=0.0, retrans_segs=0),
    "nortt": lambda s: dataclasses.replace(s, rtt_ratio=1.0, rtt_gradient=0.0),
}


def records(path: Path, steady: bool = False) -> list[SignalVector]:
    """The signal vectors of one run's jsonl log (the ``interval`` events); ``steady``: without
    the drain MIs at the run's end, which no controller decides."""
    return [
        SignalVector(**{k: v for k, v in r.items() if k in FIELDS})
        for r in read_intervals(path)
        if not (steady and r.get("drain") is True)
    ]


def asks(spec: str, rows: list[SignalVector], max_streams: int = 64) -> list[int]:
    """The change of the count ``spec`` asks after each MI of ``rows`` (its target set to
    the count that ran in that MI first)."""
    edit = EDITS.get(spec, lambda s: s)
    c = make_controller("ppo" if spec in EDITS else spec, ControllerConfig(max_streams=max_streams))
    if not hasattr(c, "target"):
        raise ValueError(f"{spec!r} has no target to set: replay needs ppo or a wrapper of it")
    c.initial()
    out = []
    for s in rows:
        c.target = s.streams
        out.append(c.decide(edit(s)) - s.streams)
    return out


def differs(spec: str, path: Path, max_streams: int = 64) -> tuple[list[int], int]:
    """Replay ``spec`` closed-loop on one run's log: its count after each MI that a controller
    decided (the drain MIs at a run's end, which none decides, left out), and how many of
    them differ from the count the log ran next. Controllers are deterministic, so 0 means
    ``spec`` would have made that run's every decision (round 49's replays; round 51 reads a
    scenario where a candidate's runs all replay under plain ``ppo`` as an A/A reading)."""
    sig = records(path, steady=True)
    c = make_controller(spec, ControllerConfig(max_streams=max_streams))
    c.initial()
    out = [c.decide(s) for s in sig]
    return out, sum(a != b.streams for a, b in zip(out, sig[1:], strict=False))


def shares(changes: list[int]) -> tuple[float, float]:
    """(share of adds, share of retreats)."""
    if not changes:
        return 0.0, 0.0
    return (
        sum(x > 0 for x in changes) / len(changes),
        sum(x < 0 for x in changes) / len(changes),
    )


def carried(spec: str, logs: Path) -> list[tuple[str, list[int]]]:
    """Per run in one policy's log directory (``r1``, ``r2``, ...): the differing decisions of
    each of its transfers replayed closed-loop under ``spec`` (:func:`differs`); a run whose
    list is all 0 is one ``spec`` would have made."""
    runs: dict[str, list[int]] = {}
    for f in sorted(logs.glob("r*-t*.jsonl")):
        runs.setdefault(f.name.split("-")[0], []).append(differs(spec, f)[1])
    return sorted(runs.items(), key=lambda kv: int(kv[0][1:]) if kv[0][1:].isdigit() else 0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m train.replay", description=__doc__.split("\n")[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("specs", nargs="+")
    ap.add_argument("--policy", default="ppo", help="the policy whose runs are replayed")
    ap.add_argument("--carried", action="store_true", help="closed loop: runs the spec would make")
    a = ap.parse_args(argv)
    scenarios = sorted(p.parent.parent for p in a.run_dir.glob(f"**/logs/{a.policy}"))
    if not scenarios:
        print(f"no runs of {a.policy!r} under {a.run_dir}", file=sys.stderr)
        return 2
    if a.carried:
        for scen in scenarios:
            for spec in a.specs:
                rs = carried(spec, scen / "logs" / a.policy)
                same = sum(1 for _, n in rs if not any(n))
                rest = " ".join(f"{r}:{'+'.join(map(str, n))}" for r, n in rs if any(n))
                print(f"{scen.name:26s} {spec} carried {same}/{len(rs)} {rest}".rstrip())
        return 0
    print(f"{'scenario':22s} " + " ".join(f"{s[-22:]:>22s}" for s in a.specs))
    print(f"{'':22s} " + " ".join(f"{'add retreat':>22s}" for _ in a.specs))
    for scen in scenarios:
        runs = [records(f) for f in sorted((scen / "logs" / a.policy).glob("r*-t1.jsonl"))]
        cells = []
        for spec in a.specs:
            add, ret = shares([x for rows in runs for x in asks(spec, rows)])
            cells.append(f"{add:14.2f} {ret:7.2f}")
        print(f"{scen.name[:22]:22s} " + " ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
