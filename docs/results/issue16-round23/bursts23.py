"""Round 23 diagnostic: what happens around each add of >= 4 streams in one evaluate output
(a missing loss or throughput of an MI counts as 0).

python3 bursts23.py OUTDIR [OUTDIR...]: for every run log (logs/LABEL/rN-t1.parquet), the
stream path, mean loss and throughput, and for every jump of >= 4 streams between two MIs the
loss, throughput and utility of the 3 MIs before and the 3 after, and how many MIs the added
streams stayed (until the count is back at or below the count before the jump).
``runs`` and ``adds`` serve adds23.py too."""
import glob, statistics, sys
from pathlib import Path

import pyarrow.parquet as pq

ADD = 4
"""The smallest jump in the stream count between two MIs that counts as an add."""


def label(path: Path) -> str:
    """This round's short name for a run log's controller directory."""
    name = path.parent.name
    if name == "ppo":
        return "ppo"
    if "veto" in name:
        return "V23"
    if name.startswith("ensemble"):
        return "F22"
    if name.endswith("hold-kick22-s3.pt"):
        return "K3"  # H23 is the same policy
    return name


def runs(outdirs):
    """(scenario, log path, the run's MI records) for every run log under the output dirs."""
    for out in outdirs:
        for log in sorted(glob.glob(f"{out}/**/logs/*/r*-t1.parquet", recursive=True)):
            p = Path(log)
            yield p.parents[2].name, p, pq.read_table(log).to_pylist()


def adds(n):
    """The MIs i where the stream count jumped by >= ADD from MI i - 1."""
    return [i for i in range(1, len(n)) if n[i] - n[i - 1] >= ADD]


def fmt(xs, scale=1.0, f="{:5.1f}"):
    return " ".join(f.format(x * scale) for x in xs)


if __name__ == "__main__":
    for scen, p, rows in runs(sys.argv[1:]):
        n = [r["streams"] for r in rows]
        loss = [r["loss_rate"] or 0.0 for r in rows]
        thr = [r["throughput_bps"] or 0.0 for r in rows]
        print(f"{scen:20s} {label(p):4s} {p.stem:6s} mean n {statistics.fmean(n):5.2f} loss "
              f"{100 * statistics.fmean(loss):5.2f} % thr {statistics.fmean(thr) / 1e6:7.1f} Mbit/s "
              f"path {' '.join(map(str, n))}")
        for i in adds(n):
            before, after = range(max(0, i - 3), i), range(i, min(len(n), i + 3))
            stay = next((j - i for j in range(i, len(n)) if n[j] <= n[i - 1]), len(n) - i)
            print(f"    +{n[i] - n[i - 1]} at MI {i} ({n[i - 1]}->{n[i]}), stayed {stay} MIs: "
                  f"loss % {fmt([loss[j] for j in before], 100)} | {fmt([loss[j] for j in after], 100)}; "
                  f"Mbit/s {fmt([thr[j] for j in before], 1e-6, '{:6.0f}')} | "
                  f"{fmt([thr[j] for j in after], 1e-6, '{:6.0f}')}")
