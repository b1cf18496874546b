"""lab.metrics against hand-computed values."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pytest

from lab import metrics as m
from lab.runlog import Run
from xfer.observe.runlog import SCHEMA

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def make_run(
    policy: str,
    thr_mbit: Sequence[float],
    *,
    start: float = 0.0,
    mi: float = 1.0,
    group: str | None = None,
    retrans: Sequence[int] | None = None,
    segs: Sequence[int] | None = None,
    utility: Sequence[float] | None = None,
) -> Run:
    """An in-memory run: MIs of ``mi`` seconds starting ``start`` s after T0."""
    n = len(thr_mbit)
    cols: dict[str, list[object]] = {f.name: [None] * n for f in SCHEMA}
    cols.update(
        t=[mi * (i + 1) for i in range(n)],
        mi_s=[mi] * n,
        streams=[4] * n,
        throughput_bps=[x * 1e6 for x in thr_mbit],
        goodput_bps=[x * 1e6 for x in thr_mbit],
        utility=list(utility) if utility is not None else [x / 2 for x in thr_mbit],
        retrans_segs=list(retrans) if retrans is not None else [0] * n,
        data_segs_out=list(segs) if segs is not None else [0] * n,
        paths=[[] for _ in range(n)],
    )
    meta = {
        "policy": policy,
        "scenario": "s",
        "started_at": (T0 + dt.timedelta(seconds=start)).isoformat(),
    }
    if group:
        meta["group"] = group
    return Run("mem", pa.Table.from_pydict(cols, schema=SCHEMA), meta)


def test_mean_throughput() -> None:
    assert m.mean_throughput([1, 2, 3]) == 2
    assert m.mean_throughput([1, 2, 3], [1, 1, 2]) == pytest.approx(9 / 4)  # (1 + 2 + 6) / 4
    assert m.mean_throughput([1, float("nan"), 3]) == 2
    assert math.isnan(m.mean_throughput([]))


def test_moving_average() -> None:
    assert m.moving_average([3, 6, 9, 12]).tolist() == [3, 4.5, 6, 9]


def test_time_to_optimum() -> None:
    t = [1, 2, 3, 4, 5, 6, 7, 8]
    thr = [100, 500, 900, 950, 1000, 980, 990, 1000]
    # MA3: 100, 300, 500, 783.3, 950, 976.7, 990, 990 -> >= 900 from the 5th MI on
    assert m.time_to_optimum(t, thr, 1000) == 5.0
    # a late dip: MA3 of the last MI is (980 + 990 + 100) / 3 = 690 -> never settles...
    dip = thr[:-1] + [100]
    assert m.time_to_optimum(t, dip, 1000) is None
    # ...unless competition changes before it
    assert m.time_to_optimum(t, dip, 1000, end=7) == 5.0
    # a dip in the middle restarts the clock: the MA3 holding the 600 is 850, 863.3, 863.3
    # (t = 6, 7, 8), then (990 + 1000 + 1000) / 3 at t = 9
    mid = [100, 500, 900, 950, 1000, 600, 990, 1000, 1000]
    assert m.time_to_optimum([*t, 9], mid, 1000) == 9.0
    assert m.time_to_optimum(t, thr, 0.0) is None
    # at the optimum from the start: the first full 3-MI average is at the end of the 3rd MI
    assert m.time_to_optimum(t, [1000] * 8, 1000) == 3.0
    assert m.time_to_optimum([1, 2], [1000, 1000], 1000) is None


def test_loss_rate() -> None:
    assert m.loss_rate([1, 2], [100, 300]) == pytest.approx(3 / 400)
    assert m.loss_rate([0, 0], [0, 0], [0.01, float("nan"), 0.03]) == pytest.approx(0.02)
    assert m.loss_rate([0], [0]) is None


def test_jain_index() -> None:
    assert m.jain_index([5, 5, 5]) == 1.0
    assert m.jain_index([1, 0, 0]) == pytest.approx(1 / 3)
    assert m.jain_index([1, 2, 3]) == pytest.approx(36 / 42)  # 6^2 / (3 * 14)
    assert m.jain_index([0, 0]) == 1.0
    assert math.isnan(m.jain_index([]))


def test_link_utilization_and_utility_ratio() -> None:
    assert m.link_utilization([300e6, 400e6], 1e9) == pytest.approx(0.7)
    with pytest.raises(ValueError, match="capacity"):
        m.link_utilization([1.0], 0.0)
    assert m.utility_ratio(500, 600) == pytest.approx(5 / 6)
    assert m.utility_ratio(500, 0) is None


def two_transfers() -> tuple[Run, Run]:
    # A: 0..10 s, 600 Mbit/s alone, then 300 from the 7th MI on; B: 5.5..15.5 s at 200 Mbit/s.
    a = make_run("ppo", [600] * 6 + [300] * 4, start=0.0, group="g")
    b = make_run("ppo", [200] * 10, start=5.5, group="g")
    return a, b


def test_concurrent_means_weight_partial_mis() -> None:
    a, b = two_transfers()
    xa, xb = m.Transfer.of(a), m.Transfer.of(b)
    assert m.overlap([xa, xb]) == (T0.timestamp() + 5.5, T0.timestamp() + 10.0)
    # A over [5.5, 10]: half of the (5, 6] MI at 600, then four MIs at 300 -> 1500 / 4.5
    means = m.concurrent_means([xa, xb])
    assert means is not None
    assert means[0] == pytest.approx(1500e6 / 4.5)
    assert means[1] == pytest.approx(200e6)
    # JFI = (333.3 + 200)^2 / (2 * (333.3^2 + 200^2)) = 0.941176
    assert m.concurrent_jfi([xa, xb]) == pytest.approx(0.941176, abs=1e-6)
    assert m.concurrent_jfi([xa, m.Transfer.of(make_run("x", [1], start=100))]) is None


def test_jfi_series() -> None:
    a, b = two_transfers()
    ts, jfi, active = m.jfi_series([m.Transfer.of(a), m.Transfer.of(b)])
    assert ts[0] == 1.0 and ts[-1] == 15.0
    at = dict(zip(ts.tolist(), zip(jfi.tolist(), active.tolist(), strict=True), strict=True))
    assert at[3.0] == (1.0, 1)  # A alone
    assert at[7.0][1] == 2 and at[7.0][0] == pytest.approx(250000 / 260000)  # 300 vs 200
    assert at[12.0] == (1.0, 1)  # B alone


def test_competition_change() -> None:
    a, b = two_transfers()
    assert m.competition_change(a, [a, b]) == pytest.approx(5.5)  # B starts
    assert m.competition_change(b, [a, b]) == pytest.approx(4.5)  # A ends at 10 s
    assert m.competition_change(a, [a]) is None


def test_best_fixed() -> None:
    runs = [
        make_run("fixed:10", [800] * 4),
        make_run("fixed:10", [900] * 4),
        make_run("fixed:20", [950] * 4),
        make_run("gd", [2000] * 4),  # not a fixed run: ignored
    ]
    assert m.best_fixed(runs) == (20, 950e6)
    assert m.best_fixed(runs, of="utility") == (20, 475.0)
    assert m.best_fixed(runs[3:]) is None
    assert m.fixed_streams("fixed:7") == 7 and m.fixed_streams("gd") is None


def test_summarize() -> None:
    gd = make_run("gd", [100, 400, 800, 900, 950, 950, 950, 950], retrans=[1] * 8, segs=[100] * 8)
    runs = [make_run("fixed:10", [850] * 8), make_run("fixed:20", [950] * 8), gd, *two_transfers()]
    s = m.summarize(runs, capacity_bps=1e9)
    assert s.best_fixed_bps == 950e6 and s.best_fixed_streams == 20
    g = s.policies["gd"]
    # MA3 >= 855: 100, 250, 433, 700, 883, 933, 950, 950 -> from t = 5
    assert g.time_to_optimum_s == 5.0 and g.reached == 1
    assert g.mean_throughput_bps == pytest.approx(np.mean([100, 400, 800, 900] + [950] * 4) * 1e6)
    assert g.loss_rate == pytest.approx(0.01)
    assert g.utility_ratio == pytest.approx(g.mean_throughput_bps / 1e6 / 2 / 475)
    assert g.jfi is None
    assert g.link_utilization == pytest.approx(g.mean_throughput_bps / 1e9)
    p = s.policies["ppo"]
    assert p.runs == 2 and p.jfi == pytest.approx(0.941176, abs=1e-6)
    assert p.link_utilization == pytest.approx((1500 / 4.5 + 200) / 1000)
    assert [x.group for x in s.groups] == ["g"]
    assert s.to_dict()["policies"]["gd"]["reached"] == 1
    # with a given best, nothing is searched
    s2 = m.summarize(runs, best_fixed_bps=2000e6)
    assert s2.best_fixed_streams is None and s2.policies["gd"].reached == 0


def test_time_to_optimum_ignores_the_drain_after_duration() -> None:
    """A --duration run drains its blocks in flight after the duration: those MIs are not
    steady state and must not turn a settled run into 'never'."""
    thr = [100, 500, 900, 950, 950, 950, 950, 950, 950, 950, 400]  # MI 11 = drain
    best = m.summarize([make_run("fixed:8", [950] * 10)])
    assert best.best_fixed_bps == pytest.approx(950e6)
    drained = make_run("ppo", thr)
    assert m.summarize([drained], best_fixed_bps=950e6).policies["ppo"].time_to_optimum_s is None
    drained.meta["duration_s"] = "10"
    s = m.summarize([drained], best_fixed_bps=950e6)
    assert s.policies["ppo"].time_to_optimum_s == pytest.approx(5.0)
    assert m.active_end(drained) == pytest.approx(10.5)
    # a dip inside the duration still counts (MI 7), the drain (MI 13) does not
    r2 = make_run("ppo", [100, 500, 900, 950, 950, 950, 400, 950, 950, 950, 950, 950, 300])
    r2.meta["duration_s"] = "12"
    assert m.summarize([r2], best_fixed_bps=950e6).policies["ppo"].time_to_optimum_s == 10.0
