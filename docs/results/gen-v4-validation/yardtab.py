"""The yardstick table of this directory's JSON files (markdown), for README.md.

python3 yardtab.py [DIR] (gen-v3-validation too): one row per scenario (best N by utility and U*, best N by
throughput and its Mbit/s, gd and bo ratios with their runs), then the means."""
import json, statistics, sys
from pathlib import Path

d = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent)
print("| scenario | best N (utility) | U* | best N (throughput) | Mbit/s there | gd [runs] | bo [runs] |")
print("|---|---|---|---|---|---|---|")
agg: dict[str, list[float]] = {"gd": [], "bo": []}
for f in sorted(d.glob("gen-v*-*.json")):
    row = next(iter(json.loads(f.read_text())["scenarios"].values()))
    b, c = row["best_fixed"], row["controllers"]
    cells = []
    for p in ("gd", "bo"):
        r = c[p]["utility_ratio"]
        if r is None:
            cells.append("n/a (U* <= 0)")
        else:
            agg[p].append(r)
            cells.append(f"{r:.3f} [{', '.join(f'{x:.4g}' for x in c[p]['run_ratios'])}]")
    print(f"| {f.stem} | {b['utility_streams']} | {b['mean_utility']:.1f} | {b['streams']} | "
          f"{b['throughput_bps'] / 1e6:.0f} | {cells[0]} | {cells[1]} |")
print()
print(f"{len(agg['gd'])} scorable: " + "; ".join(
    f"{p} mean {statistics.fmean(v):.3f} min {min(v):.3f}" for p, v in agg.items() if v))
