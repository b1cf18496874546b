"""Round 39's table: per scenario with U* >= 10, the oracle (the stored best fixed N run again)
and the shipped policy beside it: mean ratio [runs], lowest run, run spread, and ppo over the
oracle; per set, means and minima. python3 oracle39.py RESULT.json [RESULT.json ...]"""

import json
import statistics
import sys
from pathlib import Path

print("| scenario | N* | U* | oracle [runs] | oracle spread | ppo [runs] | ppo n | ppo / oracle |")
print("|---|---|---|---|---|---|---|---|")
agg: dict[str, list[float]] = {"oracle": [], "ppo": [], "rel": [], "omin": [], "pmin": []}
for path in sys.argv[1:]:
    for s, row in json.loads(Path(path).read_text())["scenarios"].items():
        best = row["best_fixed"]
        if best["mean_utility"] < 10:
            continue
        o, p = row["controllers"]["oracle"], row["controllers"]["ppo"]
        orr, prr = o["run_ratios"], p["run_ratios"]
        rel = p["utility_ratio"] / o["utility_ratio"]
        agg["oracle"].append(o["utility_ratio"])
        agg["ppo"].append(p["utility_ratio"])
        agg["rel"].append(rel)
        agg["omin"].append(min(orr))
        agg["pmin"].append(min(prr))
        runs = lambda v: ", ".join(f"{x:.2f}" for x in v)  # noqa: E731
        print(
            f"| {s.split('/')[-1].removesuffix('.toml')} | {o['streams_fixed']} "
            f"| {best['mean_utility']:.1f} | {o['utility_ratio']:.3f} [{runs(orr)}] "
            f"| {max(orr) - min(orr):.2f} | {p['utility_ratio']:.3f} [{runs(prr)}] "
            f"| {p['mean_streams']:.1f} | {rel:.2f} |"
        )
print()
n = len(agg["oracle"])
for k in ("oracle", "ppo"):
    v = agg[k]
    print(
        f"{k}: mean {statistics.fmean(v):.3f} min {min(v):.3f} (lowest single run "
        f"{min(agg[k[0] + 'min']):.3f}), >= 0.90 on {sum(x >= 0.9 for x in v)} of {n}"
    )
print(f"ppo / oracle: mean {statistics.fmean(agg['rel']):.3f} min {min(agg['rel']):.3f}")
