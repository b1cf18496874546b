"""Per-scenario table of an `xfer evaluate --json` output (round 37): each policy's ratio, its
runs and mean streams, then mean / min / >= 0.90 / ahead of GD and BO per policy.
python3 tab37.py RESULT.json [SHORT=SPEC ...]"""
import json, statistics, sys

d = json.loads(open(sys.argv[1]).read())
short = dict(a.split("=", 1)[::-1] for a in sys.argv[2:])
pols = d["policies"]
name = lambda p: short.get(p, p)  # noqa: E731
print("| scenario | best N | gd | bo | " + " | ".join(name(p) for p in pols) + " |")
print("|---|---|---|---|" + "---|" * len(pols))
agg = {p: [] for p in pols}
ahead = {p: 0 for p in pols}
for s, row in d["scenarios"].items():
    c = row["controllers"]
    g, b = c["gd"]["utility_ratio"], c["bo"]["utility_ratio"]
    if g is None:
        continue
    cells = []
    for p in pols:
        r = c[p]
        agg[p].append(r["utility_ratio"])
        ahead[p] += r["utility_ratio"] > max(g, b)
        runs = ", ".join(f"{x:.2f}" for x in r["run_ratios"])
        cells.append(f"{r['utility_ratio']:.3f} [{runs}] n {r['mean_streams']:.1f}")
    print(f"| {s.split('/')[-1].removesuffix('.toml')} | {row['best_fixed']['utility_streams']} "
          f"| {g:.3f} | {b:.3f} | " + " | ".join(cells) + " |")
print()
for p in pols:
    v = agg[p]
    print(f"{name(p)}: mean {statistics.fmean(v):.3f} min {min(v):.3f}, >= 0.90 on "
          f"{sum(x >= 0.9 for x in v)} of {len(v)}, ahead of GD and BO on {ahead[p]} of {len(v)}")
