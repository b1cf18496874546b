"""``guard[:INNER]``: a safety layer that probes before letting a policy sit at 1-2 streams.

The learned policy's worst testbed failures (issue #16) end the same way: after a loss burst
it retreats to one or two streams and stays there, although more streams would pay (loss it
did not cause, a slow-start burst on a long path). The guard wraps an inner controller
(default ``ppo``; ``guard:ppo:/path/ckpt.pt`` for another checkpoint) and follows it, except:

1. **Trigger**: the inner controller asks for ``<= low`` streams (2), for ``patience``
   MIs in a row (1), while the last ``loss_window`` MIs (3) saw a loss rate of at least
   ``loss_min`` (0.1 %), and no cooldown is running.
2. **Measure low**: the guard lets it go there and waits ``settle`` MIs (2); the utility of
   the last of them is the reference. With ``elastic`` > 0 the guard first asks whether the
   retreat cured the loss: if the mean loss rate read at the low level (the ``patience``
   wait's MIs and the ``settle`` ones) is below ``elastic`` times the mean of the trigger
   window's MIs before the retreat, the loss was the transfer's own
   (it falls with its stream count), so no probe is run: the inner controller keeps the
   low level and the cooldown starts as after a lost probe (a probe there only buys the
   loss back, e.g. several BBR streams in a deep queue). Loss that others cause, or random
   loss, does not fall with the retreat.
3. **Probe, then low again (A/B/A)**: ``step`` more streams (5) for ``settle`` MIs, then
   back to the low level for ``settle`` MIs. The probe wins only if its utility beats
   *both* low measurements by ``margin`` (5 %): a competitor that switches off (or on)
   during the probe moves one low reading with it, so a change of the path is not read as
   the probe paying (the one-sided comparison of the first guard was fooled so on noisy
   paths where 1-2 streams are right). After a win the guard climbs ``step`` at a time
   from the probe level (at most ``max_climbs`` probes), each climb compared with the level
   below it.
4. **Hand back**: at the best level measured. If a probe won, the inner controller is not
   allowed below ``floor_share`` (half) of that level for ``hold`` MIs (10, multiplied by
   ``hold_growth`` after each consecutive win: 1, a fixed hold, by default); if none won,
   the guard goes back to the low level and will not probe again for a cooldown that
   doubles each time (8, 16, ... MIs), so a path where 1-2 streams are right pays for a
   probe rarely.

5. **Shed (opt-in, ``shed`` > 0): the same experiment downwards.** When the inner controller
   holds 2 or more streams while the trigger window's mean loss rate is at least ``shed``
   (e.g. 3 %), the guard measures that level, then half of it, then that level again
   (``settle`` MIs each). If the lower level's utility beats *both* readings by ``margin``,
   the loss was the transfer's own (BBR streams in a shallow queue lose 10-20 % at 2-3
   streams and little at one, while the policy reads the loss as others' and stays): the
   inner controller is kept at or below the lower level for ``hold`` MIs, doubled after each
   consecutive win. Otherwise the loss is shared or random and fewer streams only cost
   throughput: the guard hands back and will not shed again for a cooldown that doubles
   each time (``cooldown``, like the probe's, but counted apart). Measured in round 17
   (``shed=0.05``, ``docs/results/issue16-round17/``): it did not pay on the testbed (halving
   is too small a step at 6 BBR streams and too large at 2 capped ones), so it is off.

6. **Gates (round 27, off by default)**: ``cc`` and ``rtt_above_ms`` let a probe or a shed
   start only while our streams run that congestion control on a path above that minimum
   RTT (``cc=bbr,rtt_above_ms=62.5``: where the shipped warm-up acts; elsewhere the guard
   decides as its inner controller, MI for MI). ``settle_rtts`` waits for the start-up: no
   trigger until the youngest streams have had that many round trips, and a raised level
   (a probe or a climb) is read only in an MI that starts that many round trips after the
   rise, besides ``settle`` MIs.

Every constant can be set in the spec, for choosing them on validation scenarios:
``guard:hold=20,hold_growth=2:ppo`` (``KEY=VALUE`` pairs of :class:`GuardConfig` before
the inner controller).

The inner controller sees every signal vector throughout (its history stays whole); its
own target is set to the guard's at hand-back, so it must have a ``target`` attribute
(``ppo`` and ``stdin`` do).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from statistics import fmean

from policy.base import ControllerConfig, Wrapper
from policy.gd import parse_config
from policy.signals import SignalVector
from policy.utility import utility_of


@dataclass(frozen=True, slots=True)
class GuardConfig:
    """Constants of the guard (see the module docstring)."""

    low: int = 2
    loss_window: int = 3
    loss_min: float = 1e-3
    settle: int = 2
    step: int = 5
    margin: float = 0.05
    max_climbs: int = 3
    climb_margin: float = 0.05
    """A climb after a won probe (``step`` more streams again) is kept if its utility beats
    the level below by this share (negative: if it is no worse by more than that share;
    the utility already charges each stream, and one MI's utility is noisy)."""
    hold: int = 10
    hold_growth: float = 1.0
    """Each consecutive won probe multiplies the hold by this (1: a fixed hold)."""
    floor_share: float = 0.5
    """After a win the inner controller is kept at or above this share of the best level."""
    cooldown: int = 8
    patience: int = 1
    """MIs the inner controller must have asked for ``<= low`` in a row before a trigger
    (1: at once); a policy that climbs back by itself is left alone."""
    cc: str = "any"
    """Trigger (probe or shed) only while our streams run this congestion control (the signal
    vector's ``cc``; ``any``: always), as ``warmup``'s ``cc``."""
    rtt_above_ms: float = 0.0
    """Trigger only on paths whose minimum RTT is above this (0: any path; an unknown RTT
    then never triggers)."""
    settle_rtts: float = 0.0
    """Start-up, in round trips of the minimum RTT (0: none). No trigger until the youngest
    streams have had this many round trips since they joined (the transfer's start or the
    last rise of the count), and a raised level (a probe or a climb) is read only in an MI
    that starts at least this many round trips after the rise, as well as ``settle`` MIs
    after it: on a 200-ms path BBR's start-up outlasts two 1-s MIs (``warmup``)."""
    shed: float = 0.0
    """Mean loss rate of the trigger window at or above which the guard tests half the inner
    controller's level when it holds 2 or more streams (0: never; step 5 of the docstring)."""
    elastic: float = 0.0
    """Skip the probe when the retreat cut the mean loss rate below this share of the
    trigger window's mean (0: always probe). Means, not extremes: one MI's loss beside
    competitors reads anywhere from 0 to 12 % (round 16 compared the lowest reading at the
    low level with the highest before, read nearly every retreat as cured and never
    probed beside BBR)."""

    @classmethod
    def parse(cls, text: str) -> GuardConfig:
        """``KEY=VALUE[,KEY=VALUE...]`` over the defaults, e.g. ``hold=20,hold_growth=2``."""
        return parse_config(cls, text, "guard")


class Guard(Wrapper):
    """``guard[:INNER]``: follow INNER (default ``ppo``), probe before sitting at 1-2 streams.
    ``target`` (from :class:`policy.base.Wrapper`) is the count the guard hands back to;
    during a probe the guard's own level wins at the next decision."""

    name = "guard"

    def __init__(self, args: str, config: ControllerConfig, gc: GuardConfig | None = None) -> None:
        self.gc, args = self._options(args, GuardConfig.parse, gc or GuardConfig())
        self.inner = self._wrap(args, config, "hand back")
        self.config = config
        self.losses: deque[float] = deque(maxlen=self.gc.loss_window + self.gc.patience - 1)
        """Loss rates of the trigger window, plus the MIs of the ``patience`` wait before it."""
        self.mode = "follow"
        self.k = 0
        self.level = 0
        self.best = 0
        self.u_ref = 0.0
        self.u_probe = 0.0
        self.base = 0
        """The low level the inner controller asked for (A of A/B/A)."""
        self.b_level = 0
        """The first probe's level (B)."""
        self.climbs = 0
        self.floor = 0
        self.floor_left = 0
        self.cool_left = 0
        self.cool_next = self.gc.cooldown
        self.hold_next: float = self.gc.hold
        self.probes = 0
        """Probes started (for tests and logs)."""
        self.cured = 0
        """Triggers where the retreat cured the loss, so no probe ran (``elastic``)."""
        self.loss_before = 0.0
        """Mean loss rate of the trigger window's MIs before the retreat (``elastic``)."""
        self.loss_low: list[float] = []
        """Loss rates read at the low level since the retreat (``elastic``)."""
        self.low_run = 0
        """Consecutive MIs the inner controller asked for ``<= low`` (``patience``)."""
        self.sheds = 0
        """Shed experiments started (``shed``)."""
        self.shed_wins = 0
        """Shed experiments the lower level won."""
        self.u_high = 0.0
        """Utility of the first reading at the inner controller's level (A of a shed's A/B/A)."""
        self.ceil = 0
        self.ceil_left = 0
        self.shed_cool_left = 0
        self.shed_cool_next = self.gc.cooldown
        self.shed_hold_next = self.gc.hold
        self.out = 0
        """The count the guard returned last."""
        self.rise_t = 0.0
        """Transfer time (s) at which the youngest streams joined (``settle_rtts``)."""

    def initial(self) -> int:
        return self.inner.initial()

    def _set_inner(self, n: int) -> int:
        self.target = n = self.config.clip(n)
        return n

    def decide(self, signals: SignalVector) -> int:
        n = self._decide(signals)
        if n > (self.out or signals.streams):
            self.rise_t = signals.t
        self.out = n
        return n

    def _startup_s(self, signals: SignalVector) -> float:
        """``settle_rtts`` round trips of the minimum RTT, in seconds (0 if unknown)."""
        rtt = signals.min_rtt_ms
        return self.gc.settle_rtts * rtt / 1000.0 if rtt and rtt > 0 else 0.0

    def _acts(self, signals: SignalVector) -> bool:
        """May a probe or a shed start here (``cc``, ``rtt_above_ms``, start-up over)?"""
        if self.gc.cc != "any" and signals.cc != self.gc.cc:
            return False
        rtt = signals.min_rtt_ms
        if self.gc.rtt_above_ms > 0 and (rtt is None or rtt <= self.gc.rtt_above_ms):
            return False
        return signals.t - self.rise_t >= self._startup_s(signals)

    def _decide(self, signals: SignalVector) -> int:
        proposed = self.inner.decide(signals)  # always: the inner history stays whole
        self.losses.append(signals.loss_rate or 0.0)
        self.cool_left = max(self.cool_left - 1, 0)
        self.floor_left = max(self.floor_left - 1, 0)
        self.ceil_left = max(self.ceil_left - 1, 0)
        self.shed_cool_left = max(self.shed_cool_left - 1, 0)
        if self.mode == "follow":
            return self._follow(proposed, self._acts(signals))
        self.k += 1
        u = utility_of(signals)
        if self.mode.startswith("shed"):
            return self._shed(u)
        if self.mode == "low":
            self.loss_low.append(signals.loss_rate or 0.0)
        if self.k < self.gc.settle:
            return self.level
        rose = self.mode in ("first", "probe") and self.gc.settle_rtts > 0
        if rose and signals.t - signals.mi_s + 0.01 < self.rise_t + self._startup_s(signals):
            return self.level  # the raised level's streams are still starting (10 ms slack)
        if self.mode == "low":
            self.u_ref, self.best, self.base = u, self.level, self.level
            if fmean(self.loss_low) < self.gc.elastic * self.loss_before:
                self.cured += 1
                return self._hand_back()
            self.probes += 1
            return self._probe(self.level + self.gc.step)
        if self.mode == "first":  # B measured: go back to the low level for A again
            self.u_probe, self.b_level, self.mode, self.k = u, self.level, "again", 0
            self.level = self._set_inner(self.base)
            return self.level
        if self.mode == "again":  # A/B/A: the probe must beat both low readings
            self.u_ref = max(self.u_ref, u)
            u, self.level = self.u_probe, self.b_level
        margin = self.gc.margin if self.mode == "again" else self.gc.climb_margin
        if not self._beats(u, margin):
            return self._hand_back()
        self.u_ref, self.best = max(u, self.u_ref), self.level
        if self.climbs < self.gc.max_climbs and self.level < self.config.max_streams:
            return self._probe(self.level + self.gc.step)
        return self._hand_back()

    def _beats(self, u: float, margin: float) -> bool:
        return u > self.u_ref + margin * abs(self.u_ref)

    def _follow(self, proposed: int, acts: bool) -> int:
        if self.floor_left > 0 and proposed < self.floor:
            return self._set_inner(self.floor)
        if self.ceil_left > 0 and proposed > self.ceil:
            return self._set_inner(self.ceil)
        self.low_run = self.low_run + 1 if proposed <= self.gc.low else 0
        hist = list(self.losses)
        window = hist[-self.gc.loss_window :]
        if (
            self.gc.shed > 0
            and acts
            and proposed // 2 >= self.config.min_streams  # >= 2 streams, as min_streams >= 1
            and self.shed_cool_left == 0
            and self.floor_left == 0
            and self.ceil_left == 0
            and len(window) == self.gc.loss_window
            and fmean(window) >= self.gc.shed
        ):
            self.sheds += 1
            self.mode, self.k, self.level = "shed_high", 0, proposed
            return proposed
        lossy = max(window, default=0.0) >= self.gc.loss_min
        if (
            self.low_run >= self.gc.patience
            and acts
            and lossy
            and self.cool_left == 0
            and self.ceil_left == 0
        ):
            self.mode, self.k, self.level, self.climbs = "low", 0, proposed, 0
            cut = len(hist) - (self.gc.patience - 1)  # the wait's MIs were read low already
            self.loss_before, self.loss_low = fmean(hist[:cut] or [0.0]), hist[cut:]
        return proposed

    def _shed(self, u: float) -> int:
        """A/B/A downwards: the inner level, half of it, the inner level again."""
        if self.k < self.gc.settle:
            return self._set_inner(self.level if self.mode != "shed_low" else self.level // 2)
        self.k = 0
        if self.mode == "shed_high":
            self.u_high, self.mode = u, "shed_low"
            return self._set_inner(self.level // 2)
        if self.mode == "shed_low":
            self.u_probe, self.mode = u, "shed_again"
            return self._set_inner(self.level)
        self.mode = "follow"
        high = max(self.u_high, u)
        if self.u_probe > high + self.gc.margin * abs(high):  # the loss was ours
            self.shed_wins += 1
            self.ceil, self.ceil_left = self.level // 2, round(self.shed_hold_next)
            self.shed_hold_next *= 2
            return self._set_inner(self.ceil)
        self.shed_cool_left, self.shed_cool_next = self.shed_cool_next, self.shed_cool_next * 2
        self.shed_hold_next = self.gc.hold
        return self._set_inner(self.level)

    def _probe(self, n: int) -> int:
        self.mode, self.k = ("first" if self.climbs == 0 else "probe"), 0
        self.climbs += 1
        self.level = self._set_inner(n)
        return self.level

    def _hand_back(self) -> int:
        won = self.best > self.gc.low
        self.mode = "follow"
        if won:
            floor = int(self.best * self.gc.floor_share)
            self.floor, self.floor_left = max(floor, self.gc.low + 1), round(self.hold_next)
            self.cool_next = self.gc.cooldown
            self.hold_next *= self.gc.hold_growth
        else:
            self.cool_left, self.cool_next = self.cool_next, self.cool_next * 2
            self.hold_next = self.gc.hold
        return self._set_inner(self.best)
