"""Round 24: fig1's time to optimum from 30-s runs without a sweep (``--no-sweep`` leaves the
summary without a best fixed throughput), against round 6's 200-s sweep of the same scenario
(best fixed 952.6 Mbit/s at 32 streams, ``../issue16-round6/fig1.json``), with lab.metrics'
own definition (3-MI moving average within 10 % of it from then on).
python3 docs/results/issue16-round24/fig1tto24.py FIG1_OUTDIR (repository root)."""
import glob
import json
import sys
from pathlib import Path

import pyarrow.parquet as pq

from lab.metrics import time_to_optimum

best = json.loads(Path("docs/results/issue16-round6/fig1.json").read_text())["best_fixed"]
for log in sorted(glob.glob(f"{sys.argv[1]}/logs/*/r*-t1.parquet")):
    t = pq.read_table(log).to_pydict()
    tto = time_to_optimum(t["t"], t["throughput_bps"], best["throughput_bps"])
    path = " ".join(str(n) for n in t["streams"][:10])
    print(f"{Path(log).parent.name[:40]:40s} {Path(log).stem}  time to optimum "
          f"{'never' if tto is None else f'{tto:5.2f} s'}  streams {path} ...")
