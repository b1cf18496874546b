"""D19's table: per scenario, each policy's mean utility ratio (runs in brackets) and the
spread (max - min) over the policies whose name contains SUBSTR.

    python3 seeds.py EVALUATE.json [SUBSTR]
"""

import json
import sys
from statistics import fmean

d = json.load(open(sys.argv[1]))["scenarios"]
sub = sys.argv[2] if len(sys.argv) > 2 else "onoff-cc19"
# The policies run in this invocation (the reference's GD, BO and older candidates are left out).
names = [n for n in next(iter(d.values()))["controllers"] if "cc19" in n or n == "ppo"]
short = [n.rsplit("/", 1)[-1].removesuffix(".pt") for n in names]
print(f"{'scenario':22s} " + " ".join(f"{s:>15s}" for s in short) + "   seed spread")
per: dict[str, list[float]] = {n: [] for n in names}
for scen, v in d.items():
    c = v["controllers"]
    cells, seeds = [], []
    for n in names:
        r = c[n]["utility_ratio"]
        per[n].append(r)
        runs = ",".join(f"{x:.2f}" for x in c[n]["run_ratios"])
        cells.append(f"{r:6.3f} [{runs}]")
        if sub in n:
            seeds.append(r)
    name = scen.rsplit("/", 1)[-1].removesuffix(".toml")
    print(f"{name:22s} " + " ".join(f"{x:>15s}" for x in cells) + f"   {max(seeds) - min(seeds):.3f}")
print(f"{'mean':22s} " + " ".join(f"{fmean(per[n]):15.3f}" for n in names))
print(f"{'min':22s} " + " ".join(f"{min(per[n]):15.3f}" for n in names))
