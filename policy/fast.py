"""``fast[:KEY=VALUE,...][:INNER]``: short MIs at the start of a transfer on short paths.

Round 41 (issue #16, ``docs/results/issue16-round41/``). On gen-v7's fast short paths most of
the best fixed count's utility is made in the first 7-11 s, before a rival joins, and the
shipped policy loses it at the start: one full second at its 2 initial streams, then a +5
ramp past the knee and a walk back of one stream per MI (round 40: the oracle's count for
the first three MIs alone is worth +0.08 on gen-v7's mean). None of that is the policy not
knowing what to do; it is the policy deciding once a second on a path where a second is
thousands of round trips.

This wrapper changes only *when* the inner controller decides, never what it decides: for
the first ``mis`` MIs of a transfer whose minimum RTT is at most ``max_rtt_ms`` (and where a
short MI still holds ``min_rtts`` round trips), each MI lasts ``mi / div``; after that every
MI is the configured one. The inner controller sees every MI's signal vector as usual; its
features are scale-free (throughput relative to its own maximum, loss as a rate, RTT as a
ratio), so a 0.25-s MI on a 0.1-ms path reads as a 1-s MI does, as long as the MI still
averages over the path's loss process (above a millisecond it did not: round 41, hence the
1-ms default). Long paths (``fig1``'s and ``fig3``'s 40 ms, every long lossy path) are never
touched: there a second is 25 round trips or fewer, and added streams are still in slow
start at the MI's end.

A bundle's ``meta["fast"]`` (``python3 -m train.ship ... --fast``) makes ``ppo`` do the same
itself, as ``meta["warmup"]`` does for the warm-up; ``fast:`` around such a file is refused.
The engine asks :meth:`Fast.mi_length` (the optional controller method ``mi_length(k,
min_rtt_ms, mi_s) -> seconds``, delegated through every :class:`policy.base.Wrapper`) before
each MI starts; MI 1 uses the control connection's RTT, later MIs the data streams' minimum.
"""

from __future__ import annotations

from dataclasses import dataclass

from policy.base import ControllerConfig, Wrapper
from policy.gd import RuleConfig
from policy.signals import SignalVector


@dataclass(frozen=True, slots=True)
class FastConfig(RuleConfig):
    """When MIs are short."""

    who = "fast"

    mis: int = 8
    """The first this many MIs may be short (8 at div=4: the first 2 s of a 1-s MI)."""
    div: int = 4
    """A short MI lasts mi / div."""
    max_rtt_ms: float = 1.0
    """Only on paths whose minimum RTT is at most this (ms). Round 41 ran 5 first (F41): at
    1.6 and 4.6 ms a quarter MI held one loss event of cubic's sawtooth or none, and the
    policy held 2 streams or see-sawed (evaluation.md rule 11); below 1 ms every F41 run
    gained or held, so 1 is the default since."""
    min_rtts: float = 50.0
    """And only if a short MI still holds at least this many minimum RTTs."""
    grow: int = 0
    """1: the fast phase ends at the inner controller's first retreat (round 41's F41c: short
    MIs for the ramp, 1-s MIs for every way down). The retreat is taken; the MI it runs in
    was sized before it was decided, so one more short MI follows it."""

    def __post_init__(self) -> None:
        if (
            self.mis < 0
            or self.div < 1
            or self.max_rtt_ms < 0
            or self.min_rtts < 0
            or self.grow not in (0, 1)
        ):
            raise ValueError(
                "fast: needs mis >= 0, div >= 1, max_rtt_ms >= 0, min_rtts >= 0 and grow 0 or "
                f"1, got mis={self.mis}, div={self.div}, max_rtt_ms={self.max_rtt_ms}, "
                f"min_rtts={self.min_rtts}, grow={self.grow}"
            )

    def length(self, k: int, min_rtt_ms: float | None, mi_s: float) -> float:
        """Length of MI ``k`` (1-based) in seconds, given the path's minimum RTT so far
        (``None``: unknown, so the configured MI). Each MI on its own: :class:`FastPhase`
        makes the short MIs a prefix of the transfer."""
        short = mi_s / self.div
        if (
            k <= self.mis
            and min_rtt_ms is not None
            and min_rtt_ms <= self.max_rtt_ms
            and short * 1000.0 >= self.min_rtts * min_rtt_ms
        ):
            return short
        return mi_s


class FastPhase:
    """The short MIs as a prefix: once one MI is the configured length, so is every later one.

    The engine asks for MI 1, 2, ... in order. Without the latch a path that starts long
    could turn short later: the kernel's minimum RTT drops to exactly 1.000 ms on 1-2 ms
    paths once a sample comes from TCP timestamps (millisecond ticks; round 41 saw it on
    gen-v7-v03, drawn at 1.6 ms, from its first loss on), and a bound of 1 ms would then
    shorten MIs 2-8 of a path it was meant to leave alone."""

    def __init__(self, cfg: FastConfig) -> None:
        self.cfg = cfg
        self.over = False
        """An MI of the configured length has been given: the fast phase is over."""

    def length(self, k: int, min_rtt_ms: float | None, mi_s: float) -> float:
        got = mi_s if self.over else self.cfg.length(k, min_rtt_ms, mi_s)
        if got >= mi_s:  # only ever set: ``Fast.decide`` (another thread) may set it too
            self.over = True
        return got


class Fast(Wrapper):
    """``fast[:mis=K,div=D,max_rtt_ms=M,min_rtts=R][:INNER]`` (INNER default ppo): INNER's
    decisions, taken every mi/D for the first K MIs on a path of at most M ms (8, 4, 1, 50)."""

    name = "fast"

    def __init__(self, args: str, config: ControllerConfig) -> None:
        self.fast, args = self._options(args, FastConfig.parse, FastConfig())
        self.phase = FastPhase(self.fast)
        self.inner = self._wrap(args, config, None)
        self.last = self.inner.initial()
        """The inner controller's last count (``grow=1``: a count below it is a retreat)."""
        if getattr(self.inner, "fast", None) is not None:
            raise ValueError(
                f"fast: {args or 'ppo'!r} shortens its MIs already (its checkpoint's meta "
                "names fast)"
            )

    def initial(self) -> int:
        return self.inner.initial()

    def decide(self, signals: SignalVector) -> int:
        n = self.inner.decide(signals)
        if self.fast.grow and n < self.last:
            self.phase.over = True  # read by the next mi_length (the engine's loop thread)
        self.last = n
        return n

    def mi_length(self, k: int, min_rtt_ms: float | None, mi_s: float) -> float:
        return self.phase.length(k, min_rtt_ms, mi_s)
