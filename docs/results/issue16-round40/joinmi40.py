"""On short paths, does the join MI already say what the MI after it says? (round 40)

    python3 docs/results/issue16-round40/joinmi40.py MAX_RTT_MS RUN_ROOT [RUN_ROOT ...]

Every run log under each RUN_ROOT (``**/logs/*/r*-t1.jsonl``) whose first MI's minimum RTT
is at most MAX_RTT_MS is read for adds of 4 or more streams after which the count stood
(the MI after the join MI ran the same count): the join MI's utility and the next MI's,
each against the MI before the add, with the judge's default margin (10 %) and round 40's
band (a fall of more than 10 % is "fell"). Printed: how many such adds, and how often the
join MI's reading (rose by the margin / fell / in between) equals the next MI's - how often
a verdict one MI earlier would have decided as the judge's verdict MI does.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from lab.runlog import read_intervals


def reading(u: float, before: float) -> str:
    if u > before + 0.10 * abs(before):
        return "rose"
    return "fell" if u < before - 0.10 * abs(before) else "level"


def main(max_rtt_ms: float, roots: list[Path]) -> None:
    pairs: Counter[tuple[str, str]] = Counter()
    for root in roots:
        for log in sorted(root.glob("**/logs/*/r*-t1.jsonl")):
            mis = read_intervals(log)
            if not mis or (mis[0].get("min_rtt_ms") or 1e9) > max_rtt_ms:
                continue
            n = [e["streams"] for e in mis]
            u = [e["utility"] for e in mis]
            for t in range(1, len(mis) - 1):
                if n[t] - n[t - 1] >= 4 and n[t + 1] == n[t]:
                    pairs[(reading(u[t], u[t - 1]), reading(u[t + 1], u[t - 1]))] += 1
    total = sum(pairs.values())
    same = sum(k for (a, b), k in pairs.items() if a == b)
    print(f"adds of 4+ held one more MI, min RTT <= {max_rtt_ms} ms: {total}")
    for (a, b), k in sorted(pairs.items()):
        print(f"  join MI {a:5s} next MI {b:5s}: {k}")
    print(f"join MI decides as the next MI: {same} of {total}")


if __name__ == "__main__":
    main(float(sys.argv[1]), [Path(p) for p in sys.argv[2:]])
