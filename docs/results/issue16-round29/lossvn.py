"""(Round 18 lossvn.py, the name column widened.) Per fixed N of an experiment: mean loss rate and throughput of MIs 4.. (python3 lossvn.py OUT_DIR...)."""
import json, sys
import numpy as np
from lab.runlog import read_run

SKIP = 3  # the first MIs: slow start
for d in sys.argv[1:]:
    s = json.load(open(f"{d}/summary.json"))
    row = []
    for spec, p in s["policies"].items():
        r = read_run(p["logs"][0])
        L, T = r.col("loss_rate"), r.col("throughput_bps")
        row.append(f"{spec.split(':')[1]:>3}: {np.nanmean(L[SKIP:])*100:5.1f}% {np.nanmean(T[SKIP:])/1e6:5.0f}M")
    print(f"{d.rstrip('/').rsplit('/', 1)[1]:20s}", " | ".join(row))
