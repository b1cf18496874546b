"""Round 39 rule 4a: a second sweep of the situations against the stored one. Per scenario,
each count's ratio to the stored U* (one run each), the second sweep's best count and its
ratio (U*2 / U*), and the oracle's mean re-run of the stored N* (rule 1).
python3 resweep39.py RESWEEP.json ORACLE.json"""

import json
import sys
from pathlib import Path

resweep = json.loads(Path(sys.argv[1]).read_text())
sweep, counts = resweep["scenarios"], resweep["policies"]
oracle = json.loads(Path(sys.argv[2]).read_text())["scenarios"]
head = " | ".join(c.partition(":")[2] for c in counts)
print(f"| scenario | N* (stored) | {head} | N*2 | U*2 / U* | oracle (N*, 3 runs) |")
print("|---|---|" + "---|" * len(counts) + "---|---|---|")
for s, row in sweep.items():
    c = row["controllers"]
    r = {k: c[k]["utility_ratio"] for k in counts}
    best = max(counts, key=lambda k: r[k])
    o = oracle[s]["controllers"]["oracle"]
    cells = " | ".join(f"**{r[k]:.2f}**" if k == best else f"{r[k]:.2f}" for k in counts)
    print(
        f"| {Path(s).stem} | {row['best_fixed']['utility_streams']} | {cells} "
        f"| {best.partition(':')[2]} | {r[best]:.3f} | {o['utility_ratio']:.3f} |"
    )
