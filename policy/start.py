"""``start[:KEY=VALUE,...][:INNER]``: hold a given count for the first MIs, then follow INNER.

Round 40 (issue #16, ``docs/results/issue16-round40/``): on gen-v7 most of the stored best
count's utility is made in the MIs before the rival joins, and splicing the oracle's first
three MIs before the shipped policy's rest reads 0.819 where the policy alone reads 0.745.
Whether the policy *keeps* a good start, once given one, is a separate question: after
three MIs at the right count it may ramp past it or retreat. This wrapper answers it on the
testbed: ``start:n=N,mis=K:ppo`` runs N streams from the transfer's start through its first
K MIs, whatever INNER asks, then INNER's counts. INNER sees every signal vector (its history
stays whole) and its target is moved to N, so its first own decision starts from N. It is a
diagnostic (N is the scenario's known best count), not a policy to ship.
"""

from __future__ import annotations

from dataclasses import dataclass

from policy.base import ControllerConfig, RuleWrapper
from policy.gd import RuleConfig
from policy.signals import SignalVector


@dataclass(frozen=True, slots=True)
class StartConfig(RuleConfig):
    """Constants of the start hold."""

    who = "start"

    n: int = 0
    """Streams held from the start (0: the inner controller's own initial count)."""
    mis: int = 3
    """MIs held: the count for MI k (k = 1..mis) is n; INNER decides from MI mis + 1 on."""

    def __post_init__(self) -> None:
        if self.n < 0 or self.mis < 1:
            raise ValueError(f"start: needs n >= 0 and mis >= 1, got n={self.n}, mis={self.mis}")


class StartHold:
    """The rule: :meth:`step` returns n for the first ``mis - 1`` decisions (the first MI is
    the initial count), then the proposal."""

    def __init__(self, sc: StartConfig, config: ControllerConfig, initial: int) -> None:
        self.config = config
        self.current = config.clip(sc.n or initial)
        self.left = sc.mis - 1
        """Decisions still held (the initial count covers the first MI)."""

    def step(self, proposed: int, signals: SignalVector) -> int:
        if self.left > 0:
            self.left -= 1
            return self.current
        self.current = self.config.clip(proposed)
        return self.current


class Start(RuleWrapper):
    """``start[:n=N,mis=K][:INNER]``: N streams for the first K MIs, then INNER (default ppo)."""

    name = "start"

    def __init__(self, args: str, config: ControllerConfig) -> None:
        cfg, args = self._options(args, StartConfig.parse, StartConfig())
        self.inner = self._wrap(args, config, "hold at the start")
        self.rule = StartHold(cfg, config, self.inner.initial())
        self.target = self.rule.current
