"""Level or motion: is a policy's shortfall on a scenario the counts it chose, or what
changing them cost?

    python3 -m train.motion SWEEP_DIR RUN_DIR [RUN_DIR ...] [--skip MIS]

SWEEP_DIR is an ``xfer evaluate --sweep`` output
(``SWEEP_DIR/SCENARIO/sweep/fixed-N/r1-t1.jsonl``, one fixed-N run per count); each RUN_DIR
an ``xfer evaluate`` output of the same scenarios
(``RUN_DIR/[SUITE-SET/]SCENARIO/logs/POLICY/r*-t1.jsonl``). For every MI of a policy's run,
*held* is the utility the sweep's fixed-N run measured in the same MI of the scenario (the
same second since the start, so the same phase of a scheduled rival) at the count the policy
ran then, linear between the swept counts (below the smallest in proportion to the count).
Printed per scenario and policy, each as a share of U* (the sweep's best mean utility over the
same MIs), over every run:

``ratio``   what the policy earned (the mean of its MIs' utilities; ``xfer evaluate``'s
            ratio is of the run's whole-transfer utility and differs by up to ~0.02);
``held``    the level: what the counts it ran would have earned had each been held from the
            start;
``motion``  ``ratio - held``: what moving cost (or gained), start-up included, since a
            fixed-N run starts at its N.

``--skip 10`` leaves out the first 10 MIs of every run and of the sweep (U* too): the
start-up, and on scenarios whose rival joins in the first seconds, the free path before it.
Round 38 (``docs/results/issue16-round38/``): on gen-v7 the best counts after MI 10 are lower
than the whole run's (gen-v7-v01: 4 and 8 tie, where 8 is best over the whole run).
"""

from __future__ import annotations

import argparse
import sys
from bisect import bisect_left
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean

from lab.runlog import read_intervals

Sweep = dict[int, list[float]]
"""Per-MI utilities of the sweep's fixed-N run, by N."""


def per_mi(path: Path) -> list[tuple[int, float]]:
    """(streams, utility) of each MI in one run's jsonl log."""
    return [(int(r["streams"]), float(r["utility"])) for r in read_intervals(path)]


def read_sweep(scenario_dir: Path) -> Sweep:
    """The fixed-N runs of one scenario's sweep."""
    return {
        int(d.name.removeprefix("fixed-")): [u for _, u in per_mi(d / "r1-t1.jsonl")]
        for d in sorted((scenario_dir / "sweep").glob("fixed-*"))
    }


def held(sweep: Sweep, n: int, t: int) -> float:
    """The sweep's utility in MI ``t`` at count ``n``: linear between the swept counts that
    reach MI ``t``, in proportion to ``n`` below the smallest, the largest's above it."""
    ns = sorted(k for k in sweep if t < len(sweep[k]))
    if not ns:
        raise ValueError(f"no swept run reaches MI {t}")
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


@dataclass(frozen=True, slots=True)
class Split:
    """One policy on one scenario, over its runs (shares of U*)."""

    scenario: str
    policy: str
    runs: int
    ratio: float
    held: float
    streams: float

    @property
    def motion(self) -> float:
        return self.ratio - self.held


def split(
    sweep: Sweep, runs: list[list[tuple[int, float]]], skip: int = 0
) -> tuple[float, float, float]:
    """(ratio, held, mean streams) of ``runs`` against ``sweep``, from MI ``skip`` on."""
    ustar = max(fmean(v[skip:]) for v in sweep.values() if len(v) > skip)
    if ustar <= 0:
        raise ValueError("the sweep's best mean utility is not positive: no ratio to read")
    runs = [r[skip:] for r in runs if len(r) > skip]
    got = fmean(fmean(u for _, u in r) for r in runs)
    lvl = fmean(fmean(held(sweep, n, skip + t) for t, (n, _) in enumerate(r)) for r in runs)
    return got / ustar, lvl / ustar, fmean(fmean(n for n, _ in r) for r in runs)


def splits(sweep_dir: Path, run_dirs: list[Path], skip: int = 0) -> list[Split]:
    """Every (scenario, policy) of ``run_dirs`` with a sweep in ``sweep_dir``."""
    out = []
    for scen in sorted(p for p in sweep_dir.iterdir() if (p / "sweep").is_dir()):
        sweep = read_sweep(scen)
        for rd in run_dirs:
            for logs in sorted(rd.glob(f"**/{scen.name}/logs")):
                for pol in sorted(p for p in logs.iterdir() if p.is_dir()):
                    runs = [per_mi(f) for f in sorted(pol.glob("r*-t1.jsonl"))]
                    if runs:
                        r, h, n = split(sweep, runs, skip)
                        out.append(Split(scen.name, pol.name, len(runs), r, h, n))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m train.motion", description=__doc__.split("\n")[0])
    ap.add_argument("sweep_dir", type=Path)
    ap.add_argument("run_dirs", type=Path, nargs="+")
    ap.add_argument("--skip", type=int, default=0, help="MIs left out at the start (U* too)")
    a = ap.parse_args(argv)
    rows = splits(a.sweep_dir, a.run_dirs, a.skip)
    if not rows:
        print("no scenario has both a sweep and a policy's runs", file=sys.stderr)
        return 2
    print(f"{'scenario':20s} {'policy':28s} runs  ratio   held  motion streams")
    for s in rows:
        print(
            f"{s.scenario[:20]:20s} {s.policy[:28]:28s} {s.runs:4d} {s.ratio:6.3f} {s.held:6.3f} "
            f"{s.motion:+7.3f} {s.streams:7.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
