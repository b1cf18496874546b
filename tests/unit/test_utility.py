"""The utility U = T / K^n - T * L * B (Eq. 3) and the reward, against hand-computed values."""

from __future__ import annotations

import pytest

from policy.signals import SignalVector
from policy.utility import RewardConfig, UtilityConfig, reward, utility, utility_of


@pytest.mark.parametrize(
    ("thr_bps", "streams", "loss", "expected"),
    [
        # 100 Mbit/s on 2 streams, 1 % loss: 100 / 1.0404 - 100 * 0.01 * 10 = 96.1169 - 10
        (100e6, 2, 0.01, 86.1169),
        # 1 Gbit/s on 20 streams, no loss: 1000 / 1.02^20 = 1000 / 1.4859474
        (1e9, 20, 0.0, 672.9713),
        # unknown loss counts as none
        (1e9, 20, None, 672.9713),
        # 1 Gbit/s on 21 streams with 0.2 % loss: 1000 / 1.5156663 - 1000 * 0.002 * 10 = 659.7758 - 20
        (1e9, 21, 0.002, 639.7758),
        # no streams: no cost
        (50e6, 0, 0.0, 50.0),
        # nothing moved: nothing gained
        (0.0, 8, 0.3, 0.0),
        # heavy loss makes U negative: 400 / 1.02^10 - 400 * 0.2 * 10 = 328.1394 - 800
        (400e6, 10, 0.2, -471.8606),
    ],
)
def test_utility_by_hand(thr_bps: float, streams: int, loss: float | None, expected: float) -> None:
    assert utility(thr_bps, streams, loss) == pytest.approx(expected, abs=1e-3)


def test_utility_constants_are_configurable() -> None:
    cfg = UtilityConfig(k=1.1, b=5.0, unit_bps=1e3)
    # T = 2 (kbit/s units): 2 / 1.1 - 2 * 0.1 * 5 = 1.818182 - 1
    assert utility(2000.0, 1, 0.1, cfg) == pytest.approx(0.818182, abs=1e-6)
    assert UtilityConfig() == UtilityConfig(k=1.02, b=10.0, unit_bps=1e6)


def test_utility_of_a_signal_vector() -> None:
    s = SignalVector(
        t=1.0,
        mi_s=1.0,
        streams=2,
        throughput_bps=100e6,
        goodput_bps=90e6,
        loss_rate=0.01,
        rtt_ms=None,
        min_rtt_ms=None,
        rtt_gradient=None,
        rtt_ratio=None,
    )
    assert utility_of(s) == pytest.approx(86.1169, abs=1e-3)  # uses throughput, not goodput


@pytest.mark.parametrize(
    ("u_now", "u_prev", "expected"),
    [(2.0, 1.0, 1.0), (1.0, 2.0, -1.0), (1.0, 1.0, 0.0), (1e-9, 0.0, 1.0)],
)
def test_reward_defaults(u_now: float, u_prev: float, expected: float) -> None:
    assert reward(u_now, u_prev) == expected


@pytest.mark.parametrize(
    ("u_now", "u_prev", "expected"),
    [
        (10.6, 10.0, 2.0),  # rose by more than epsilon: +x
        (10.5, 10.0, 0.0),  # rose by exactly epsilon: dead band
        (9.5, 10.0, 0.0),  # fell by exactly epsilon: dead band
        (9.4, 10.0, -3.0),  # fell by more than epsilon: y
        (10.2, 10.0, 0.0),
    ],
)
def test_reward_with_a_dead_band(u_now: float, u_prev: float, expected: float) -> None:
    cfg = RewardConfig(x=2.0, y=-3.0, epsilon=0.5)
    assert reward(u_now, u_prev, cfg) == expected


def test_the_vectorised_formula_is_the_scalar_one() -> None:
    import numpy as np

    from policy.utility import utility_values

    thr = np.array([100e6, 1e9, 1e9, 400e6])
    streams = np.array([2.0, 20.0, 21.0, 10.0])
    loss = np.array([0.01, 0.0, 0.002, 0.2])
    got = utility_values(thr, streams, loss)
    want = [utility(t, int(n), lo) for t, n, lo in zip(thr, streams, loss, strict=True)]
    assert got.tolist() == want  # the same arithmetic, bit for bit
