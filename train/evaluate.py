"""``xfer evaluate``: a policy against the best fixed stream count, GD and BO, on testbed scenarios.

For each scenario an experiment is built and run by the experiment runner
(:func:`xfer.experiment.run_experiment`): a sweep of fixed stream counts (each run alone) finds
the best fixed N, then the policy, ``gd`` and ``bo`` run for the same duration. Per scenario
and controller the result has

* ``utility_ratio``: the controller's mean utility over the run (Eq. 3, the per-MI ``utility``
  of the run log) divided by the best fixed N's mean utility (the highest over the sweep);
* ``time_to_optimum_s`` and ``mean_throughput_bps`` as defined in ``xfer.metrics`` (the same
  numbers ``xfer experiment`` and ``xfer report`` print).

The per-stream cap of a scenario comes from its ``[meta] stream_rate`` (paper-fig1: 50 Mbit/s).
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path
from typing import Any

import click

DEFAULT_SWEEP = (1, 2, 4, 8, 12, 16, 20, 24, 32, 48, 64)
"""Fixed stream counts tried on every scenario (dense around the paper-fig1 optimum of 20)."""


def default_scenarios() -> list[str]:
    """Shipped single-path scenarios with one sender/receiver pair."""
    from testbeds import list_scenarios, load_scenario

    names = []
    for name in list_scenarios():
        scn = load_scenario(name)
        if len(scn.paths) == 1 and scn.pairs == 1:
            names.append(name)
    return names


def scenario_experiment(
    scenario: str, policy: str, duration_s: float, sweep: tuple[int, ...], repetitions: int = 1
) -> Any:
    """The experiment ``xfer evaluate`` runs on one scenario."""
    from testbeds import load_scenario
    from testbeds.scenario import parse_rate
    from xfer.experiment_config import Experiment, SweepSpec

    scn = load_scenario(scenario)
    rate_raw = scn.meta.get("stream_rate")
    rate = parse_rate(rate_raw, f"{scenario} [meta] stream_rate") if rate_raw else None
    policies = tuple(dict.fromkeys((policy, "gd", "bo")))
    return Experiment(
        name=f"evaluate-{scn.name}"[:40],
        description=f"xfer evaluate: {policy} vs best fixed N, gd, bo on {scn.name}",
        scenario=scenario,
        policies=policies,
        repetitions=repetitions,
        duration_s=duration_s,
        stream_rate_bps=rate,
        cc=scn.sysctls.congestion_control,
        sweep=SweepSpec(tuple(sorted(set(sweep))), duration_s, 1),
        source=f"xfer evaluate ({scenario})",
    )


def scenario_rows(summary: dict[str, Any], policies: tuple[str, ...]) -> dict[str, Any]:
    """The evaluation entry of one scenario, from the experiment's summary.json."""
    best = summary.get("best_fixed") or {}
    controllers = {}
    for p in policies:
        s = summary.get("policies", {}).get(p, {})
        controllers[p] = {
            "utility_ratio": s.get("utility_ratio"),
            "mean_utility": s.get("mean_utility"),
            "time_to_optimum_s": s.get("time_to_optimum_s"),
            "mean_throughput_bps": s.get("mean_throughput_bps"),
            "loss_rate": s.get("loss_rate"),
            "mean_streams": s.get("mean_streams"),
        }
    return {"best_fixed": best, "controllers": controllers}


def evaluate(
    policy: str,
    scenarios: list[str],
    duration_s: float,
    sweep: tuple[int, ...],
    out_dir: Path,
    *,
    repetitions: int = 1,
    resume: bool = False,
    echo: Any = lambda s: None,
) -> dict[str, Any]:
    """Run the evaluation on every scenario (one at a time); returns the JSON result."""
    from xfer.experiment import run_experiment

    result: dict[str, Any] = {"policy": policy, "duration_s": duration_s, "sweep": list(sweep)}
    per: dict[str, Any] = {}
    for scn in scenarios:
        exp = scenario_experiment(scn, policy, duration_s, sweep, repetitions)
        echo(f"xfer evaluate: {scn} ({len(sweep)} fixed N + {len(exp.policies)} controllers)")
        summary = run_experiment(exp, out_dir / scn, resume=resume, echo=echo)
        per[scn] = scenario_rows(summary, exp.policies)
    result["scenarios"] = per
    ratios = [
        r["controllers"][policy]["utility_ratio"]
        for r in per.values()
        if r["controllers"][policy]["utility_ratio"] is not None
    ]
    result["utility_ratio_mean"] = statistics.fmean(ratios) if ratios else None
    result["utility_ratio_min"] = min(ratios) if ratios else None
    return result


def _fmt(x: Any, scale: float = 1.0, spec: str = ".3f") -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return format(x / scale, spec)


def print_table(result: dict[str, Any]) -> None:
    """The evaluation as a rich table (for people; --json is the contract)."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"xfer evaluate: {result['policy']} ({result['duration_s']:g} s runs)")
    for col in (
        "scenario",
        "controller",
        "utility ratio",
        "t_opt (s)",
        "Mbit/s",
        "loss %",
        "best N",
    ):
        table.add_column(col, justify="left" if col in ("scenario", "controller") else "right")
    for scn, row in result["scenarios"].items():
        best = row["best_fixed"]
        for name, c in row["controllers"].items():
            table.add_row(
                scn,
                name,
                _fmt(c["utility_ratio"]),
                _fmt(c["time_to_optimum_s"], spec=".0f"),
                _fmt(c["mean_throughput_bps"], 1e6, ".0f"),
                _fmt(c["loss_rate"], 0.01, ".3f"),
                str(best.get("streams", "-")),
            )
    Console(stderr=False).print(table)
    mean = result.get("utility_ratio_mean")
    if mean is not None:
        click.echo(
            f"{result['policy']}: utility ratio mean {mean:.3f}, min {result['utility_ratio_min']:.3f}"
        )


def _ints(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a comma-separated list of integers") from None
    if not values or min(values) < 1:
        raise click.BadParameter("stream counts must be integers >= 1")
    return values


@click.command("evaluate")
@click.option(
    "--policy", default="ppo", show_default=True, help="Policy to evaluate, e.g. ppo or ppo:CKPT."
)
@click.option(
    "--scenarios",
    help="Comma-separated testbed scenarios [default: single-path, single-pair ones].",
)
@click.option(
    "--duration", default=30.0, show_default=True, help="Seconds per run (sweep runs too)."
)
@click.option(
    "--sweep",
    "sweep_text",
    default=",".join(map(str, DEFAULT_SWEEP)),
    show_default=True,
    help="Fixed stream counts to sweep.",
)
@click.option(
    "--repetitions",
    default=1,
    show_default=True,
    type=click.IntRange(1, 20),
    help="Runs per controller.",
)
@click.option(
    "--out", "out_dir", default="runs/evaluate", show_default=True, type=click.Path(file_okay=False)
)
@click.option("--resume", is_flag=True, help="Keep runs that already finished in --out.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the result as JSON (also written to OUT/evaluate.json).",
)
def evaluate_cmd(policy: str, scenarios: str | None, duration: float, sweep_text: str,
                 repetitions: int, out_dir: str, resume: bool, as_json: bool) -> None:  # fmt: skip
    """Evaluate a policy against the best fixed stream count (a sweep of N), GD and BO on
    emulated testbed scenarios: utility ratio, time to optimum, mean throughput."""
    from policy.base import ControllerConfig, make_controller
    from testbeds import ScenarioError, load_scenario

    try:
        make_controller(policy, ControllerConfig())
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--policy") from None
    names = (
        [s.strip() for s in scenarios.split(",") if s.strip()] if scenarios else default_scenarios()
    )
    try:
        for name in names:
            load_scenario(name)
    except ScenarioError as exc:
        raise click.BadParameter(str(exc), param_hint="--scenarios") from None
    out = Path(out_dir)

    def echo(s: str) -> None:
        click.echo(s, err=True)

    result = evaluate(policy, names, duration, _ints(sweep_text), out,
                      repetitions=repetitions, resume=resume, echo=echo)  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    (out / "evaluate.json").write_text(json.dumps(result, indent=1))
    if as_json:
        click.echo(json.dumps(result, indent=1))
    else:
        print_table(result)
