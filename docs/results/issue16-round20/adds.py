"""Loss and throughput around every add of streams in testbed run logs (round 20's M20).

python3 adds.py DIR [SCENARIO_SUBSTRING]: for every MI whose stream count rose (by k) from
the MI before, the loss rate two MIs before, in the MI of the add and the two after, and the
throughput ratio of the MI after to the MI before; then a summary per size of the add. A
record's ``streams`` is the count that ran in that MI."""

import sys
from collections import defaultdict
from pathlib import Path
from statistics import fmean, median

import pyarrow.parquet as pq

root = Path(sys.argv[1])
only = sys.argv[2] if len(sys.argv) > 2 else ""
rows: dict[str, list[tuple[float, float, float, float, float]]] = defaultdict(list)
for log in sorted(root.glob("**/logs/*/*.parquet")):
    scenario = log.parts[-4]
    if only not in scenario:
        continue
    t = pq.read_table(log, columns=["streams", "loss_rate", "throughput_bps"]).to_pylist()
    n = [int(r["streams"]) for r in t]
    loss = [r["loss_rate"] or 0.0 for r in t]
    thr = [r["throughput_bps"] or 0.0 for r in t]
    for i in range(3, len(t) - 3):
        k = n[i] - n[i - 1]
        if k <= 0 or n[i - 2] != n[i - 1]:
            continue  # an add after at least two MIs at one count
        size = "+1" if k == 1 else "+2..5" if k <= 5 else "+6.."
        before = fmean(loss[i - 2 : i])
        rows[size].append((before, loss[i], loss[i + 1], fmean(loss[i + 2 : i + 4]), thr[i + 1] / max(thr[i - 1], 1.0)))
print(f"{'add':6s} {'count':>5s} {'loss before':>11s} {'at add':>7s} {'next':>7s} {'2-3 after':>9s} {'thr next/before':>15s}  (medians, %)")
for size in ("+1", "+2..5", "+6.."):
    r = rows.get(size, [])
    if not r:
        continue
    col = list(zip(*r, strict=True))
    print(f"{size:6s} {len(r):5d} {100 * median(col[0]):11.2f} {100 * median(col[1]):7.2f} "
          f"{100 * median(col[2]):7.2f} {100 * median(col[3]):9.2f} {median(col[4]):15.2f}")
