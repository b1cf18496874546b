"""How often a one-MI verdict gets a step's sign right, from fixed-count runs (round 40).

    python3 docs/results/issue16-round40/ident40.py SWEEP_DIR [SWEEP_DIR ...]

SWEEP_DIR holds one directory per scenario with fixed-N run logs, either a stored
yardstick's ``sweep-mi/SCENARIO/sweep/fixed-N/r1-t1.jsonl`` (time, count, utility) or a run
directory's ``SCENARIO/logs/fixed-N/r1-t1.jsonl`` (round 39's second sweep). For each pair
of neighbouring counts a -> b it reads what a judge sees of a step a -> b taken after MI t:
the utility of b's run at MI t + 2 (the MI after the join MI, as ``judge`` weighs it)
against a's run at MI t, over every t, and prints the share of MIs where that comparison
has the sign of the two runs' means ("+" where b's run mean is higher, "-" where lower).
0.5 is a coin flip. The runs of different counts are separate runs of the same scenario,
aligned by time (its rivals' schedules are the same), so the share includes the time drift
a judge also sees, not the noise of one run against itself. A fixed-count run has no join:
the slow start of streams added mid-run (long paths) is not in it, so on long paths the
shares are an upper bound of what a one-MI verdict after a real add reads.
"""

from __future__ import annotations

import statistics as st
import sys
from pathlib import Path

from lab.runlog import read_intervals


def utilities(path: Path) -> list[float]:
    """Each MI's utility as the run logged it (full logs and the sweep-mi extracts alike)."""
    return [float(r["utility"]) for r in read_intervals(path)]


def runs(scenario: Path) -> dict[int, list[float]]:
    """Count -> per-MI utilities of that count's run, in either layout."""
    logs = sorted(scenario.glob("sweep/fixed-*/r1-t1.jsonl")) or sorted(
        scenario.glob("logs/fixed-*/r1-t1.jsonl")
    )
    return {int(p.parent.name.removeprefix("fixed-")): utilities(p) for p in logs}


def shares(u: dict[int, list[float]]) -> list[tuple[int, int, bool, float]]:
    """(a, b, b's mean higher, share of MIs a one-MI verdict reads with that sign)."""
    counts = sorted(u)
    n = min(len(v) for v in u.values())
    out = []
    for a, b in zip(counts, counts[1:], strict=False):
        up = st.mean(u[b][:n]) > st.mean(u[a][:n])
        right = sum((u[b][t + 2] > u[a][t]) == up for t in range(n - 2))
        out.append((a, b, up, right / (n - 2)))
    return out


def main(argv: list[str]) -> None:
    for root in map(Path, argv):
        for scenario in sorted(p for p in root.iterdir() if p.is_dir()):
            u = runs(scenario)
            if len(u) < 2:
                continue
            cells = [f"{a}->{b}{'+' if up else '-'} {s:.2f}" for a, b, up, s in shares(u)]
            print(f"| {scenario.name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
