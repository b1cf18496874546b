"""A/A: the shipped ensemble (`ppo` since round 13) against itself across rounds on gen-v1's
validation set (same stored yardstick; 2 runs per round), the noise floor of a paired A/B.

python3 aa.py [VAL16.json]: per scenario the shipped policy's runs over rounds 13-16, then
the paired mean difference of every pair of rounds over the scenarios both scored (U* >= 10)."""
import itertools
import json
import statistics
import sys
from pathlib import Path

R = Path(__file__).resolve().parent.parent
runs: dict[str, dict[str, list[float]]] = {}  # round -> scenario -> run ratios
r13 = json.loads((R / "issue16-round13/validation-e2.json").read_text())
runs["r13"] = {k: v["cand"] for k, v in r13["ratios"].items()}  # the ensemble, shipped since
r14 = json.loads((R / "issue16-round14/val-e3b.json").read_text())
runs["r14"] = {k: v["runs"]["ppo"] for k, v in r14["rows"].items()}
for tag, path in (("r15", R / "issue16-round15/val-g.json"),
                  ("r16", Path(sys.argv[1]) if len(sys.argv) > 1 else R / "issue16-round16/val-gen-v1-e.json")):
    d = json.loads(path.read_text())["scenarios"]
    runs[tag] = {k: v["controllers"]["ppo"]["run_ratios"] for k, v in d.items()
                 if v["controllers"]["ppo"].get("run_ratios") and v["best_fixed"]["mean_utility"] >= 10}
names = sorted(set.intersection(*(set(v) for v in runs.values())))
print(f"{'scenario':20s} " + " ".join(f"{t:>13s}" for t in runs) + "   mean    min    max  range")
for n in names:
    allr = [x for t in runs for x in runs[t][n]]
    print(f"{n:20s} " + " ".join(f"{runs[t][n][0]:6.3f} {runs[t][n][1]:6.3f}" for t in runs)
          + f"  {statistics.fmean(allr):.3f}  {min(allr):.3f}  {max(allr):.3f}  {max(allr) - min(allr):.3f}")
print("\nA/A paired differences (shipped - shipped), 2 runs each side, over the scenarios both scored:")
for a, b in itertools.combinations(runs, 2):
    both = sorted(set(runs[a]) & set(runs[b]))
    diff = [statistics.fmean(runs[a][n]) - statistics.fmean(runs[b][n]) for n in both]
    se = statistics.stdev(diff) / len(diff) ** 0.5
    print(f"  {a} - {b}: n = {len(both)}, {statistics.fmean(diff):+.3f} +- {se:.3f}  "
          f"(means {statistics.fmean(statistics.fmean(runs[a][n]) for n in both):.3f} vs "
          f"{statistics.fmean(statistics.fmean(runs[b][n]) for n in both):.3f})")
