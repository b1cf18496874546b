"""Per-MI stream counts of a testbed evaluation's run logs (``xfer evaluate --out DIR``).

python3 traces.py DIR [SCENARIO_SUBSTRING]: for every scenario, policy (round 17's F and FS
by those names) and run, the mean
stream count, the mean per-MI loss rate and the stream count MI by MI (one character per MI:
1-9, then a-z for 10-35, + above)."""
import sys
from pathlib import Path
from statistics import fmean

import pyarrow.parquet as pq

DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
root = Path(sys.argv[1])
only = sys.argv[2] if len(sys.argv) > 2 else ""
F = "guard-loss_min-0.005-cooldown-32-patience-3-elastic-0.25-step-3"
for log in sorted(root.glob("**/logs/*/*.parquet")):
    scenario, policy = log.parts[-4], log.parts[-2].replace(F + "-shed-0.05", "FS").replace(F, "F")
    if only not in scenario:
        continue
    t = pq.read_table(log, columns=["streams", "loss_rate"]).to_pylist()
    n = [int(r["streams"]) for r in t]
    loss = [r["loss_rate"] or 0.0 for r in t]
    trace = "".join(DIGITS[k] if k < len(DIGITS) else "+" for k in n)
    print(f"{scenario:20s} {policy:4s} {log.stem:6s} n {fmean(n):5.2f} "
          f"loss {100 * fmean(loss):5.2f} %  {trace}")
