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

``--require-all`` (with ``--carried``): exit status 1 unless every spec makes every run,
0 if it does. That is evaluation rule 21's test: a failing block whose runs all replay as the
shipped policy (``ppo``) is the shipped policy's reading, and a chain goes on past it.

``--checkpoint FILE``: the file a ``ppo`` without a path loads in the specs (default: the
shipped ``policy/weights/default.pt``). A label such as ``ppo`` names today's shipped policy,
which is not always the one a stored block ran: :func:`pinned` finds the file that was, from
the ``checkpoints`` that ``summary.json`` records per policy (round 57; blocks before it have
no record, and their ``ppo`` is the policy shipped when they ran).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path

from lab.experiment import ROOT, file_sha256
from lab.runlog import read_intervals
from policy.base import ControllerConfig, make_controller
from policy.ppo import DEFAULT_CHECKPOINT
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


def asks(
    spec: str, rows: list[SignalVector], max_streams: int = 64, checkpoint: str = ""
) -> list[int]:
    """The change of the count ``spec`` asks after each MI of ``rows`` (its target set to
    the count that ran in that MI first; ``checkpoint`` as in :func:`differs`)."""
    edit = EDITS.get(spec, lambda s: s)
    cfg = ControllerConfig(max_streams=max_streams, checkpoint=checkpoint)
    c = make_controller("ppo" if spec in EDITS else spec, cfg)
    if not hasattr(c, "target"):
        raise ValueError(f"{spec!r} has no target to set: replay needs ppo or a wrapper of it")
    c.initial()
    out = []
    for s in rows:
        c.target = s.streams
        out.append(c.decide(edit(s)) - s.streams)
    return out


def pinned(recorded: dict[str, str], root: Path = ROOT) -> str:
    """The ``ControllerConfig.checkpoint`` under which a policy replays as it ran, from the
    files and sha256 it ran with (``summary.json``'s ``checkpoints``): empty when each file
    still holds those bytes; when the shipped file was replaced since, the file under
    ``policy/weights`` that holds the bytes it had then (a ship keeps the policy it replaces
    as ``candidates/NAME.pt``). ValueError when another file it ran has changed, or when no
    file holds the shipped bytes it ran."""
    shipped = DEFAULT_CHECKPOINT.resolve().relative_to(ROOT)
    changed: dict[Path, str] = {}
    for name, sha in recorded.items():
        p = Path(name) if Path(name).is_absolute() else root / name
        if not p.is_file() or file_sha256(p) != sha:
            changed[Path(name)] = sha
    if not changed:
        return ""
    other = sorted(str(n) for n in changed if n != shipped)
    if other:
        raise ValueError(f"{other[0]} is not the file the runs decided with (its bytes changed)")
    want = changed[shipped]
    for f in sorted((root / shipped.parent).rglob("*.pt")):
        if file_sha256(f) == want:
            return str(f)
    raise ValueError(
        f"the runs' {shipped} (sha256 {want[:12]}) was replaced and no file under "
        f"{shipped.parent} holds its bytes"
    )


def differs(
    spec: str, path: Path, max_streams: int = 64, checkpoint: str = ""
) -> tuple[list[int], int]:
    """Replay ``spec`` closed-loop on one run's log: its count after each MI that a controller
    decided (the drain MIs at a run's end, which none decides, left out), and how many of
    them differ from the count the log ran next. Controllers are deterministic, so 0 means
    ``spec`` would have made that run's every decision (round 49's replays; round 51 reads a
    scenario where a candidate's runs all replay under plain ``ppo`` as an A/A reading).
    ``checkpoint``: the file a ``ppo`` without a path loads (:func:`pinned`)."""
    sig = records(path, steady=True)
    c = make_controller(spec, ControllerConfig(max_streams=max_streams, checkpoint=checkpoint))
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


def carried(spec: str, logs: Path, checkpoint: str = "") -> list[tuple[str, list[int]]]:
    """Per run in one policy's log directory (``r1``, ``r2``, ...): the differing decisions of
    each of its transfers replayed closed-loop under ``spec`` (:func:`differs`, with
    ``checkpoint``); a run whose list is all 0 is one ``spec`` would have made."""
    runs: dict[str, list[int]] = {}
    for f in sorted(logs.glob("r*-t*.jsonl")):
        runs.setdefault(f.name.split("-")[0], []).append(differs(spec, f, checkpoint=checkpoint)[1])
    return sorted(runs.items(), key=lambda kv: int(kv[0][1:]) if kv[0][1:].isdigit() else 0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m train.replay", description=__doc__.split("\n")[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("specs", nargs="+")
    ap.add_argument("--policy", default="ppo", help="the policy whose runs are replayed")
    ap.add_argument("--carried", action="store_true", help="closed loop: runs the spec would make")
    ap.add_argument("--checkpoint", default="", metavar="FILE",
                    help="the file a ppo without a path loads (default: the shipped one)")  # fmt: skip
    ap.add_argument("--require-all", action="store_true",
                    help="with --carried: exit 1 unless every spec makes every run")  # fmt: skip
    a = ap.parse_args(argv)
    if a.require_all and not a.carried:
        ap.error("--require-all needs --carried")
    scenarios = sorted(p.parent.parent for p in a.run_dir.glob(f"**/logs/{a.policy}"))
    if not scenarios:
        print(f"no runs of {a.policy!r} under {a.run_dir}", file=sys.stderr)
        return 2
    if a.carried:
        whole = True
        for scen in scenarios:
            for spec in a.specs:
                rs = carried(spec, scen / "logs" / a.policy, a.checkpoint)
                same = sum(1 for _, n in rs if not any(n))
                whole = whole and same == len(rs) > 0
                rest = " ".join(f"{r}:{'+'.join(map(str, n))}" for r, n in rs if any(n))
                print(f"{scen.name:26s} {spec} carried {same}/{len(rs)} {rest}".rstrip())
        return 1 if a.require_all and not whole else 0
    print(f"{'scenario':22s} " + " ".join(f"{s[-22:]:>22s}" for s in a.specs))
    print(f"{'':22s} " + " ".join(f"{'add retreat':>22s}" for _ in a.specs))
    for scen in scenarios:
        runs = [records(f) for f in sorted((scen / "logs" / a.policy).glob("r*-t1.jsonl"))]
        cells = []
        for spec in a.specs:
            add, ret = shares(
                [x for rows in runs for x in asks(spec, rows, checkpoint=a.checkpoint)]
            )
            cells.append(f"{add:14.2f} {ret:7.2f}")
        print(f"{scen.name[:22]:22s} " + " ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
