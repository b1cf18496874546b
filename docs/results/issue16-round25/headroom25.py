"""Round 25: how far is each gen-v2 validation run of the shipped policy from its own best level?

For every run log of ``ppo`` under the given output dirs (the kept logs of rounds 23-24), the
run's mean utility per MI, and the mean utility of the best stream count the run held for two
or more MIs in a row (MIs right after a change left out). "gain" is best level / run mean: how
much a controller that returned to the best level it had visited could have added, at most
(the level was measured at another time, so a competitor switching on or off biases it).
python3 docs/results/issue16-round25/headroom25.py OUTDIR... (repository root)."""
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "issue16-round23"))
from bursts23 import label, runs  # noqa: E402

from policy.utility import utility  # noqa: E402

per_scen = defaultdict(list)
for scen, p, t in runs(sys.argv[1:]):
    if label(p) != "ppo":
        continue
    n = [r["streams"] for r in t]
    u = [utility(r["throughput_bps"] or 0.0, r["streams"], r["loss_rate"] or 0.0) for r in t]
    level = defaultdict(list)
    for i in range(1, len(n)):
        if n[i] == n[i - 1]:
            level[n[i]].append(u[i])
    held = [(statistics.fmean(v), k) for k, v in level.items() if len(v) >= 2]
    mean = statistics.fmean(u)
    if held and mean > 0:
        best, at = max(held)
        per_scen[scen].append(best / mean)
        print(f"{scen:14s} {p.parents[3].name:18s} {p.stem:5s} mean U {mean:8.1f}  best held "
              f"level {at:2d}: {best:8.1f}  gain {best / mean:5.2f}")
    else:
        print(f"{scen:14s} {p.parents[3].name:18s} {p.stem:5s} mean U {mean:8.1f}  no level held "
              f"for 2 MIs (churn)")
print("\nper scenario: median gain over the shipped policy's runs")
for scen in sorted(per_scen):
    print(f"{scen:14s} {statistics.median(per_scen[scen]):5.2f}  ({len(per_scen[scen])} runs)")
