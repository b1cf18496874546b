"""``exo``: the inner controller is shown the loss above the floor its own count does not
explain (``policy/exo.py``)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from policy.base import ControllerConfig, check_spec, make_controller, register
from policy.exo import Exo, ExoConfig, fit_floor
from policy.signals import SignalVector
from tests.unit.test_guard import ROUND26, world_path

EC = ExoConfig()


def test_a_floor_that_does_not_move_with_the_count_is_found() -> None:
    """Loss of 3 % +- 1 % at counts 4-8: the fit's floor is near 3 %."""
    pts = [(4 + i % 5, 0.03 + (0.01 if i % 2 else -0.01)) for i in range(16)]
    floor = fit_floor(pts, EC)
    assert floor is not None and abs(floor - 0.03) < 0.005, floor


def test_loss_that_grows_with_the_count_leaves_no_floor() -> None:
    """Our own loss, growing in proportion to the count or faster: nothing is taken off."""
    for own in (lambda n: 0.004 * n, lambda n: 0.0005 * n * n):
        floor = fit_floor([(n, own(n)) for n in (4, 5, 6, 7, 8, 7, 6, 5)], EC)
        assert floor is not None and floor < 1e-12, floor


def test_own_loss_on_top_of_a_floor_keeps_the_own_part() -> None:
    """1 % floor plus 0.2 % per stream: the floor, not the whole loss, is found."""
    floor = fit_floor([(n, 0.01 + 0.002 * n) for n in (4, 6, 8, 10, 8, 6, 4, 6)], EC)
    assert floor is not None and abs(floor - 0.01) < 1e-9


def test_loss_that_falls_as_the_count_rises_is_capped_at_the_lowest_count_seen() -> None:
    pts = [(n, 0.05 - 0.002 * n) for n in (4, 6, 8, 10, 8, 6, 4, 6)]
    floor = fit_floor(pts, EC)
    assert floor is not None and abs(floor - (0.05 - 0.008)) < 1e-9


@pytest.mark.parametrize(
    "pts",
    [
        [(6, 0.03)] * 16,  # one count
        [(4, 0.03), (5, 0.02)] * 8,  # one stream apart
        [(20, 0.03), (24, 0.02)] * 8,  # 1.2x apart
        [(4, 0.03), (8, 0.02)] * 3,  # too few MIs
    ],
)
def test_no_fit_without_enough_spread_or_points(pts: list[tuple[int, float]]) -> None:
    assert fit_floor(pts, EC) is None


class Recorder:
    """An inner controller that keeps what it was shown and holds a fixed schedule."""

    name = "recorder"

    def __init__(self, args: str, config: ControllerConfig) -> None:
        self.seen: list[SignalVector] = []

    def initial(self) -> int:
        return 4

    def decide(self, signals: SignalVector) -> int:
        self.seen.append(signals)
        return 4 + len(self.seen) % 5


def _sv(n: int, loss: float | None, segs: int = 10_000) -> SignalVector:
    return SignalVector(
        t=1.0, mi_s=1.0, streams=n, throughput_bps=1e8, goodput_bps=1e8, loss_rate=loss,
        rtt_ms=1.0, min_rtt_ms=1.0, rtt_gradient=0.0, rtt_ratio=1.0,
        retrans_segs=round((loss or 0.0) * segs), data_segs_out=segs,
    )  # fmt: skip


def test_the_inner_controller_sees_the_loss_above_the_floor() -> None:
    """Before the window can fit, the loss is passed on as measured; after, 3 % at every
    count reads as ~0 (and the retransmitted segments follow); unknown loss passes as is."""
    register("recorder", Recorder)
    g = make_controller("exo:window=10,min_points=6:recorder")
    assert isinstance(g, Exo) and isinstance(g.inner, Recorder)
    n, given = g.initial(), []
    for _ in range(12):
        given.append(n)
        n = g.decide(_sv(n, 0.03))
    shown = g.inner.seen
    assert [s.loss_rate for s in shown[:5]] == [0.03] * 5
    assert g.fits == 7 and abs(g.floor - 0.03) < 1e-9
    assert all((s.loss_rate or 0.0) < 1e-9 and s.retrans_segs == 0 for s in shown[5:])
    assert [s.streams for s in shown] == given and all(s.throughput_bps == 1e8 for s in shown)
    g.decide(_sv(n, None))
    assert shown[-1].loss_rate is None


def test_options_and_nesting_are_checked() -> None:
    for bad in ("exo:window=1", "exo:min_points=20", "exo:share=1.5", "exo:spread=0.5"):
        with pytest.raises(ValueError, match="exo"):
            check_spec(bad)
    with pytest.raises(ValueError, match="another exo"):
        make_controller("exo:exo:ppo")
    check_spec("exo:gd")


def test_around_the_shipped_bundle_a_floor_is_climbed_past_and_own_loss_is_not() -> None:
    """In a capped world (20 Mbit/s per stream up to 400): with a 3 % loss others cause
    the bundle alone settles at 15-17 streams and ``exo`` around it climbs past 20 (it then
    decides as the bundle does at no loss, which overshoots in this world, where nothing
    but the cost per stream says stop); with no loss, or with loss that grows with the count faster than in proportion
    (our own), ``exo`` takes nothing off and decides as the bundle does, MI for MI."""
    alone = world_path(ROUND26, 2.0, "cubic", loss=0.03, top=400.0)[1]
    g, path = world_path(f"exo:{ROUND26}", 2.0, "cubic", loss=0.03, top=400.0)
    assert isinstance(g, Exo) and g.floor == pytest.approx(0.03)
    assert max(alone[-20:]) < 18 and min(path[-20:]) > 20, (alone, path)
    assert (
        world_path(f"exo:{ROUND26}", 2.0, "cubic", loss=0.0)[1]
        == (world_path(ROUND26, 2.0, "cubic", loss=0.0)[1])
    )
    plain, wrapped = make_controller(ROUND26), make_controller(f"exo:{ROUND26}")
    n_p, n_w = plain.initial(), wrapped.initial()
    for t in range(40):
        n_p, n_w = plain.decide(_sv(n_p, 2e-4 * n_p**2)), wrapped.decide(_sv(n_w, 2e-4 * n_w**2))
        assert n_p == n_w, t
    assert isinstance(wrapped, Exo) and wrapped.fits > 0 and wrapped.floor == 0.0


def test_with_rtt_a_standing_queue_is_taken_off_and_a_growing_one_is_not() -> None:
    """``rtt=1``: an RTT ratio of 5 at every count (a rival's standing queue) reads as ~1
    once the window can fit (the mean RTT follows); one that grows with the count, ours,
    is passed on; without ``rtt`` the ratio is never touched."""
    register("recorder", Recorder)
    for spec, ratio, gone in (
        ("exo:rtt=1,window=10,min_points=6:recorder", lambda n: 5.0, True),
        ("exo:rtt=1,window=10,min_points=6:recorder", lambda n: 1.0 + 0.5 * n, False),
        ("exo:window=10,min_points=6:recorder", lambda n: 5.0, False),
    ):
        g = make_controller(spec)
        assert isinstance(g, Exo) and isinstance(g.inner, Recorder)
        n = g.initial()
        for _ in range(12):
            s = replace(_sv(n, 0.0), rtt_ratio=ratio(n), rtt_ms=ratio(n), min_rtt_ms=1.0)
            n = g.decide(s)
        last = g.inner.seen[-1]
        assert (abs((last.rtt_ratio or 0.0) - 1.0) < 1e-9) == gone, (spec, last.rtt_ratio)
        assert last.rtt_ms == pytest.approx(last.rtt_ratio), spec
