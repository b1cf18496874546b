"""``summary.json`` and the figures of an experiment, from its run logs.

Every number comes from :mod:`lab.metrics` (mean throughput, time to optimum, loss rate,
utility, JFI, link utilisation, best fixed throughput): this module only picks the runs,
the best fixed throughput and the capacity, and adds what only the experiment knows (which
transfers failed, each sender's completion time for fixed-size data, the sweep).

* ``best_fixed``: from the sweep runs when the experiment has a sweep, else from its own
  ``fixed:N`` policies when transfers run alone; unknown otherwise (no time to optimum).
* capacity (link utilisation): the sum of the scenario's bottleneck rates (raw line rate, so
  TCP/IP/Ethernet overhead counts against utilisation: at most about 95.6 %).
* completion (fixed-size data, after the hybrid-MPTCP paper): ``completion_s`` of each sender
  = its end time minus the earliest start of its group; ``max_completion_s``;
  ``straggler_gap_s`` = latest minus earliest end of the group.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import math
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lab.experiment import TransferResult
    from lab.experiment_config import Experiment
    from lab.runlog import Run


def _read(results: Sequence[TransferResult]) -> dict[str, Run]:
    """Run logs that exist and hold at least one MI, by log path."""
    from lab.runlog import read_run

    runs = {}
    for r in results:
        try:
            run = read_run(r.log)
        except (OSError, ValueError):
            continue
        if len(run):
            runs[r.log] = run
    return runs


def _best_fixed(exp: Experiment, sweep: list[Run], main: list[Run]) -> dict[str, Any] | None:
    from lab import metrics

    pool, source = (sweep, "sweep") if sweep else (main if exp.transfers == 1 else [], "runs")
    thr = metrics.best_fixed(pool, of="throughput")
    if thr is None:
        return None
    util = metrics.best_fixed(pool, of="utility")
    return {
        "source": source,
        "streams": thr[0],
        "throughput_bps": thr[1],
        "utility_streams": util[0] if util else None,
        "mean_utility": util[1] if util else None,
    }


def _sweep_table(sweep: list[Run]) -> dict[str, dict[str, Any]]:
    from lab import metrics

    by_n: dict[int, list[Run]] = defaultdict(list)
    for r in sweep:
        n = metrics.fixed_streams(r.meta.get("policy", ""))
        if n is not None:
            by_n[n].append(r)
    return {
        str(n): {
            "runs": len(rs),
            "mean_throughput_bps": _mean([float(metrics.run_mean_throughput(r)) for r in rs]),
            "mean_utility": _mean([float(metrics.run_mean_utility(r)) for r in rs]),
            "loss_rate": _mean([metrics.run_loss_rate(r) for r in rs]),
        }
        for n, rs in sorted(by_n.items())
    }


def _mean(xs: Sequence[float | None]) -> float | None:
    vals = [float(x) for x in xs if x is not None and not math.isnan(x)]
    return sum(vals) / len(vals) if vals else None


def _completion(results: Sequence[TransferResult], runs: dict[str, Run]) -> dict[str, Any]:
    """Per-group completion times of fixed-size transfers (see the module docstring)."""
    groups: dict[int, list[tuple[int, float, float, bool]]] = defaultdict(list)
    for r in results:
        run = runs.get(r.log)
        start = run.started_at if run is not None else r.launched_at
        secs = r.end.get("seconds")
        end = start + float(secs) if secs is not None else float("nan")
        groups[r.trial.repetition].append((r.transfer, start, end, r.ok))
    reps: list[dict[str, Any]] = []
    for rep, members in sorted(groups.items()):
        t0 = min(s for _, s, _, _ in members)
        ends = [e for _, _, e, ok in members if ok and not math.isnan(e)]
        reps.append(
            {
                "repetition": rep,
                "completion_s": [
                    round(e - t0, 3) if ok and not math.isnan(e) else None
                    for _, _, e, ok in sorted(members)
                ],
                "max_completion_s": round(max(ends) - t0, 3) if ends else None,
                "straggler_gap_s": round(max(ends) - min(ends), 3) if len(ends) > 1 else None,
                "all_completed": len(ends) == len(members),
            }
        )
    return {
        "repetitions": reps,
        "max_completion_s": _mean([x["max_completion_s"] for x in reps]),
        "straggler_gap_s": _mean([x["straggler_gap_s"] for x in reps]),
    }


@dataclasses.dataclass(frozen=True)
class _Analysis:
    runs: dict[str, Run]
    sweep: list[Run]
    main: list[Run]
    best: dict[str, Any] | None
    capacity_bps: float
    summary: Any  # lab.metrics.Summary of the compared runs


def _analyse(exp: Experiment, results: Sequence[TransferResult]) -> _Analysis:
    from lab import metrics
    from testbeds import load_scenario

    runs = _read(results)
    sweep = [runs[r.log] for r in results if r.trial.kind == "sweep" and r.log in runs]
    main = [runs[r.log] for r in results if r.trial.kind == "run" and r.log in runs]
    capacity = sum(p.rate_bps for p in load_scenario(exp.scenario).paths)
    best = _best_fixed(exp, sweep, main)
    # NaN (not None) when there is no best: metrics.summarize would otherwise look for one
    # among the compared runs, which may be competing transfers.
    best_bps = best["throughput_bps"] if best else float("nan")
    ms = metrics.summarize(main, best_fixed_bps=best_bps, capacity_bps=capacity)
    return _Analysis(runs, sweep, main, best, capacity, ms)


def _policy_entry(
    exp: Experiment, spec: str, results: Sequence[TransferResult], a: _Analysis
) -> dict[str, Any]:
    from lab import metrics

    mine = [r for r in results if r.trial.kind == "run" and r.trial.policy == spec]
    ps = a.summary.policies.get(spec)
    entry: dict[str, Any] = dataclasses.asdict(ps) if ps else {"policy": spec, "runs": 0}
    entry["utility_ratio"] = None  # only against the best fixed N of this experiment
    if a.best and a.best.get("mean_utility") and entry.get("mean_utility") is not None:
        entry["utility_ratio"] = metrics.utility_ratio(
            entry["mean_utility"], a.best["mean_utility"]
        )
    mine_runs = [a.runs[r.log] for r in mine if r.log in a.runs]
    entry["mean_streams"] = _mean(
        [metrics.mean_throughput(r.col("streams"), r.col("mi_s")) for r in mine_runs]
    )
    entry["streams_min"] = min((int(min(r.col("streams"))) for r in mine_runs), default=None)
    entry["streams_max"] = max((int(max(r.col("streams"))) for r in mine_runs), default=None)
    entry["failed"] = sum(1 for r in mine if not r.ok)
    entry["logs"] = [r.log for r in mine]
    if exp.data.fixed_size:
        entry["completion"] = _completion(mine, a.runs)
    return entry


def summarize(exp: Experiment, results: Sequence[TransferResult]) -> dict[str, Any]:
    """The content of ``summary.json`` (see docs/experiments.md for every key)."""
    a = _analyse(exp, results)
    failures = [
        {"policy": r.trial.policy, "kind": r.trial.kind, "repetition": r.trial.repetition,
         "transfer": r.transfer, "error": r.end.get("error"), "log": r.log}
        for r in results if not r.ok
    ]  # fmt: skip
    doc = {
        "experiment": exp.name,
        "scenario": a.summary.scenario or exp.scenario,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "duration_s": exp.duration_s,
        "transfers": exp.transfers,
        "starts_s": list(exp.starts_s),
        "stream_rate_bps": exp.stream_rate_bps,
        "capacity_bps": a.capacity_bps,
        "best_fixed": a.best,
        "sweep": _sweep_table(a.sweep),
        "policies": {spec: _policy_entry(exp, spec, results, a) for spec in exp.policies},
        "groups": [dataclasses.asdict(g) for g in a.summary.groups],
        "failed_transfers": len(failures),
        "failures": failures,
    }
    from lab.report import strict_json

    cleaned: dict[str, Any] = strict_json(doc)
    return cleaned


def write_figures(exp: Experiment, results: Sequence[TransferResult], out_dir: Path) -> list[Path]:
    """The report module's figures of the compared runs, as PNG files under ``out_dir``."""
    from lab import report

    a = _analyse(exp, results)
    if not a.main:
        return []
    return [Path(p) for p in report.make_figures(a.main, [a.summary], out_dir, a.capacity_bps)]


def _cell(x: Any, scale: float = 1.0, spec: str = ".1f") -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return format(x / scale, spec)


def print_summary(summary: dict[str, Any]) -> None:
    """summary.json as a rich table (for people; the JSON file is the contract)."""
    from rich.console import Console
    from rich.table import Table

    best = summary.get("best_fixed") or {}
    title = f"{summary['experiment']} on {summary['scenario']} ({summary['duration_s']:g} s runs"
    if best:
        title += f"; best fixed N={best['streams']}: {best['throughput_bps'] / 1e6:.0f} Mbit/s"
    table = Table(title=title + ")")
    cols = [
        "policy",
        "runs",
        "Mbit/s",
        "t_opt (s)",
        "loss %",
        "streams",
        "U ratio",
        "JFI",
        "link %",
    ]
    fixed_size = any("completion" in p for p in summary["policies"].values())
    cols += ["max done (s)", "straggler (s)"] if fixed_size else []
    for c in cols:
        table.add_column(c, justify="left" if c == "policy" else "right", no_wrap=c == "policy")
    for spec, p in summary["policies"].items():
        row = [
            spec,
            f"{p.get('runs', 0)}" + (f" ({p['failed']} failed)" if p.get("failed") else ""),
            _cell(p.get("mean_throughput_bps"), 1e6, ".0f"),
            _cell(p.get("time_to_optimum_s"), spec=".0f")
            + (f" ({p.get('reached')}/{p.get('runs')})" if p.get("runs") else ""),
            _cell(p.get("loss_rate"), 0.01, ".3f"),
            _cell(p.get("mean_streams")),
            _cell(p.get("utility_ratio"), spec=".3f"),
            _cell(p.get("jfi"), spec=".3f"),
            _cell(p.get("link_utilization"), 0.01, ".1f"),
        ]
        if fixed_size:
            comp = p.get("completion", {})
            row += [_cell(comp.get("max_completion_s")), _cell(comp.get("straggler_gap_s"))]
        table.add_row(*row)
    console = Console()
    if not console.is_terminal:
        console.width = max(console.width, 140)
    console.print(table)
