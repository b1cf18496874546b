"""Falcon's GD and BO controllers driven by a synthetic throughput(n) curve.

The curve: min(n * 50 Mbit/s, 1 Gbit/s), no loss up to the knee (n = 20), loss rising by 0.2 %
per stream beyond it. Its utility (K = 1.02, B = 10) peaks at n = 20 (673 vs 652 at 19 and 640
at 21). The tests assert where the controllers end up, never how fast they run.
"""

from __future__ import annotations

import random
import statistics

import pytest

from policy.base import Controller, ControllerConfig, make_controller
from policy.gd import GradientDescent, falcon_score
from policy.signals import SignalVector
from policy.utility import UtilityConfig, utility


def curve(n: int) -> tuple[float, float]:
    thr = min(n * 50e6, 1e9)
    loss = 0.0 if n <= 20 else min(0.5, 0.002 * (n - 20))
    return thr, loss


def signal(t: float, n: int, noise: float = 0.0, rng: random.Random | None = None) -> SignalVector:
    thr, loss = curve(n)
    if noise and rng is not None:
        thr *= 1.0 + rng.gauss(0.0, noise)
    segs = int(thr / 8 / 1448)
    return SignalVector(
        t=t,
        mi_s=1.0,
        streams=n,
        throughput_bps=thr,
        goodput_bps=thr,
        loss_rate=loss,
        rtt_ms=30.0,
        min_rtt_ms=30.0,
        rtt_gradient=0.0,
        rtt_ratio=1.0,
        bytes_acked=int(thr / 8),
        retrans_segs=round(loss * segs),
        data_segs_out=segs,
    )


def drive(c: Controller, mis: int, noise: float = 0.0, seed: int = 0) -> list[int]:
    """Run ``c`` for ``mis`` MIs on the curve; the stream count in force during each MI."""
    rng = random.Random(seed)
    n = c.initial()
    used = []
    for i in range(mis):
        used.append(n)
        n = c.decide(signal(i + 1.0, n, noise, rng))
    return used


def test_curve_optimum_is_twenty() -> None:
    us = {n: utility(*curve(n)[:1], n, curve(n)[1]) for n in range(1, 65)}
    assert max(us, key=lambda n: us[n]) == 20


def test_falcon_score_by_hand() -> None:
    a = signal(1.0, 2)
    b = SignalVector(
        **{
            **a.to_dict(),
            "throughput_bps": 100e6,
            "data_segs_out": 500,
            "retrans_segs": 5,
            "paths": (),
        }
    )
    c = SignalVector(
        **{
            **a.to_dict(),
            "throughput_bps": 200e6,
            "data_segs_out": 500,
            "retrans_segs": 5,
            "paths": (),
        }
    )
    # T = 150 Mbit/s, L = 10/1000, U = 150/1.02^2 - 150*0.01*10 = 144.175 - 15 = 129.175
    assert falcon_score([b, c], 2, UtilityConfig()) == -129.0
    # segment counters unknown: the per-MI loss rates are used
    d = SignalVector(
        **{**b.to_dict(), "data_segs_out": 0, "retrans_segs": 0, "loss_rate": 0.01, "paths": ()}
    )
    assert falcon_score([d], 1, UtilityConfig()) == float(round(-(100 / 1.02 - 100 * 0.01 * 10)))


def test_gd_follows_falcon_first_steps() -> None:
    gd = GradientDescent("", ControllerConfig(1, 64))
    drive(gd, 3 * 6)
    # hand-computed from Falcon's rule on this curve: 1, 2, then +2, +4, +6, +8
    assert gd.ccs[:6] == [1, 2, 4, 8, 14, 22]


def test_gd_probe_length_and_settle() -> None:
    gd = GradientDescent("probe=4,settle=2", ControllerConfig(1, 64))
    used = drive(gd, 12)
    assert used == [1] * 4 + [2] * 4 + [4] * 4


@pytest.mark.parametrize(
    ("mi_s", "probe", "settle"), [(1.0, 3, 1), (0.5, 6, 2), (2.0, 2, 1), (5.0, 2, 1)]
)
def test_probe_defaults_follow_falcon_in_seconds(mi_s: float, probe: int, settle: int) -> None:
    gd = GradientDescent("", ControllerConfig(1, 64, mi_s=mi_s))
    assert (gd.probe.cfg.probe_mis, gd.probe.cfg.settle_mis) == (probe, settle)


@pytest.mark.parametrize(("noise", "seed"), [(0.0, 0), (0.03, 1), (0.03, 2)])
def test_gd_converges_to_the_optimum(noise: float, seed: int) -> None:
    gd = make_controller("gd", ControllerConfig(1, 64))
    drive(gd, 3 * 60, noise, seed)
    tail = gd.ccs[-15:]  # type: ignore[attr-defined]
    assert 17 <= statistics.mean(tail) <= 23, tail
    assert all(12 <= n <= 28 for n in tail), tail


def test_gd_respects_the_stream_limits() -> None:
    gd = make_controller("gd", ControllerConfig(min_streams=4, max_streams=12))
    used = drive(gd, 3 * 30)
    assert min(used) >= 4 and max(used) <= 12
    assert statistics.mean(used[-15:]) >= 10  # the optimum clipped to the cap


@pytest.mark.parametrize(("noise", "seed"), [(0.0, 1), (0.03, 2)])
def test_bo_converges_to_the_optimum(noise: float, seed: int) -> None:
    bo = make_controller(f"bo:seed={seed}", ControllerConfig(1, 64))
    drive(bo, 3 * 50, noise, seed)
    probed = [n for n, _ in bo.history]  # type: ignore[attr-defined]
    assert 19 <= statistics.median(probed[-10:]) <= 21, probed
    assert 19 <= bo.best() <= 21  # type: ignore[attr-defined]


def test_bo_finite_mode_holds_the_best() -> None:
    bo = make_controller("bo:seed=3,iters=15", ControllerConfig(1, 64))
    used = drive(bo, 3 * 15 + 6)
    assert bo.held is not None  # type: ignore[attr-defined]
    assert used[-6:] == [bo.held] * 6  # type: ignore[attr-defined]
    best_probe = min(bo.history, key=lambda h: h[1])  # type: ignore[attr-defined]
    assert bo.held == best_probe[0]  # type: ignore[attr-defined]


def test_bo_respects_the_stream_limits() -> None:
    bo = make_controller("bo:seed=4", ControllerConfig(min_streams=2, max_streams=30))
    used = drive(bo, 3 * 15)
    assert min(used) >= 2 and max(used) <= 30


def test_bo_bound_shrinks_on_positive_score_and_grows_at_the_bound() -> None:
    bo = make_controller("bo:seed=5", ControllerConfig(1, 64))
    bo.cc, bo.upper = 30, 64  # type: ignore[attr-defined]
    bo._move_bound(+12.0)  # type: ignore[attr-defined]  # utility negative below the bound
    assert bo.upper == 30 and bo.resets == 1  # type: ignore[attr-defined]
    bo.cc = 30  # type: ignore[attr-defined]
    bo._move_bound(-500.0)  # type: ignore[attr-defined]  # good score at the bound
    assert bo.upper == 35 and bo.resets == 2  # type: ignore[attr-defined]
    bo.cc = 10  # type: ignore[attr-defined]
    bo._move_bound(-500.0)  # type: ignore[attr-defined]  # good score inside: no change
    assert bo.upper == 35 and bo.resets == 2  # type: ignore[attr-defined]


def test_bo_with_one_allowed_count() -> None:
    bo = make_controller("bo", ControllerConfig(min_streams=5, max_streams=5))
    assert set(drive(bo, 9)) == {5}


@pytest.mark.parametrize(
    "spec", ["gd:probe=0", "gd:settle=3", "gd:wat=1", "gd:probe=x", "bo:window=1"]
)
def test_bad_args_are_refused(spec: str) -> None:
    with pytest.raises(ValueError, match=spec.split(":")[0]):
        make_controller(spec, ControllerConfig())


def test_both_are_controllers() -> None:
    for spec in ("gd", "bo:seed=1"):
        c = make_controller(spec, ControllerConfig())
        assert isinstance(c, Controller)
        assert c.name == spec.split(":")[0]
