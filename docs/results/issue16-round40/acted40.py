"""In which runs did a judge act at all? (round 40)

    python3 docs/results/issue16-round40/acted40.py SET_DIR JUDGE_DIR_NAME [STEP MAX_RTT_MS]

SET_DIR is an ``xfer evaluate --out`` set directory; JUDGE_DIR_NAME the judge's log directory
under each scenario's ``logs/`` (``judge-per_step-1-...-ppo``). ``judge`` changes nothing
until an add of STEP (4) or more streams on a path it judges (minimum RTT <= MAX_RTT_MS, 20;
0: every path): its join hold, verdict, floor and cooldown all follow such an add, and it
never blocks an add outside a cooldown. So a run whose counts never rise by STEP or more
in one MI on a judged path ran the inner policy's decisions MI for MI, and its pair with
the inner policy is an A/A pair. The path's minimum RTT is read from the run's first MI
(the judge reads it at each add; it stays on the same side of 20 ms in this round's runs).
Printed: per scenario, the runs in which it judged at
least one add (and how many adds), and the totals.
"""

from __future__ import annotations

import sys
from pathlib import Path

from lab.runlog import read_intervals


def judged_adds(log: Path, step: int, max_rtt_ms: float) -> int:
    """Adds of ``step`` or more streams on a judged path in one run's log."""
    mis = read_intervals(log)
    rtt = mis[0].get("min_rtt_ms")
    if max_rtt_ms > 0 and rtt is not None and rtt > max_rtt_ms:
        return 0
    counts = [e["streams"] for e in mis]
    return sum(1 for a, b in zip(counts, counts[1:], strict=False) if b - a >= step)


def main(set_dir: Path, name: str, step: int = 4, max_rtt_ms: float = 20.0) -> None:
    runs = acted = 0
    for scenario in sorted(p for p in set_dir.iterdir() if (p / "logs" / name).is_dir()):
        logs = sorted((scenario / "logs" / name).glob("r*-t1.jsonl"))
        adds = {log.name[:2]: judged_adds(log, step, max_rtt_ms) for log in logs}
        runs += len(adds)
        hit = {r: k for r, k in adds.items() if k}
        acted += len(hit)
        shown = ", ".join(f"{r} ({k})" for r, k in hit.items()) or "none: A/A"
        print(f"{scenario.name}: {shown}")
    print(f"runs {runs}, with a judged add {acted}")


if __name__ == "__main__":
    a = sys.argv[1:]
    main(Path(a[0]), a[1], *(int(a[2]), float(a[3])) if len(a) > 3 else ())
