"""Every number users compare, computed once here and reused by ``report``, ``experiment`` and
``evaluate``. Definitions (also in ``docs/runlog-and-report.md``):

- *mean throughput*: time-weighted mean of the per-MI throughput (weights = MI durations).
- *best fixed throughput*: over the fixed-N runs of a sweep (policy ``fixed:N``), the mean
  throughput of each N averaged over its repetitions; the highest of those.
- *time to optimum*: the first time t (end of an MI, seconds since the start; at the earliest
  the end of the 3rd MI) from which the trailing 3-MI moving average of throughput stays at or above 90 % of the best fixed
  throughput for the rest of the run, or until ``end`` (e.g. when competition changes).
- *loss rate*: total retransmitted / total sent data segments over the whole run.
- *JFI*: Jain's index (sum x)^2 / (n sum x^2) of the transfers' mean throughputs over the
  interval in which all of them run; the instantaneous series uses the transfers active at
  each instant.
- *link utilisation*: sum of the transfers' mean throughputs (same interval) / capacity.
- *utility ratio*: mean utility / best fixed-N mean utility.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from lab.runlog import Run

Floats = Sequence[float] | np.ndarray
"""A series of numbers: a list or a numpy array."""

MA_WINDOW = 3
"""MIs in the moving average used by time to optimum."""
OPT_TOLERANCE = 0.10
"""Time to optimum: how far (relative) below the best fixed throughput still counts as there."""


def _f(x: Floats) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def mean_throughput(thr_bps: Floats, mi_s: Floats | None = None) -> float:
    """Time-weighted mean throughput (plain mean without MI durations); NaN if no samples."""
    x = _f(thr_bps)
    w = np.ones_like(x) if mi_s is None else _f(mi_s)
    ok = ~np.isnan(x) & ~np.isnan(w) & (w > 0)
    if not ok.any():
        return float("nan")
    return float(np.sum(x[ok] * w[ok]) / np.sum(w[ok]))


def moving_average(x: Floats, window: int = MA_WINDOW) -> np.ndarray:
    """Trailing moving average; the first ``window - 1`` values average what is available."""
    a = _f(x)
    c = np.cumsum(np.insert(a, 0, 0.0))
    idx = np.arange(1, len(a) + 1)
    lo = np.maximum(idx - window, 0)
    return (c[idx] - c[lo]) / (idx - lo)


def time_to_optimum(
    t: Floats,
    thr_bps: Floats,
    best_bps: float,
    *,
    end: float | None = None,
    window: int = MA_WINDOW,
    tolerance: float = OPT_TOLERANCE,
) -> float | None:
    """First t from which the moving average stays >= (1 - tolerance) * best_bps (until ``end``);
    None if it never settles there. The average is over full windows, so the earliest
    possible time is the end of the ``window``-th MI."""
    # the moving average exists from the window-th MI on (as in train/simeval.py)
    tt, ma = _f(t)[window - 1 :], moving_average(thr_bps, window)[window - 1 :]
    if end is not None:
        keep = tt <= end + 1e-9
        tt, ma = tt[keep], ma[keep]
    if len(tt) == 0 or not best_bps > 0:
        return None
    bad = np.flatnonzero(~(ma >= (1.0 - tolerance) * best_bps))
    first = 0 if len(bad) == 0 else int(bad[-1]) + 1
    return float(tt[first]) if first < len(tt) else None


def loss_rate(
    retrans_segs: Floats,
    data_segs_out: Floats,
    loss_rates: Floats | None = None,
) -> float | None:
    """Total retransmitted / total sent segments; falls back on the mean per-MI loss rate when
    the segment counters are unknown (all zero); None when nothing is known."""
    sent = np.nansum(_f(data_segs_out))
    if sent > 0:
        return float(np.nansum(_f(retrans_segs)) / sent)
    if loss_rates is not None:
        lr = _f(loss_rates)
        lr = lr[~np.isnan(lr)]
        if len(lr):
            return float(np.mean(lr))
    return None


def jain_index(xs: Floats) -> float:
    """Jain's fairness index (sum x)^2 / (n * sum x^2); 1 for one value; NaN for none."""
    x = _f(xs)
    if len(x) == 0:
        return float("nan")
    sq = float(np.sum(x * x))
    return 1.0 if sq == 0 else float(np.sum(x) ** 2 / (len(x) * sq))


def link_utilization(throughputs_bps: Floats, capacity_bps: float) -> float:
    """Sum of throughputs over the link capacity."""
    if not capacity_bps > 0:
        raise ValueError(f"link capacity must be > 0 bit/s, got {capacity_bps}")
    return float(np.sum(_f(throughputs_bps)) / capacity_bps)


def utility_ratio(mean_utility: float, best_fixed_mean_utility: float) -> float | None:
    """Mean utility over the best fixed-N mean utility; None when the latter is not positive."""
    return mean_utility / best_fixed_mean_utility if best_fixed_mean_utility > 0 else None


@dataclass(frozen=True)
class Transfer:
    """One transfer on an absolute time axis (for concurrent transfers)."""

    start: float
    """Start time (POSIX seconds)."""
    t_end: np.ndarray
    """Absolute end time of each MI."""
    mi_s: np.ndarray
    """Duration of each MI."""
    thr_bps: np.ndarray
    """Throughput of each MI."""

    @classmethod
    def of(cls, run: Run) -> Transfer:
        start = run.started_at
        return cls(start, start + run.col("t"), run.col("mi_s"), run.col("throughput_bps"))

    @property
    def end(self) -> float:
        return float(self.t_end[-1]) if len(self.t_end) else self.start

    def mean_between(self, lo: float, hi: float) -> float:
        """Time-weighted mean throughput over [lo, hi] (MIs weighted by their overlap)."""
        a = np.maximum(self.t_end - self.mi_s, lo)
        b = np.minimum(self.t_end, hi)
        return mean_throughput(self.thr_bps, np.clip(b - a, 0.0, None))

    def at(self, when: float) -> float:
        """Throughput of the MI (start, end] holding ``when``; NaN when the transfer is not running."""
        eps = 1e-6  # absolute times are large floats: allow for rounding
        i = int(np.searchsorted(self.t_end, when - eps, side="left"))
        if i < len(self.t_end) and self.t_end[i] - self.mi_s[i] < when - eps:
            return float(self.thr_bps[i])
        return float("nan")


def overlap(transfers: Sequence[Transfer]) -> tuple[float, float] | None:
    """The interval in which all transfers run, or None if they never all run together."""
    if not transfers:
        return None
    lo, hi = max(x.start for x in transfers), min(x.end for x in transfers)
    return (lo, hi) if hi > lo else None


def concurrent_means(transfers: Sequence[Transfer]) -> list[float] | None:
    """Each transfer's mean throughput over the interval in which all of them run."""
    span = overlap(transfers)
    return None if span is None else [x.mean_between(*span) for x in transfers]


def concurrent_jfi(transfers: Sequence[Transfer]) -> float | None:
    """Jain's index of the transfers' mean throughputs while all of them run."""
    means = concurrent_means(transfers)
    return None if means is None else jain_index(means)


def jfi_series(
    transfers: Sequence[Transfer], step_s: float = 1.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Instantaneous JFI on a grid of ``step_s``: (seconds since the first start, JFI over the
    transfers running then, how many run)."""
    if not transfers:
        return np.array([]), np.array([]), np.array([])
    t0, t1 = min(x.start for x in transfers), max(x.end for x in transfers)
    rel = np.arange(step_s, t1 - t0 + 1e-6, step_s)  # relative: absolute times lose digits
    grid = t0 + rel
    jfi, active = np.full(len(grid), np.nan), np.zeros(len(grid), dtype=int)
    for i, g in enumerate(grid):
        vals = [v for v in (x.at(g) for x in transfers) if not np.isnan(v)]
        active[i] = len(vals)
        if vals:
            jfi[i] = jain_index(vals)
    return rel, jfi, active


def fixed_streams(policy: str) -> int | None:
    """N of a ``fixed:N`` policy spec, else None."""
    name, _, arg = policy.partition(":")
    if name.strip().lower() != "fixed":
        return None
    try:
        return int(arg)
    except ValueError:
        return None


def active_end(run: Run) -> float | None:
    """End of the sending period of a ``--duration`` run (its ``duration_s`` metadata, plus
    half an MI of slack): after it the sender only drains blocks in flight, so the MIs that
    follow are not steady state and must not decide the time to optimum. None otherwise."""
    raw = run.meta.get("duration_s")
    try:
        return float(raw) + 0.5 if raw else None
    except ValueError:
        return None


def run_mean_throughput(run: Run) -> float:
    """Mean throughput over the run's MIs, drain MIs left out (the end of a transfer, when
    only blocks in flight remain, says nothing about the path or the policy)."""
    m = run.steady()
    return mean_throughput(run.col("throughput_bps")[m], run.col("mi_s")[m])


def run_loss_rate(run: Run) -> float | None:
    return loss_rate(run.col("retrans_segs"), run.col("data_segs_out"), run.col("loss_rate"))


def run_mean_utility(run: Run) -> float:
    """Mean utility over the run's MIs, drain MIs left out."""
    m = run.steady()
    return mean_throughput(run.col("utility")[m], run.col("mi_s")[m])


def intervals_mean_utility(mis: Sequence[dict[str, Any]]) -> float:
    """:func:`run_mean_utility` over a run's ``interval`` records (``lab.runlog.read_intervals``,
    the ``--json-stream`` log) or any slice of them, e.g. a window of MIs or MIs spliced from
    two runs: drain MIs left out, each MI weighted by its length."""
    kept = [e for e in mis if e.get("drain") is not True]
    return mean_throughput([e["utility"] for e in kept], [e["mi_s"] for e in kept])


def best_fixed(runs: Sequence[Run], of: str = "throughput") -> tuple[int, float] | None:
    """(N, value) of the best fixed-N runs: ``of`` is ``"throughput"`` or ``"utility"``; each
    N's value is averaged over its repetitions. None when there is no fixed-N run."""
    per_n: dict[int, list[float]] = defaultdict(list)
    measure = run_mean_throughput if of == "throughput" else run_mean_utility
    for r in runs:
        n = fixed_streams(r.meta.get("policy", ""))
        if n is not None and len(r):
            per_n[n].append(measure(r))
    if not per_n:
        return None
    n = max(per_n, key=lambda k: float(np.mean(per_n[k])))
    return n, float(np.mean(per_n[n]))


def _mean(xs: Sequence[float | None]) -> float | None:
    vals = [x for x in xs if x is not None and not np.isnan(x)]
    return float(np.mean(vals)) if vals else None


def groups_of(runs: Sequence[Run]) -> dict[str, list[Run]]:
    """Runs sharing a ``group`` metadata value (concurrent transfers), by group."""
    out: dict[str, list[Run]] = defaultdict(list)
    for r in runs:
        if r.group is not None:
            out[r.group].append(r)
    return dict(out)


def competition_change(run: Run, group: Sequence[Run]) -> float | None:
    """Seconds after ``run`` started at which another member of its group starts or ends."""
    start = run.started_at
    events = []
    for other in group:
        if other is run:
            continue
        x = Transfer.of(other)
        events += [e - start for e in (x.start, x.end) if e - start > 1e-9]
    return min(events) if events else None


@dataclass(frozen=True)
class GroupSummary:
    """Concurrent transfers (runs sharing a ``group``) while all of them run."""

    group: str
    policies: list[str]
    """Policy of each transfer, in start order."""
    overlap_s: float
    """Length of the interval in which all transfers run (0 if they never all do)."""
    means_bps: list[float]
    """Each transfer's mean throughput over that interval."""
    jfi: float | None
    link_utilization: float | None
    """Sum of ``means_bps`` over the capacity (None without a capacity)."""


def summarize_group(name: str, runs: Sequence[Run], capacity_bps: float | None) -> GroupSummary:
    ordered = sorted(runs, key=lambda r: r.started_at)
    transfers = [Transfer.of(r) for r in ordered]
    span = overlap(transfers)
    means = concurrent_means(transfers) or []
    util = link_utilization(means, capacity_bps) if means and capacity_bps else None
    return GroupSummary(
        group=name,
        policies=[r.policy for r in ordered],
        overlap_s=0.0 if span is None else span[1] - span[0],
        means_bps=means,
        jfi=jain_index(means) if means else None,
        link_utilization=util,
    )


@dataclass(frozen=True)
class PolicySummary:
    """The numbers of one policy over its runs (on one scenario)."""

    policy: str
    runs: int
    mean_throughput_bps: float | None
    """Mean over runs of each run's mean throughput."""
    time_to_optimum_s: float | None
    """Mean over the runs that reached the optimum (see ``reached``); None if none did."""
    reached: int
    """Runs that reached the optimum (needs a best fixed throughput)."""
    loss_rate: float | None
    """Mean over runs of each run's loss rate."""
    mean_utility: float | None
    utility_ratio: float | None
    """Mean utility over the best fixed-N mean utility."""
    jfi: float | None
    """Mean JFI of the concurrent groups this policy took part in."""
    link_utilization: float | None
    """Mean over its groups (or, without groups, over its runs) of throughput / capacity."""


@dataclass(frozen=True)
class Summary:
    """Everything ``report`` prints and ``experiment`` writes to ``summary.json``."""

    scenario: str
    best_fixed_bps: float | None
    best_fixed_streams: int | None
    """N of the best fixed run (None when the best came from outside, or is unknown)."""
    capacity_bps: float | None
    policies: dict[str, PolicySummary]
    groups: list[GroupSummary]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def summarize(
    runs: Sequence[Run],
    *,
    best_fixed_bps: float | None = None,
    capacity_bps: float | None = None,
) -> Summary:
    """Per-policy numbers of runs on ONE scenario. The best fixed throughput is ``best_fixed_bps``
    if given, else found among the ``fixed:N`` runs (None if there are none)."""
    bf = best_fixed(runs)
    best_n = None
    if best_fixed_bps is None and bf is not None:
        best_n, best_fixed_bps = bf
    bu = best_fixed(runs, of="utility")
    groups = groups_of(runs)
    gsum = [summarize_group(g, rs, capacity_bps) for g, rs in sorted(groups.items())]
    by_policy: dict[str, list[Run]] = defaultdict(list)
    for r in runs:
        by_policy[r.policy].append(r)
    out = {}
    for pol, rs in by_policy.items():
        tto = []
        for r in rs:
            ends = [competition_change(r, groups[r.group]) if r.group else None, active_end(r)]
            end = min((e for e in ends if e is not None), default=None)
            if best_fixed_bps and len(r):
                tto.append(
                    time_to_optimum(r.col("t"), r.col("throughput_bps"), best_fixed_bps, end=end)
                )
        reached = [x for x in tto if x is not None]
        mu = _mean([run_mean_utility(r) for r in rs if len(r)])
        mine = [g for g in gsum if pol in g.policies]
        if mine:
            lu = _mean([g.link_utilization for g in mine])
        else:
            lu = (
                _mean([run_mean_throughput(r) / capacity_bps for r in rs if len(r)])
                if capacity_bps
                else None
            )
        out[pol] = PolicySummary(
            policy=pol,
            runs=len(rs),
            mean_throughput_bps=_mean([run_mean_throughput(r) for r in rs if len(r)]),
            time_to_optimum_s=_mean(reached),
            reached=len(reached),
            loss_rate=_mean([run_loss_rate(r) for r in rs]),
            mean_utility=mu,
            utility_ratio=utility_ratio(mu, bu[1]) if mu is not None and bu else None,
            jfi=_mean([g.jfi for g in mine]),
            link_utilization=lu,
        )
    scenario = runs[0].scenario if runs else ""
    return Summary(scenario, best_fixed_bps, best_n, capacity_bps, out, gsum)
