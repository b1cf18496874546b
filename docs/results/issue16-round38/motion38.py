"""Round 38: is a policy's shortfall on a scenario its level (the counts it chose) or its
motion (what changing them cost)?

For every MI of a policy's run, "held" is the utility the sweep's fixed-N run measured in
the same MI of the scenario (same second since the start, so the same phase of the rival)
at the count the policy ran then, interpolated linearly between the sweep's counts. Printed
per scenario and policy, each as a share of U* (the sweep's best mean utility), over every
run: ``ratio`` (what the policy earned), ``held`` (what the counts it ran would have earned
had each been held from the start: the level), and ``motion`` = ratio - held (what moving
cost or gained; start-up included, since a fixed-N run starts at its N).
python3 motion38.py SWEEP_DIR RUN_DIR [RUN_DIR ...]   (SWEEP_DIR/SCENARIO/sweep/fixed-N/)"""

import json
import sys
from bisect import bisect_left
from pathlib import Path
from statistics import fmean


def per_mi(path: Path) -> list[tuple[int, float]]:
    """(streams, utility) per MI of one run's jsonl log."""
    out = []
    for line in path.open():
        r = json.loads(line)
        if r.get("event") == "interval":
            out.append((int(r["streams"]), float(r["utility"])))
    return out


def held(sweep: dict[int, list[float]], n: int, t: int) -> float:
    """The sweep's utility in MI ``t`` at count ``n`` (linear between the swept counts)."""
    ns = sorted(k for k in sweep if t < len(sweep[k]))
    if n <= ns[0]:
        return sweep[ns[0]][t] * n / ns[0]
    if n >= ns[-1]:
        return sweep[ns[-1]][t]
    i = bisect_left(ns, n)
    if ns[i] == n:
        return sweep[n][t]
    lo, hi = ns[i - 1], ns[i]
    w = (n - lo) / (hi - lo)
    return (1 - w) * sweep[lo][t] + w * sweep[hi][t]


SKIP = int(__import__("os").environ.get("SKIP", "0"))
"""MIs left out at the start (SKIP=10: after the start-up; U* is then the sweep's best mean
over the same MIs)."""


def main() -> None:
    sweep_dir, run_dirs = Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]]
    print(f"{'scenario':12s} {'policy':22s} {'runs':>4s} {'ratio':>6s} {'held':>6s} {'motion':>7s}"
          f" {'streams':>7s}")
    for scen in sorted(p for p in sweep_dir.iterdir() if (p / "sweep").is_dir()):
        sweep = {int(d.name.split("-")[1]): [u for _, u in per_mi(d / "r1-t1.jsonl")]
                 for d in (scen / "sweep").iterdir()}
        ustar = max(fmean(v[SKIP:]) for v in sweep.values())
        for rd in run_dirs:
            logs = next(rd.glob(f"*/{scen.name}/logs"), None)
            if logs is None:
                continue
            for pol in sorted(logs.iterdir()):
                runs = [per_mi(f) for f in sorted(pol.glob("r*-t1.jsonl"))]
                got = fmean(fmean(u for _, u in r[SKIP:]) for r in runs) / ustar
                lvl = fmean(fmean(held(sweep, n, t) for t, (n, _) in enumerate(r) if t >= SKIP) for r in runs)
                ns = fmean(fmean(n for n, _ in r) for r in runs)
                print(f"{scen.name:12s} {pol.name[:22]:22s} {len(runs):4d} {got:6.3f} "
                      f"{lvl / ustar:6.3f} {got - lvl / ustar:+7.3f} {ns:7.1f}")


if __name__ == "__main__":
    main()
