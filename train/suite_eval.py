"""``xfer evaluate --suite NAME --set validation|test|named``: one set of a scenario suite
(:mod:`testbeds.suite`) on the testbed, and the numbers that decide whether a policy ships.

Each scenario runs as in ``xfer evaluate --scenario`` (a sweep of fixed N, then the policy,
GD and BO, ``--repeat`` runs each). Per set it reports:

* ``mean`` and ``min``: the evaluated policy's utility ratio (its mean utility over its runs
  / the best fixed N's) over the scenarios, and which scenario is the worst;
* ``share_ge_090``: the share of scenarios where that ratio is >= 0.90;
* ``beats_gd``, ``beats_bo``, ``beats_both``: the share of scenarios where its ratio is
  higher than GD's, BO's, both;
* ``runs``: the policy's runs in total and the fewest per scenario, over the scored
  scenarios (an n/a scenario, U* <= 0, has no ratio and no runs counted);
* ``spread``: per scenario with >= 2 runs whose per-run ratios differ by more than
  :data:`BIMODAL_GAP`, the lowest and highest run (a mean alone hides a policy that either
  gets it right or does not);
* ``paired``: per other policy of ours that ran beside it in the same invocations (the
  shipped one, by rule 2): the mean over the scenarios both scored of the per-scenario
  difference of ratios, its standard error (sd / sqrt(n)), and on how many it is higher or
  lower. Two evaluations of one policy on validation (14 scenarios x 2 runs, rounds 13 and
  14) differed by 0.030 in mean; a difference within about two standard errors is not one.

The ``test`` set is for a candidate that is about to ship, once; choose on ``validation``.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

BIMODAL_GAP = 0.10
"""Per-run ratios further apart than this are reported as a spread (min, max)."""
TARGET = 0.90
"""Per-scenario utility ratio the issue asks for (``share_ge_090``)."""


def run_ratios(summary: dict[str, Any], policy: str) -> list[float]:
    """Utility ratio of each run of ``policy`` in one experiment's summary.json (its mean
    utility / the best fixed N's mean utility), in run order; [] without a best fixed N or
    where its mean utility is not positive (no ratio, rule 4 of docs/evaluation.md: the
    same as ``--reference`` and the scenario's mean)."""
    from lab import metrics
    from lab.runlog import read_run

    best = (summary.get("best_fixed") or {}).get("mean_utility")
    if best is None or metrics.utility_ratio(1.0, best) is None:
        return []
    out = []
    for log in (summary.get("policies", {}).get(policy) or {}).get("logs", []):
        try:
            run = read_run(log)
        except (OSError, ValueError):
            continue
        if len(run):
            out.append(round(float(metrics.run_mean_utility(run)) / best, 4))
    return out


def _share(flags: list[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def paired(result: dict[str, Any], other: str) -> dict[str, Any] | None:
    """``result["policy"]`` minus ``other``, scenario by scenario, over the scenarios where
    both have a ratio (module docstring: ``paired``); None if there are none."""
    policy = result["policy"]
    diffs = []
    for row in result["scenarios"].values():
        c = row["controllers"]
        a = (c.get(policy) or {}).get("utility_ratio")
        b = (c.get(other) or {}).get("utility_ratio")
        if a is not None and b is not None:
            diffs.append(a - b)
    if not diffs:
        return None
    se = statistics.stdev(diffs) / len(diffs) ** 0.5 if len(diffs) > 1 else None
    return {
        "scenarios": len(diffs),
        "mean_difference": statistics.fmean(diffs),
        "standard_error": se,
        "higher": sum(d > 0 for d in diffs),
        "lower": sum(d < 0 for d in diffs),
    }


def summarize_set(result: dict[str, Any]) -> dict[str, Any]:
    """The per-set numbers (module docstring) from an ``evaluate()`` result."""
    policy = result["policy"]
    ratios: dict[str, float] = {}
    vs_gd, vs_bo, both, spread, runs = [], [], [], {}, []
    for scn, row in result["scenarios"].items():
        c = row["controllers"]
        r = c[policy]["utility_ratio"]
        per_run = c[policy].get("run_ratios") or []
        if r is None:  # n/a: no ratio, so no runs counted either (scored scenarios only)
            continue
        runs.append(len(per_run))
        ratios[scn] = r
        g = (c.get("gd") or {}).get("utility_ratio")
        b = (c.get("bo") or {}).get("utility_ratio")
        if policy != "gd" and g is not None:
            vs_gd.append(r > g)
        if policy != "bo" and b is not None:
            vs_bo.append(r > b)
        if g is not None and b is not None and policy not in ("gd", "bo"):
            both.append(r > g and r > b)
        if len(per_run) >= 2 and max(per_run) - min(per_run) > BIMODAL_GAP:
            spread[scn] = [min(per_run), max(per_run)]
    vals = list(ratios.values())
    # the policies that ran in these invocations (not a reference's stored controllers)
    beside = [p for p in result.get("policies", [policy]) if p not in (policy, "gd", "bo")]
    return {
        "scenarios": len(result["scenarios"]),
        "scored": len(vals),
        "mean": statistics.fmean(vals) if vals else None,
        "min": min(vals) if vals else None,
        "worst": min(ratios, key=lambda k: ratios[k]) if ratios else None,
        "share_ge_090": _share([v >= TARGET for v in vals]),
        "beats_gd": _share(vs_gd),
        "beats_bo": _share(vs_bo),
        "beats_both": _share(both),
        "runs": sum(runs),
        "runs_min_per_scenario": min(runs) if runs else 0,
        "spread": spread,
        "paired": {o: paired(result, o) for o in beside},
    }


def run_suite(policies: tuple[str, ...], suite: str, set_name: str, duration_s: float,
              sweep: tuple[int, ...], out_dir: Path, *, repetitions: int = 1,
              resume: bool = False, echo: Any = lambda s: None,
              reference: Path | Sequence[Path] | None = None) -> dict[str, Any]:  # fmt: skip
    """Evaluate ``policies[0]`` (against GD, BO and a sweep) on one set of a suite."""
    from testbeds.suite import load_suite, suite_scenarios
    from train.evaluate import evaluate

    names = suite_scenarios(suite, set_name)
    spec, _ = load_suite(suite)
    if set_name != "named" and duration_s != spec.ranges.duration_s:
        echo(f"note: {spec.name}'s schedules were drawn for {spec.ranges.duration_s:g} s runs")
    out = out_dir / f"{spec.name}-{set_name}"
    result = evaluate(policies, names, duration_s, sweep, out, repetitions=repetitions,
                      resume=resume, echo=echo, reference=reference)  # fmt: skip
    result["scenarios"] = {Path(k).stem if k.endswith(".toml") else k: v
                           for k, v in result["scenarios"].items()}  # fmt: skip
    result.update(suite=spec.name, set=set_name, seed=spec.seed, repetitions=repetitions)
    result["summary"] = summarize_set(result)
    out.mkdir(parents=True, exist_ok=True)
    return result


def _f(x: float | None, spec: str = ".3f") -> str:
    return "-" if x is None else format(x, spec)


def print_suite(result: dict[str, Any]) -> None:
    """Per scenario: the policy's ratio with its runs and spread, GD's and BO's; then the
    set's numbers (for people; --json is the contract)."""
    from rich.console import Console
    from rich.table import Table

    policy = result["policy"]
    t = Table(
        title=f"{result['suite']} / {result['set']}: {policy} ({result['duration_s']:g} s runs)"
    )
    for col in ("scenario", policy, "runs", "min-max", "gd", "bo", "best N"):
        t.add_column(col, justify="left" if col == "scenario" else "right")
    for scn, row in result["scenarios"].items():
        c = row["controllers"]
        per_run = c[policy].get("run_ratios") or []
        t.add_row(scn, _f(c[policy]["utility_ratio"]), str(len(per_run)),
                  f"{min(per_run):.2f}-{max(per_run):.2f}" if len(per_run) > 1 else "",
                  _f((c.get("gd") or {}).get("utility_ratio")),
                  _f((c.get("bo") or {}).get("utility_ratio")),
                  str(row["best_fixed"].get("utility_streams", "-")))  # fmt: skip
    Console().print(t)
    s = result["summary"]
    click.echo(
        f"{policy} on {result['suite']}/{result['set']}: mean {_f(s['mean'])}, min {_f(s['min'])}"
        f" ({s['worst']}), >= 0.90 on {_f(s['share_ge_090'], '.0%')}, beats GD on"
        f" {_f(s['beats_gd'], '.0%')}, BO on {_f(s['beats_bo'], '.0%')}, both on"
        f" {_f(s['beats_both'], '.0%')}; {s['runs']} runs ({s['runs_min_per_scenario']}+ per"
        f" scenario); spread: {s['spread'] or 'none'}"
    )
    for other, d in (s.get("paired") or {}).items():
        if d is not None:
            click.echo(
                f"{policy} - {other} (same invocations, {d['scenarios']} scenarios): mean"
                f" difference {d['mean_difference']:+.3f} +- {_f(d['standard_error'])} (standard"
                f" error), higher on {d['higher']}, lower on {d['lower']}"
            )
