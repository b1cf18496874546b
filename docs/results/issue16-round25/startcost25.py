"""Round 25: what the first five MIs cost on gen-v2-t01 and t06 (F22's test-set logs, kept in
logs/test-gen-v2-F22; both policies). Per run: the utility ratio, the part the first five MIs
contributed (their summed U / (MIs x U*)), the rest, the ratio had those MIs been at U*, and
the first five MIs (streams: Mbit/s / loss). Read on the test set: a diagnosis, not a choice.
python3 docs/results/issue16-round25/startcost25.py (repository root)."""
import glob
import json
import statistics
from pathlib import Path

import pyarrow.parquet as pq

from policy.utility import utility

HERE = Path(__file__).parent
for sc in ["gen-v2-t01", "gen-v2-t06"]:
    ref = json.loads(Path(f"docs/results/gen-v2-test/{sc}.json").read_text())
    us = next(iter(ref["scenarios"].values()))["best_fixed"]["mean_utility"]
    for log in sorted(glob.glob(f"{HERE}/logs/test-gen-v2-F22/**/{sc}/logs/*/r*-t1.parquet", recursive=True)):
        t = pq.read_table(log).to_pylist()
        u = [utility(r["throughput_bps"] or 0, r["streams"], r["loss_rate"] or 0) for r in t]
        n, lab = len(u), "F22" if "ensemble" in log else "ppo"
        first = " ".join(f"{r['streams']}:{(r['throughput_bps'] or 0) / 1e6:.0f}/{100 * (r['loss_rate'] or 0):.1f}%"
                         for r in t[:5])
        print(f"{sc} {lab} {Path(log).stem} U*={us:.0f} MIs={n} ratio {statistics.fmean(u) / us:+6.3f}  "
              f"first 5 {sum(u[:5]) / (n * us):+6.3f}  rest {sum(u[5:]) / (n * us):+6.3f}  "
              f"first 5 at U*: {(sum(u[5:]) + 5 * us) / (n * us):+6.3f}  | {first}")
