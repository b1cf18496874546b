"""Round 53: the median loss of the 5 MIs before each shed in run logs (a retreat other than
-1/-5, the pair's own steps), one line per glob of jsonl logs. README.md here.

    python3 docs/results/issue16-round53/shedloss53.py "RUN/logs/CAND/*.jsonl" ...
"""

import glob
import statistics
import sys

from lab.runlog import read_intervals


def sheds(path: str) -> list[tuple[int, int, float | None]]:
    """(count before, step, median loss of the 5 MIs before) for each shed in one log."""
    rows = read_intervals(path)
    out = []
    for i in range(1, len(rows)):
        step = rows[i]["streams"] - rows[i - 1]["streams"]
        if step < 0 and step not in (-1, -5):
            win = [r["loss_rate"] for r in rows[max(0, i - 5) : i] if r["loss_rate"] is not None]
            out.append((rows[i - 1]["streams"], step, statistics.median(win) if win else None))
    return out


for pattern in sys.argv[1:]:
    meds = sorted(m for f in sorted(glob.glob(pattern)) for _, _, m in sheds(f) if m is not None)
    at = [f"{meds[int(q * (len(meds) - 1))]:.4f}" if meds else "-" for q in (0, 0.1, 0.5)]
    print(f"{pattern}: {len(meds)} sheds; loss min {at[0]} p10 {at[1]} median {at[2]}")
