"""Where did `fast` act, and what did its start-up do? (round 41, rule 5)

    python3 docs/results/issue16-round41/acted41.py SET_DIR [FAST_DIR_NAME] [BASE_DIR_NAME]

SET_DIR is an ``xfer evaluate --out`` set directory; the log directories under each scenario's
``logs/`` default to ``fast-ppo`` and ``ppo``. ``fast`` changes only the MI clock: a run none
of whose MIs is short (``mi_s`` < 0.5 of the longest) ran the inner policy's decisions on
1-s MIs, so its pair is an A/A pair. Printed per scenario and run: the short MIs, the counts
they ran, and each policy's mean utility (MI-length weighted, drain MIs left out) over the
first 10 s and over the rest, from the runs' own ``--json-stream`` logs.
"""

from __future__ import annotations

import sys
from pathlib import Path

from lab.metrics import intervals_mean_utility
from lab.runlog import read_intervals


def window(mis: list[dict], lo: float, hi: float) -> float:
    """Mean utility of the MIs that end in (lo, hi]."""
    got = [e for e in mis if lo < e["t"] <= hi]
    return intervals_mean_utility(got) if got else float("nan")


def main(set_dir: Path, fast: str = "fast-ppo", base: str = "ppo") -> None:
    runs = acted = 0
    for scenario in sorted(p for p in set_dir.iterdir() if (p / "logs" / fast).is_dir()):
        print(scenario.name)
        for name in (fast, base):
            for log in sorted((scenario / "logs" / name).glob("r*-t1.jsonl")):
                mis = read_intervals(log)
                longest = max(e["mi_s"] for e in mis)
                short = [e for e in mis if e["mi_s"] < 0.5 * longest]
                if name == fast:
                    runs += 1
                    acted += bool(short)
                counts = "".join(f"{e['streams']}," for e in short).rstrip(",") or "-"
                first = [e["streams"] for e in mis if e["t"] <= 3.05]
                print(
                    f"  {name:10s} {log.name[:2]} short MIs {len(short):2d} [{counts}]"
                    f" counts to 3 s {first}"
                    f" U(0-10 s) {window(mis, 0, 10.05):7.1f} U(10 s-) {window(mis, 10.05, 1e9):7.1f}"
                )
    print(f"fast runs {runs}, with short MIs {acted}")


if __name__ == "__main__":
    a = sys.argv[1:]
    main(Path(a[0]), *a[1:])
