"""Round 55: where retreats come from. For each glob of run logs: retreats from at most 30
streams, and how many came from within K (0-3) of the highest count the transfer had run.

    PYTHONPATH=. python3 docs/results/issue16-round55/peak55.py "RUN/**/logs/POLICY/*.jsonl" ...
"""

import glob
import sys

from lab.runlog import read_intervals

for pat in sys.argv[1:]:
    tot, near = 0, dict.fromkeys(range(4), 0)
    for f in sorted(glob.glob(pat, recursive=True)):
        rows = read_intervals(f)
        for i in range(1, len(rows)):
            n = rows[i - 1]["streams"]
            if rows[i]["streams"] < n <= 30:
                peak = max(r["streams"] for r in rows[:i])
                tot += 1
                for k in near:
                    near[k] += n >= peak - k
    print(pat, tot, " ".join(f"within {k}: {v}" for k, v in near.items()))
