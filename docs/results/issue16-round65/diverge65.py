"""Where `shed:once=1` could change a logged run, read open loop from `lab.trace` text (round
65). The shed's `once` acts only on a retreat in the MI right after a retreat the shed deepened,
so a run in which no retreat follows a possibly deepened one makes the same decisions with
`once=1` and without (its dithering carry too: `once` only blocks the shed's branch, and that
branch runs only on a retreat). A logged decrease of 2-4 streams from a count of at most
`max_n` (30) that is below the run's peak so far counts as possibly deepened: the pair's own
steps are -1 and -5, and the shed deepens a -1 (the trace has no proposals, so this
over-counts: a judge's or ledger's undo of 2-4 streams is counted too). Conservative by
construction: a run it calls unchanged is unchanged; a run it flags may not be.

    python3 docs/results/issue16-round65/diverge65.py TRACE.txt [TRACE.txt ...]

Prints, per scenario, the runs flagged and the first flagged MI.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

HEAD = re.compile(r"^(\S+): \d+ MIs,")


def counts(text: str) -> dict[str, list[int]]:
    """Each run's logged count per MI, by the run's trace name."""
    out: dict[str, list[int]] = {}
    name = None
    for line in text.splitlines():
        m = HEAD.match(line)
        if m:
            name = m.group(1)
        elif name and line.split()[:1] == ["N"]:
            out[name] = [int(float(v)) for v in line.split()[1:]]
    return out


def first_change(n: list[int], max_n: int = 30, below_peak: int = 1) -> int | None:
    """The first MI whose decision `once=1` could change, or None."""
    peak = n[0]
    for i in range(len(n) - 2):
        peak = max(peak, n[i])
        drop = n[i] - n[i + 1]
        deep = 2 <= drop <= 4 and n[i] <= max_n and n[i] <= peak - below_peak
        if deep and n[i + 2] < n[i + 1]:
            return i + 1
    return None


def main(paths: list[str]) -> None:
    per: dict[str, list[str]] = defaultdict(list)
    total: dict[str, int] = defaultdict(int)
    for p in paths:
        for name, n in counts(Path(p).read_text()).items():
            head, _, run = ("/" + name).rpartition("/logs/")
            scen = head.split("/")[-1] or Path(p).stem
            total[scen] += 1
            at = first_change(n)
            if at is not None:
                per[scen].append(f"{run}@{at}")
    for scen in sorted(total):
        flagged = per.get(scen, [])
        print(f"{scen}: {len(flagged)} of {total[scen]} runs could change", *flagged[:6])


if __name__ == "__main__":
    main(sys.argv[1:])
