"""Round 38: what a policy spec would have asked, MI by MI, on the shipped policy's own runs.

Each run's logged signal vectors (``logs/ppo/r*-t1.jsonl`` under every scenario of RUN_DIR)
are fed to each SPEC in turn; before each MI the spec's target is set to the count that ran
in it, so each decision is the spec's answer to the history the shipped policy actually made
(one step, not a closed loop: it says which way a filter pushes, not where it would settle).
Printed per scenario: the share of MIs each spec asks to add (+1/+5) and to retreat (-1/-5),
over every run. ``noloss`` and ``nortt`` are the shipped policy shown no loss, or no queueing
(RTT ratio 1, gradient 0), as yardsticks of what each signal does.
python3 counterfactual38.py RUN_DIR SPEC [SPEC ...]"""

import dataclasses
import json
import sys
from pathlib import Path

from policy.base import ControllerConfig, make_controller
from policy.signals import SignalVector

FIELDS = {f.name for f in dataclasses.fields(SignalVector)} - {"paths"}
EDITS = {
    "noloss": lambda s: dataclasses.replace(s, loss_rate=0.0, retrans_segs=0),
    "nortt": lambda s: dataclasses.replace(s, rtt_ratio=1.0, rtt_gradient=0.0),
}


def records(path: Path) -> list[SignalVector]:
    out = []
    for line in path.open():
        r = json.loads(line)
        if r.get("event") == "interval":
            out.append(SignalVector(**{k: v for k, v in r.items() if k in FIELDS}))
    return out


def asks(spec: str, rows: list[SignalVector]) -> list[int]:
    edit = EDITS.get(spec, lambda s: s)
    c = make_controller("ppo" if spec in EDITS else spec, ControllerConfig(max_streams=64))
    c.initial()
    out = []
    for s in rows:
        c.target = s.streams  # type: ignore[attr-defined]
        out.append(c.decide(edit(s)) - s.streams)
    return out


def main() -> None:
    run_dir, specs = Path(sys.argv[1]), sys.argv[2:]
    print(f"{'scenario':22s} " + " ".join(f"{s[:22]:>22s}" for s in specs))
    print(f"{'':22s} " + " ".join(f"{'add  retreat':>22s}" for _ in specs))
    for scen in sorted(p for p in run_dir.glob("*/*") if (p / "logs" / "ppo").is_dir()):
        runs = [records(f) for f in sorted((scen / "logs" / "ppo").glob("r*-t1.jsonl"))]
        cells = []
        for spec in specs:
            a = [x for rows in runs for x in asks(spec, rows)]
            add = sum(x > 0 for x in a) / len(a)
            ret = sum(x < 0 for x in a) / len(a)
            cells.append(f"{add:9.2f} {ret:7.2f}     ")
        print(f"{scen.name:22s} " + " ".join(cells))


if __name__ == "__main__":
    main()
