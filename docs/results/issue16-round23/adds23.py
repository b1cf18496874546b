"""Round 23, descriptive: every add of >= 4 streams in the kept run logs (logs/), with the MI
before it (b), the MI it took effect (a) and the next (a2): loss, throughput relative to b,
rtt_ratio, rtt_gradient (x1e3), utility, and the min/mean RTT of b; then per scenario the
medians (over the adds whose b has a measured RTT). A missing value counts as 0.
python3 docs/results/issue16-round23/adds23.py > adds23.txt (repository root)."""
import statistics, sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bursts23 import adds, runs  # noqa: E402

out = []  # one dict per add
for scen, _, t in runs(["docs/results/issue16-round23/logs"]):
    n = [r["streams"] for r in t]
    for i in adds(n[:-1]):  # a2 must exist
        b, a, a2 = ({k: v or 0.0 for k, v in r.items()} for r in t[i - 1:i + 2])
        thr0 = max(1, b["throughput_bps"])
        out.append(dict(
            scen=scen, n0=n[i - 1], n1=n[i],
            loss=[100 * r["loss_rate"] for r in (b, a, a2)],
            thr=[a["throughput_bps"] / thr0, a2["throughput_bps"] / thr0],
            ratio=[b["rtt_ratio"], a["rtt_ratio"]],
            grad=[1e3 * b["rtt_gradient"], 1e3 * a["rtt_gradient"]],
            util=[r["utility"] for r in (b, a, a2)],
            min_rtt=b["min_rtt_ms"], rtt=b["rtt_ms"],
        ))  # fmt: skip
print("scen                 n0->n1 loss b/a/a2 %     thr x a/a2   rttratio b/a  grad b/a      util b/a/a2        minrtt rtt")
for r in out:
    print(f"{r['scen'][:20]:20s} {r['n0']:2d}->{r['n1']:2d} {' '.join(f'{x:5.1f}' for x in r['loss'])}  "
          f"{' '.join(f'{x:5.2f}' for x in r['thr'])}  {' '.join(f'{x:5.2f}' for x in r['ratio'])}  "
          f"{' '.join(f'{x:6.2f}' for x in r['grad'])}  {' '.join(f'{x:6.1f}' for x in r['util'])}  "
          f"{r['min_rtt']:6.2f} {r['rtt']:6.2f}")

print()
print("per scenario, medians over its adds: loss b/a/a2 %, throughput a2/b, utility b -> a2, rtt_ratio b")
for scen in sorted({r["scen"] for r in out}):
    rs = [r for r in out if r["scen"] == scen and r["min_rtt"] > 0]
    if not rs:
        continue
    med = lambda f: statistics.median(f(r) for r in rs)  # noqa: E731
    print(f"{scen[:20]:20s} adds {len(rs):2d}  loss {med(lambda r: r['loss'][0]):5.1f} "
          f"{med(lambda r: r['loss'][1]):5.1f} {med(lambda r: r['loss'][2]):5.1f}  "
          f"thr x{med(lambda r: r['thr'][1]):5.2f}  utility {med(lambda r: r['util'][0]):6.1f} -> "
          f"{med(lambda r: r['util'][2]):6.1f}  rtt_ratio {med(lambda r: r['ratio'][0]):5.2f}")
