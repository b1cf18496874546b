"""Controllers that need no measurement: ``fixed`` and ``schedule``."""

from __future__ import annotations

from policy.base import ControllerConfig
from policy.signals import SignalVector


class Fixed:
    """``fixed:N``: always N streams (N defaults to ``initial_streams`` or 4)."""

    name = "fixed"

    def __init__(self, args: str, config: ControllerConfig) -> None:
        try:
            n = int(args) if args else (config.initial_streams or 4)
        except ValueError:
            raise ValueError(f"fixed:N needs an integer N, got {args!r}") from None
        if n < 1:
            raise ValueError(f"fixed:N needs N >= 1, got {n}")
        self.n = n

    def initial(self) -> int:
        return self.n

    def decide(self, signals: SignalVector) -> int:
        return self.n


class Schedule:
    """``schedule:A,B,C``: A streams at the start, B after the 1st MI, C after the 2nd, ...
    then the last count is held. Used by tests and experiments to force changes."""

    name = "schedule"

    def __init__(self, args: str, config: ControllerConfig) -> None:
        try:
            counts = [int(x) for x in args.split(",") if x.strip()]
        except ValueError:
            raise ValueError(f"schedule needs comma-separated integers, got {args!r}") from None
        if not counts or min(counts) < 1:
            raise ValueError(f"schedule needs one or more counts >= 1, got {args!r}")
        self.counts = counts
        self._i = 0

    def initial(self) -> int:
        return self.counts[0]

    def decide(self, signals: SignalVector) -> int:
        self._i = min(self._i + 1, len(self.counts) - 1)
        return self.counts[self._i]
