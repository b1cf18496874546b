"""``xfer report RUN.parquet...``: figures (PNG) and a summary table from run logs.

Figures, in the style of the core paper: throughput and stream count over time (Fig. 1), loss
over time, box plots of the runs' mean throughput per policy (Fig. 2), and for each group of
concurrent transfers (runs sharing the ``group`` metadata, aligned by ``started_at``) their
throughput and the instantaneous Jain index (Fig. 3). Every number comes from
:mod:`lab.metrics`; this module only draws and prints.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from lab.metrics import Summary, Transfer, jfi_series, run_mean_throughput, summarize  # noqa: E402
from lab.runlog import Run, read_runs  # noqa: E402

MBIT = 1e6


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "default"


def _colors(runs: Sequence[Run]) -> dict[str, Any]:
    cmap = plt.get_cmap("tab10")
    return {p: cmap(i % 10) for i, p in enumerate(sorted({r.policy for r in runs}))}


def by_scenario(runs: Sequence[Run]) -> dict[str, list[Run]]:
    """Runs grouped by their ``scenario`` metadata, in first-seen order."""
    out: dict[str, list[Run]] = defaultdict(list)
    for r in runs:
        out[r.scenario].append(r)
    return dict(out)


def _save(fig: Figure, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _legend_once(ax: Any, **kw: Any) -> None:
    handles, labels = ax.get_legend_handles_labels()
    uniq = dict(zip(labels, handles, strict=True))
    if uniq:
        ax.legend(uniq.values(), uniq.keys(), fontsize=8, **kw)


def fig_timeseries(runs: Sequence[Run], path: Path, best_bps: float | None, title: str) -> Path:
    """Fig. 1 style: throughput (top) and stream count (bottom) over time, one line per run."""
    colors = _colors(runs)
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(9, 6), sharex=True, height_ratios=[2, 1])
    for r in runs:
        t, c = r.col("t"), colors[r.policy]
        ax1.plot(t, r.col("throughput_bps") / MBIT, color=c, lw=1.2, alpha=0.85, label=r.policy)
        ax2.step(t, r.col("streams"), where="post", color=c, lw=1.2, alpha=0.85, label=r.policy)
    if best_bps:
        ax1.axhline(best_bps / MBIT, color="k", ls="--", lw=0.8, label="best fixed")
        ax1.axhline(0.9 * best_bps / MBIT, color="grey", ls=":", lw=0.8, label="90 % of best")
    ax1.set_ylabel("throughput (Mbit/s)")
    ax1.set_ylim(bottom=0)
    ax1.set_title(title)
    ax2.set_ylabel("streams")
    ax2.set_xlabel("time (s)")
    ax2.set_ylim(bottom=0)
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
    _legend_once(ax1, loc="lower right")
    return _save(fig, path)


def fig_loss(runs: Sequence[Run], path: Path, title: str) -> Path:
    """Loss rate (retransmitted / sent segments per MI, %) over time, one line per run."""
    colors = _colors(runs)
    fig, ax = plt.subplots(figsize=(9, 3.5))
    for r in runs:
        ax.plot(r.col("t"), 100 * r.col("loss_rate"), color=colors[r.policy], lw=1, label=r.policy)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("loss rate (%)")
    ax.set_ylim(bottom=0)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    _legend_once(ax, loc="upper right")
    return _save(fig, path)


def fig_box(scenarios: dict[str, list[Run]], path: Path) -> Path:
    """Fig. 2 style: box plots of each run's mean throughput, per policy, per scenario."""
    fig, axes = plt.subplots(
        1, len(scenarios), figsize=(4.5 * len(scenarios) + 1.5, 4), squeeze=False
    )
    for ax, (scen, runs) in zip(axes[0], scenarios.items(), strict=True):
        pols = sorted({r.policy for r in runs})
        data = [
            [run_mean_throughput(r) / MBIT for r in runs if r.policy == p and len(r)] for p in pols
        ]
        ax.boxplot(data)
        ax.set_xticks(range(1, len(pols) + 1), pols)
        for i, d in enumerate(data, start=1):  # show the runs themselves too
            ax.plot(np.full(len(d), i) + np.linspace(-0.08, 0.08, len(d)), d, "o", ms=3, alpha=0.6)
        ax.set_title(scen or "(no scenario)")
        ax.set_ylabel("mean throughput (Mbit/s)")
        ax.tick_params(axis="x", labelrotation=30)
        ax.grid(alpha=0.3, axis="y")
    return _save(fig, path)


def fig_concurrent(group: str, runs: Sequence[Run], path: Path, capacity_bps: float | None) -> Path:
    """Fig. 3 style: throughput of concurrent transfers (top) and instantaneous JFI (bottom)."""
    ordered = sorted(runs, key=lambda r: r.started_at)
    transfers = [Transfer.of(r) for r in ordered]
    t0 = transfers[0].start
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(9, 6), sharex=True, height_ratios=[2, 1])
    for i, (r, x) in enumerate(zip(ordered, transfers, strict=True), start=1):
        if len(x.t_end):  # a step per MI, from the start of the first one
            xs = np.concatenate([[x.t_end[0] - x.mi_s[0]], x.t_end]) - t0
            ys = np.concatenate([[x.thr_bps[0]], x.thr_bps]) / MBIT
            ax1.step(xs, ys, where="pre", lw=1.2, label=f"transfer {i} ({r.policy})")
    ts, jfi, active = jfi_series(transfers)
    total = [np.nansum([x.at(t0 + t) for x in transfers]) for t in ts]
    ax1.step(ts, np.asarray(total) / MBIT, where="pre", color="grey", ls="--", lw=1, label="total")
    if capacity_bps:
        ax1.axhline(capacity_bps / MBIT, color="k", ls=":", lw=0.8, label="capacity")
    ax2.step(ts, jfi, where="pre", color="tab:purple", lw=1.2, label="Jain index")
    ax2.fill_between(
        ts,
        0,
        1.05,
        where=active == len(transfers),
        color="tab:green",
        alpha=0.08,
        step="pre",
        label="all running",
    )
    ax1.set_ylabel("throughput (Mbit/s)")
    ax1.set_ylim(bottom=0)
    ax1.set_title(f"concurrent transfers: {group}")
    ax2.set_ylabel("Jain index")
    ax2.set_ylim(0, 1.05)
    ax2.set_xlabel("time since the first start (s)")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        _legend_once(ax, loc="lower right")
    return _save(fig, path)


def make_figures(
    runs: Sequence[Run], summaries: Sequence[Summary], out: Path, capacity_bps: float | None = None
) -> list[Path]:
    """Write every figure for ``runs`` under ``out``; the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    scen = by_scenario(runs)
    best = {s.scenario: s.best_fixed_bps for s in summaries}
    paths = []
    for name, rs in scen.items():
        sfx = "" if len(scen) == 1 else f"_{_safe(name)}"
        title = f"scenario: {name}" if name else ""
        paths.append(
            fig_timeseries(rs, out / f"throughput_streams{sfx}.png", best.get(name), title)
        )
        paths.append(fig_loss(rs, out / f"loss{sfx}.png", title))
    paths.append(fig_box(scen, out / "throughput_box.png"))
    groups: dict[str, list[Run]] = defaultdict(list)
    for r in runs:
        if r.group:
            groups[r.group].append(r)
    for g, rs in sorted(groups.items()):
        paths.append(fig_concurrent(g, rs, out / f"concurrent_{_safe(g)}.png", capacity_bps))
    return paths


def strict_json(x: Any) -> Any:
    """NaN -> None, recursively, so the output is strict JSON."""
    if isinstance(x, float) and math.isnan(x):
        return None
    if isinstance(x, dict):
        return {k: strict_json(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [strict_json(v) for v in x]
    return x


def _fmt(x: float | None, scale: float = 1.0, digits: int = 1) -> str:
    return (
        "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x * scale:.{digits}f}"
    )


_CAPTION = (
    "Mbit/s: mean throughput; t90: time to 90 % of the best fixed throughput "
    "(runs that reached it); U ratio: mean utility / best fixed-N utility; "
    "link %: throughput / capacity"
)


def print_summary(summaries: Sequence[Summary]) -> None:
    """The human table (rich); scripts should use ``--json``."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    for s in summaries:
        best = f"best fixed {_fmt(s.best_fixed_bps, 1 / MBIT)} Mbit/s"
        if s.best_fixed_streams:
            best += f" (fixed:{s.best_fixed_streams})"
        table = Table(title=f"{s.scenario or '(no scenario)'}: {best}", caption=_CAPTION)
        table.add_column("policy", overflow="fold", min_width=12)
        for col in ("runs", "Mbit/s", "t90 (s)", "loss %", "JFI", "U ratio", "link %"):
            table.add_column(col, justify="right", no_wrap=True)
        for p in sorted(s.policies.values(), key=lambda p: p.policy):
            tto = _fmt(p.time_to_optimum_s) + (
                f" ({p.reached}/{p.runs})" if s.best_fixed_bps else ""
            )
            table.add_row(
                p.policy,
                str(p.runs),
                _fmt(p.mean_throughput_bps, 1 / MBIT),
                tto,
                _fmt(p.loss_rate, 100, 3),
                _fmt(p.jfi, 1, 3),
                _fmt(p.utility_ratio, 1, 3),
                _fmt(p.link_utilization, 100),
            )
        console.print(table)


@click.command("report")
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--out",
    "out_dir",
    default="report",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Directory for the PNG figures.",
)
@click.option(
    "--capacity-bps",
    type=float,
    default=None,
    help="Bottleneck capacity in bit/s (for link utilisation).",
)
@click.option(
    "--best-fixed-bps",
    type=float,
    default=None,
    help="Best fixed-N throughput in bit/s (default: found among fixed:N runs given).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the summary as JSON instead of a table."
)
def report_cmd(
    runs: tuple[str, ...],
    out_dir: str,
    capacity_bps: float | None,
    best_fixed_bps: float | None,
    as_json: bool,
) -> None:
    """Figures and a summary table from Parquet run logs (RUN.parquet...)."""
    try:
        loaded = read_runs(runs)
    except (ValueError, OSError) as exc:
        raise click.ClickException(str(exc)) from exc
    summaries = [
        summarize(rs, best_fixed_bps=best_fixed_bps, capacity_bps=capacity_bps)
        for rs in by_scenario(loaded).values()
    ]
    figures = make_figures(loaded, summaries, Path(out_dir), capacity_bps)
    if as_json:
        doc = {"scenarios": [s.to_dict() for s in summaries], "figures": [str(p) for p in figures]}
        click.echo(json.dumps(strict_json(doc), indent=2))
        return
    print_summary(summaries)
    click.echo("figures:\n" + "\n".join(f"  {p}" for p in figures))
