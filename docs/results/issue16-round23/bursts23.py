"""Round 23 diagnostic (a missing loss or throughput of an MI counts as 0): what happens around each add of >= 4 streams in one evaluate output.

python3 bursts23.py OUTDIR [OUTDIR...]: for every run log (logs/LABEL/rN-t1.parquet), the
stream path, mean loss and throughput, and for every jump of >= 4 streams between two MIs the
loss, throughput and utility of the 3 MIs before and the 3 after, and how many MIs the added
streams stayed (until the count is back at or below the count before the jump)."""
import glob, statistics, sys
from pathlib import Path

import pyarrow.parquet as pq


def label(path: Path) -> str:
    name = path.parent.name
    return {"ppo": "ppo"}.get(name, "K3" if name.endswith("hold-kick22-s3.pt") and not
            name.startswith("ensemble") else ("V23" if "rule-veto" in name or "veto" in name
                                              else ("F22" if name.startswith("ensemble") else name)))


def fmt(xs, scale=1.0, f="{:5.1f}"):
    return " ".join(f.format(x * scale) for x in xs)


for out in sys.argv[1:]:
    for log in sorted(glob.glob(f"{out}/**/logs/*/r*-t1.parquet", recursive=True)):
        p = Path(log)
        rows = pq.read_table(log).to_pylist()
        n = [r["streams"] for r in rows]
        loss = [r["loss_rate"] or 0.0 for r in rows]
        thr = [r["throughput_bps"] or 0.0 for r in rows]
        scen = p.parents[2].name
        print(f"{scen:20s} {label(p):4s} {p.stem:6s} mean n {statistics.fmean(n):5.2f} loss "
              f"{100 * statistics.fmean(loss):5.2f} % thr {statistics.fmean(thr) / 1e6:7.1f} Mbit/s "
              f"path {' '.join(map(str, n))}")
        for i in range(1, len(n)):
            if n[i] - n[i - 1] >= 4:
                before, after = range(max(0, i - 3), i), range(i, min(len(n), i + 3))
                stay = next((j - i for j in range(i, len(n)) if n[j] <= n[i - 1]), len(n) - i)
                print(f"    +{n[i] - n[i - 1]} at MI {i} ({n[i - 1]}->{n[i]}), stayed {stay} MIs: "
                      f"loss % {fmt([loss[j] for j in before], 100)} | {fmt([loss[j] for j in after], 100)}; "
                      f"Mbit/s {fmt([thr[j] for j in before], 1e-6, '{:6.0f}')} | "
                      f"{fmt([thr[j] for j in after], 1e-6, '{:6.0f}')}")
