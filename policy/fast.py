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

``grow=1`` (round 41's F41c) ends the fast phase at the inner controller's first retreat;
``grow=2`` (round 42's F42) also refuses to take a retreat asked on a short MI: the count
holds and the next way down is decided on an MI of the configured length. Round 41 found the
gains of short MIs in the ramps (hand-lan-capped 2 -> 37 streams by 2 s, gen-v7-v04 2 -> 27)
and the losses in retreats decided on quarter MIs, whose loss and utility swing where a 1-s
MI averages them (gen-v2-v16: 1161, 940 and 646 at 3 streams a quarter second apart).

``ramp=S`` (round 42's F43) takes the fast phase from the inner controller altogether: the
short MIs are a ramp of S streams per MI while each MI's utility beats every earlier one's,
back to the best count at the first that does not, and the inner controller, shown no short
MI, decides from there on MIs of the configured length. Round 42: under ``grow=2``
gen-v7-v06 held 7 streams for two more quarter MIs and a 1-s MI into a full queue (RTT ratio
190-280, 5-8 % loss; utility 35 at 2 streams, then 21 and 4 at 7), where a check after one
quarter MI goes back to 2. (Replaying those runs' signal vectors through the policy with its
quarter MIs left out gives the same 7 -> 2 on that 1-s MI: there the history was not the
cause; the ramp keeps quarter MIs out of it all the same, since the policy never trained on
them.)

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
from policy.utility import utility_of


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
    was sized before it was decided, so one more short MI follows it. 2 (round 42's F42): the
    same, and no retreat is decided on a short MI: a retreat asked on one is not taken (the
    count holds, the inner controller's target is set back to it), so every way down is
    decided on an MI of the configured length, the statistics the policy was trained on. An
    add on a short MI is taken as with 0 and 1. 0: the phase runs its ``mis`` MIs, whatever
    is asked."""

    ramp: int = 0
    """> 0 (round 42's F43): the fast phase is a ramp's, not the inner controller's. After
    each short MI the count rises by ``ramp`` streams while the MI's utility (the paper's,
    :func:`policy.utility.utility_of`) is above every earlier short MI's; at the first one
    that is not, the count goes back to the best count's and the phase ends. The inner
    controller is shown no short MI: its first signal vector is the first MI of the
    configured length, and it decides from the count the ramp left (its target is set to
    it). 0: the inner controller decides on short MIs (as ``grow`` says)."""

    fine: int = 0
    """> 0 (round 43's F44), with ``ramp``: where the ramp's climb meets its first short MI
    that is not the best, the short MIs left search on from the best count in steps of
    ``fine`` streams, below the count that failed, by the same test (each must beat every
    earlier short MI's utility). At the first that does not, or on reaching the failed count,
    the count goes back to the best one and the phase ends. A +S ramp from 2 overshoots an
    optimum of 3-6 at its first step (round 43: gen-v7-v06, best 4, ramped 2, 7 -> 2 and then
    held 1-2 streams). 0: the ramp ends at that first MI (F43)."""

    settle: int = 0
    """1 (round 43's F45), with ``ramp``: a short MI run at a count other than the short MI's
    before it is not judged; the count holds for one more short MI, and that one is. The MI
    after a change carries the last count's queue and loss: round 43's F44 runs on gen-v7-v06
    read 5-11 % loss and an RTT ratio of 330-480 in the quarter MI at 3 streams right after one
    at 7, and went back to 2, where 3 streams read 50-52 on their first 1-s MI (2 streams:
    35). The transfer's first MI is judged (nothing came before it). 0: every short MI is
    judged (F43, F44)."""

    def __post_init__(self) -> None:
        if (
            self.ramp < 0
            or self.fine < 0
            or (self.fine and not self.ramp)
            or self.settle not in (0, 1)
            or (self.settle and not self.ramp)
            or self.mis < 0
            or self.div < 1
            or self.max_rtt_ms < 0
            or self.min_rtts < 0
            or self.grow not in (0, 1, 2)
        ):
            raise ValueError(
                "fast: needs mis >= 0, div >= 1, max_rtt_ms >= 0, min_rtts >= 0, grow 0, 1 "
                f"or 2, ramp >= 0, fine >= 0 and settle 0 or 1 (both only with ramp), got mis="
                f"{self.mis}, div={self.div}, max_rtt_ms={self.max_rtt_ms}, min_rtts="
                f"{self.min_rtts}, grow={self.grow}, ramp={self.ramp}, fine={self.fine}, "
                f"settle={self.settle}"
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

    def __init__(self, cfg: FastConfig, config: ControllerConfig) -> None:
        self.cfg, self.config = cfg, config
        self.over = False
        """An MI of the configured length has been given, or (``grow``) a retreat asked: the
        fast phase is over."""
        self.cut_s: float | None = None
        """Once a short MI has been given: halfway between its length and the configured MI's
        (s). An MI measured shorter than this was a short one."""
        self.held = 0
        """Retreats not taken because they were asked on a short MI (``grow=2``; for tests
        and logs)."""
        self.best: tuple[float, int] | None = None
        """``ramp``: the best short MI's utility and the count it ran."""
        self.ramped = False
        """``ramp``: the ramp has ended (a short MI not the best, or ``max_streams``); the
        short MIs left hold the count. The phase's own end (its last short MI) does not end
        the ramp: that MI's decision is still the ramp's."""
        self.last_count: int | None = None
        """``settle``: the count the last short MI ran (``None`` before the first)."""
        self.ceiling: int | None = None
        """``fine``: the count whose short MI ended the climb; the fine search stays below it
        (``None``: still climbing)."""

    def length(self, k: int, min_rtt_ms: float | None, mi_s: float) -> float:
        got = mi_s if self.over else self.cfg.length(k, min_rtt_ms, mi_s)
        if got >= mi_s:  # only ever set: ``step`` (the decider thread) may set it too
            self.over = True
        elif self.cut_s is None:
            self.cut_s = (got + mi_s) / 2.0
        return got

    def short(self, signals: SignalVector) -> bool:
        """Was the MI just measured a short one? Read on its measured length (the engine
        ends an MI within a tenth of its length), so it holds whatever the order in which the
        engine's threads ask for lengths and decisions."""
        return self.cut_s is not None and signals.mi_s < self.cut_s

    def owns(self, signals: SignalVector) -> bool:
        """``ramp``: is the MI just measured the ramp's (a short MI), so that the inner
        controller is neither shown it nor asked?"""
        return self.cfg.ramp > 0 and self.short(signals)

    def ramp(self, current: int, signals: SignalVector) -> int:
        """``ramp``: the count for the next MI after a short MI run at ``current``. A short
        MI after the ramp ended (sized before it ended) holds the count."""
        if self.ramped:
            return current
        changed = self.last_count is not None and current != self.last_count
        self.last_count = current
        if self.cfg.settle and changed:  # it carries the last count's queue: judge the next
            return current
        u = utility_of(signals)
        if self.best is None or u > self.best[0]:
            self.best = (u, current)
            step = self.cfg.ramp if self.ceiling is None else self.cfg.fine
            up = self.config.clip(current + step)
            if self.ceiling is not None and up >= self.ceiling:
                up = current  # the fine search reached the count that failed
            if up == current:  # at max_streams (or the ceiling): nothing left to ramp
                self.ramped = self.over = True
            return up
        if self.cfg.fine and self.ceiling is None:  # the climb's first miss: search below it
            self.ceiling = current
            up = self.best[1] + self.cfg.fine
            if up < current:
                return up
        self.ramped = self.over = True  # a short MI that is not the best: back to the best
        return self.best[1]

    def step(self, current: int, proposed: int, signals: SignalVector) -> int:
        """The count for the next MI, given the count in effect during the MI just measured
        (``current``) and the inner controller's ``proposed`` one (``grow``; else as asked)."""
        if not self.cfg.grow or proposed >= current:
            return proposed
        self.over = True
        if self.cfg.grow == 2 and self.short(signals):
            self.held += 1
            return current
        return proposed


class Fast(Wrapper):
    """``fast[:mis=K,div=D,max_rtt_ms=M,min_rtts=R,grow=G,ramp=S,fine=F,settle=1][:INNER]``
    (INNER default ppo): INNER's decisions, taken every mi/D for the first K MIs on a path of
    at most M ms (8, 4, 1, 50, 0, 0); with S > 0 those MIs are a ramp of S streams per MI
    instead (``fine`` and ``settle``: :class:`FastConfig`). With G=2 or S > 0 INNER must have
    a ``target`` (it is set to the count held or ramped to)."""

    name = "fast"

    def __init__(self, args: str, config: ControllerConfig) -> None:
        self.fast, args = self._options(args, FastConfig.parse, FastConfig())
        self.phase = FastPhase(self.fast, config)
        need = self.fast.grow == 2 or self.fast.ramp > 0
        self.inner = self._wrap(args, config, "hold" if need else None)
        self.last = self.inner.initial()
        """The count in effect (``grow``: a count below it is a retreat)."""
        if getattr(self.inner, "fast", None) is not None:
            raise ValueError(
                f"fast: {args or 'ppo'!r} shortens its MIs already (its checkpoint's meta "
                "names fast)"
            )

    def initial(self) -> int:
        return self.inner.initial()

    def decide(self, signals: SignalVector) -> int:
        if self.phase.owns(signals):  # ramp: the inner controller never sees a short MI
            self.last = self.target = self.phase.ramp(self.last, signals)
            return self.last
        proposed = self.inner.decide(signals)
        n = self.phase.step(self.last, proposed, signals)  # may end the phase (grow)
        if n != proposed:
            self.target = n  # grow=2 held a retreat: the inner controller goes on from n
        self.last = n
        return n

    def mi_length(self, k: int, min_rtt_ms: float | None, mi_s: float) -> float:
        return self.phase.length(k, min_rtt_ms, mi_s)
