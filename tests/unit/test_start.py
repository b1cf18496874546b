"""start[:n=N,mis=K][:INNER]: N streams through the first K MIs, then the inner controller."""

from __future__ import annotations

import pytest

from policy.base import ControllerConfig, make_controller
from policy.signals import SignalVector
from policy.start import StartConfig
from tests.unit import test_judge  # noqa: F401  (registers test-climb)


def _signals(t: int, n: int) -> SignalVector:
    return SignalVector(
        t=t + 1.0, mi_s=1.0, streams=n, throughput_bps=1e8, goodput_bps=1e8, loss_rate=0.0,
        rtt_ms=1.0, min_rtt_ms=1.0, rtt_gradient=0.0, rtt_ratio=1.0,
    )  # fmt: skip


def _path(spec: str, mis: int) -> list[int]:
    c = make_controller(spec, ControllerConfig(max_streams=64))
    n, out = c.initial(), []
    for t in range(mis):
        out.append(n)
        n = c.decide(_signals(t, n))
    return out


def test_holds_n_for_the_first_mis_then_the_inner_controller_goes_on_from_n() -> None:
    assert _path("test-climb", 5) == [1, 6, 11, 16, 21]
    # MIs 1-3 run 8 streams whatever the inner asks; its first own add starts from 8.
    assert _path("start:n=8,mis=3:test-climb", 6) == [8, 8, 8, 13, 18, 23]
    assert _path("start:n=8,mis=1:test-climb", 3) == [8, 13, 18]
    assert _path("start:mis=2:test-climb", 3) == [1, 1, 6]  # n=0: the inner's own initial


def test_the_shipped_policy_starts_where_it_is_told() -> None:
    c = make_controller("start:n=16,mis=3", ControllerConfig(max_streams=64))
    assert c.initial() == 16 and c.inner.name == "ppo"  # type: ignore[attr-defined]
    assert c.target == 16  # the inner controller's target moved with it


def test_options_are_checked() -> None:
    assert StartConfig.parse("n=4,mis=2") == StartConfig(n=4, mis=2)
    for bad in ("n=-1", "mis=0"):  # the first MI always runs the initial count
        with pytest.raises(ValueError, match="start: needs"):
            StartConfig.parse(bad)
    with pytest.raises(ValueError, match="start: bad argument"):
        make_controller("start:nope=1:ppo")
