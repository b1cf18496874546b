"""The paper's utility (Eq. 3) and the reward derived from its change between MIs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from policy.signals import SignalVector

if TYPE_CHECKING:  # numpy only for the annotation: the engine's send path never loads it
    import numpy as np
    import numpy.typing as npt

Values = TypeVar("Values", float, "npt.NDArray[np.float64]")
"""A float, or a numpy array of them (the simulator evaluates many environments at once)."""


@dataclass(frozen=True, slots=True)
class UtilityConfig:
    """Constants of U = T / K^n - T * L * B (defaults from Falcon)."""

    k: float = 1.02
    """Cost base per stream: each extra stream must buy more than (K-1) relative throughput."""
    b: float = 10.0
    """Loss punishment weight."""
    unit_bps: float = 1e6
    """Throughput unit inside U (Mbit/s by default, as in the paper)."""


@dataclass(frozen=True, slots=True)
class RewardConfig:
    """Reward +x / -y / 0 around a threshold epsilon on U_t - U_{t-1}."""

    x: float = 1.0
    """Reward when utility rose by more than epsilon."""
    y: float = -1.0
    """Reward (a negative number) when utility fell by more than epsilon."""
    epsilon: float = 0.0
    """Dead band on the change in utility, in utility units."""


def utility_values(
    throughput_bps: Values,
    streams: Values | int,
    loss_rate: Values,
    cfg: UtilityConfig | None = None,
) -> Values:
    """U = T / K^n - T * L * B with T in ``cfg.unit_bps`` units, element-wise: the one place
    the formula is written. Floats or numpy arrays (broadcast together) alike, since it uses
    arithmetic only; the engine (:func:`utility`) and the simulator (``train/sim.py``) both
    call it."""
    c = cfg or UtilityConfig()
    t = throughput_bps / c.unit_bps
    return t / c.k**streams - t * loss_rate * c.b


def utility(
    throughput_bps: float, streams: int, loss_rate: float | None, cfg: UtilityConfig | None = None
) -> float:
    """U of one MI; unknown loss counts as 0, fewer than 0 streams as 0."""
    return utility_values(float(throughput_bps), max(streams, 0), loss_rate or 0.0, cfg)


def utility_of(s: SignalVector, cfg: UtilityConfig | None = None) -> float:
    """Utility of one MI's signal vector."""
    return utility(s.throughput_bps, s.streams, s.loss_rate, cfg)


def reward(u_now: float, u_prev: float, cfg: RewardConfig | None = None) -> float:
    """+x if U rose by more than epsilon, y if it fell by more than epsilon, else 0."""
    c = cfg or RewardConfig()
    du = u_now - u_prev
    if du > c.epsilon:
        return c.x
    if du < -c.epsilon:
        return c.y
    return 0.0
