"""``warmup[:KEY=VALUE,...][:INNER]``: no add while the youngest streams are still starting.

Round 25 (issue #16, ``docs/results/issue16-round25/``): on long paths the streams' start-up
(slow start, BBR's STARTUP) outlasts a 1-s MI. At 123-201 ms of RTT an MI holds only 5-8
round trips, so the first MIs read a small fraction of what the streams will carry and none
of the loss their start-up overshoot will cause (gen-v2-t06: 2 BBR streams read 6 Mbit/s, 7
read 179 Mbit/s at 0.1 % loss, then 12 read 1352 Mbit/s at 30 % loss). Every trained policy
reads "little throughput, no loss" as "add", and the adds compound the overshoot: on the two
test scenarios of that kind the first five MIs cost the shipped policy 0.32-0.49 of its
utility ratio in each of 4 runs.

The rule: after the stream count rises (and at the transfer's start), further adds wait
until the youngest streams have had ``rtts`` round trips (16; the minimum RTT seen) since
they joined. Retreats and holds pass at once. Where an MI holds ``rtts`` round trips (RTT
<= 62 ms at 1-s MIs: fig1's 40-ms path, the paper's 60-ms path) nothing changes; at 123 ms
each add waits one more MI, at 200 ms three more. ``cc=bbr`` applies the rule only while
our streams run BBR (the signal vector's ``cc``), whose start-up overshoot in a shallow
queue is the costly one; ``cc=any`` (the default) always.

The inner controller sees every signal vector; when an add is deferred its target is set
back to the held count (so it must have a ``target``: ``ppo``, ``ensemble``, ``judge``,
``guard``, ``stdin``). A bundle whose ``meta["warmup"]`` holds a :class:`WarmupConfig` applies
the rule inside ``ppo`` itself (:class:`StartGate`; ``python3 -m train.ship ... --warmup
cc=bbr``). Measured in round 25 as a diagnostic (8 long-path validation scenarios, 2 runs):
with any cc it cost where long ramps pay (-0.188 +- 0.134); with ``cc=bbr`` it never acted on
the cubic ones and removed the start-up ramp on both BBR ones. Round 26 judged ``cc=bbr``
where it acts (validation +0.371 +- 0.113; a fresh test draw, gen-v5, +0.258 +- 0.185 with
one loss, t01 -0.678, a lossy path where the early ramp pays) and the shipped bundle carries
it (``meta["warmup"] = {rtts: 16, cc: bbr}``; ``docs/results/issue16-round26/``).

``carry=1`` (round 27): a deferred add is owed, not dropped. The shipped policy asks to add
in its first MIs on a long BBR path; the warm-up defers those asks, and a history made only of
MIs at the held count often does not ask again (in a world of 20 Mbit/s per stream at 1 %
loss, 150 ms: 2 streams for good, where the same bundle on cubic streams climbs to 29-34).
With ``carry`` the count becomes the largest deferred one at the first MI after the start-up,
unless the controller then asks for more (taken) or fewer (a retreat drops the debt).

``probe=K`` (round 32): an add asked for once the count has stood unchanged for K MIs (the MI
just measured included) is applied as one stream, whatever the cc. Round 31's students
probed from a count that had stood 8-10 MIs, often by +5 (1 -> 6 where 1-3 streams are
best, 4 -> 9 at 6 % loss) where their teacher probed +1; a probe of one stream costs a
fifth as much when it fails, and an add that pays is followed by the next at once (the count
has then stood one MI). Ramps are untouched: after an add the count has stood one MI, and
the start-up deferral above keeps a count still for at most 16 RTTs (4 MIs at 200 ms).

``climb=1`` (round 33): an add of more than one stream is applied as one stream unless it
continues a climb, i.e. the count's last change was an add. So the first add after a retreat
is one stream, and so is the transfer's first add if the start-up deferred one (the first
decision on a path where nothing was deferred is left alone: fig1's +5 ramp). ``climb=2``
cuts the transfer's first add too. Round 32's candidates lost most where they asked +5 right
after a retreat (gen-v6-v02: 1 -> 6 at 5 % loss where 1-2 streams are best) or right after
the start-up's deferral (2 -> 7), where the count had not stood ``probe`` MIs; an add that
pays is followed at once by the next one, now a climb, taken as asked.

``climb_loss=X`` (round 33): the climb cap applies only when the MI just measured lost at
least X (a fraction). Without it the cap is a ratchet wherever the policy see-saws +5/-5:
every -5 is whole and every +5 after it one stream, so the count walks down (gen-v2-v13,
821 Mbit/s at 180 ms and 0.07 % random loss: 47 -> 7 over 20 MIs, -0.202 against ``ppo`` on
gen-v2 validation, 2 runs). Where the loss is small a wrong +5 costs little; the cuts were aimed at
+5 asks at 5-20 % loss (gen-v6-v02, gen-v2-v09).

``climb_peak=1`` (round 34): ``climb_loss`` is read on the largest loss since the count's last
change, the MI that decided that change included, instead of the MI just measured. A retreat
is decided on a lossy MI, and the MI at the count it left us at often reads little (gen-v6-v02
in round 33: the MI at 1 stream lost under 1 %, so the 1 -> 6 that followed a retreat from 5 %
loss was taken, -0.325 against ``ppo``). A see-saw at 0.1 % loss stays below it either way.

``climb_probe=1`` (round 34): an add cut by ``climb`` is a probe, not the start of a climb. The
next add of more than one stream continues the climb only if the MI just measured (at the
probed count) lost less than ``climb_loss``; otherwise it is cut as well. Round 33's cut 1 -> 2
at 17-20 % loss was followed by 2 -> 7 -> 12 at the same loss (gen-v2-v09, where 1-2 streams
are best): the cap then shortened a bad climb by one MI only. Measured in round 34 (gen-v2
validation, 2 runs): it helps there (-0.093 -> -0.050) and costs more elsewhere. Policies that
ask +5 in every MI at 4-5 % loss then creep up one stream per MI (2 -> 9 where 1-2 are best,
gen-v2-v12 -0.192), where a whole +5 would have shown them the loss at once and they would
have retreated. Not used since.
"""

from __future__ import annotations

from dataclasses import dataclass

from policy.base import ControllerConfig, RuleWrapper
from policy.gd import RuleConfig
from policy.signals import SignalVector


@dataclass(frozen=True, slots=True)
class WarmupConfig(RuleConfig):
    """Constants of the warm-up rule (see the module docstring)."""

    who = "warmup"

    rtts: float = 16.0
    """Round trips (of the minimum RTT seen) the youngest streams get before the next add."""
    cc: str = "any"
    """Apply the rule only while our streams run this congestion control (``any``: always)."""
    carry: int = 0
    """1: an add deferred during a start-up is owed, not dropped. At the first MI after the
    start-up the count becomes the largest count deferred in it, unless the controller then
    asks for more (taken) or for fewer (a retreat: the debt is dropped). 0: dropped (round
    26's rule). A policy that asked to add while it could not yet see the new streams' effect
    often no longer asks once its history holds only MIs at the held count."""
    probe: int = 0
    """An add asked for once the count has stood unchanged for this many MIs is applied as
    one stream (any cc). 0: off."""
    climb: int = 0
    """1: an add of more than one stream that does not continue a climb (the count's last
    change was a retreat, or the start-up deferred an add before the first change) is applied
    as one stream. 2: the transfer's first add as well. 0: off."""
    climb_loss: float = 0.0
    """Apply ``climb`` only when the MI just measured lost at least this fraction (0: always;
    an MI whose loss is unknown counts as lossless)."""
    climb_peak: int = 0
    """1: ``climb_loss`` is read on the largest loss since the count's last change, the MI that
    decided the change included (the loss that caused a retreat). 0: the MI just measured."""
    climb_probe: int = 0
    """1: an add cut by ``climb`` is a probe: the next add of more than one stream continues
    the climb only if the MI just measured lost less than ``climb_loss``, else it is cut too.
    0: an add cut by ``climb`` starts a climb like any other add."""

    def __post_init__(self) -> None:
        if self.rtts < 0:
            raise ValueError(f"warmup: rtts must be >= 0, got {self.rtts}")
        if self.carry not in (0, 1):
            raise ValueError(f"warmup: carry must be 0 or 1, got {self.carry}")
        if self.probe < 0:
            raise ValueError(f"warmup: probe must be >= 0, got {self.probe}")
        if self.climb not in (0, 1, 2):
            raise ValueError(f"warmup: climb must be 0, 1 or 2, got {self.climb}")
        if not 0.0 <= self.climb_loss <= 1.0:
            raise ValueError(f"warmup: climb_loss must be in [0, 1], got {self.climb_loss}")
        if self.climb_peak not in (0, 1) or self.climb_probe not in (0, 1):
            raise ValueError(
                f"warmup: climb_peak and climb_probe must be 0 or 1, got {self.climb_peak}, "
                f"{self.climb_probe}"
            )


class StartGate:
    """The warm-up rule's state, apart from any controller: :meth:`step` takes the count a
    controller proposes for the next MI and the MI just measured, and returns the count to
    use. Used by :class:`Warmup` around any controller, and by ``ppo`` itself when its
    checkpoint's ``meta["warmup"]`` holds a :class:`WarmupConfig` (a shipped policy)."""

    def __init__(self, wc: WarmupConfig, config: ControllerConfig, initial: int) -> None:
        self.wc, self.config = wc, config
        self.current = initial
        """The count in effect during the MI being decided on (the last count returned)."""
        self.joined_at = 0.0
        """Transfer time (s) at which the youngest streams joined: the start, or the end of
        the MI that decided the last add."""
        self.deferred = 0
        """Adds deferred (for tests and logs)."""
        self.owed = 0
        """With ``carry``: the largest count deferred since the last grant or retreat."""
        self.still = 0
        """MIs measured at the current count (``probe``)."""
        self.capped = 0
        """Adds cut to one stream by ``probe`` (for tests and logs)."""
        self.last_dir = 0
        """Sign of the count's last change (0: no change yet), as the env's ``last_dir``."""
        self.held = False
        """Has an add been deferred since the count's last change (or the start)?"""
        self.cut = 0
        """Adds cut to one stream by ``climb`` (for tests and logs)."""
        self.peak = 0.0
        """The largest loss since the count's last change, the MI that decided it included
        (``climb_peak``)."""
        self.probing = False
        """Was the count's last change an add cut by ``climb`` (``climb_probe``)?"""

    def starting(self, signals: SignalVector) -> bool:
        """Are the youngest streams within their first ``rtts`` round trips?"""
        if self.wc.cc != "any" and signals.cc != self.wc.cc:
            return False
        rtt = signals.min_rtt_ms
        if rtt is None or rtt <= 0:
            return False
        return signals.t - self.joined_at < self.wc.rtts * rtt / 1000.0

    def step(self, proposed: int, signals: SignalVector) -> int:
        """The count for the next MI, given the controller's ``proposed`` one."""
        proposed = self.config.clip(proposed)
        self.still += 1
        loss = signals.loss_rate or 0.0
        self.peak = max(self.peak, loss)
        cut = self.cut
        if proposed > self.current + 1:
            proposed = self._cap(proposed, loss)
        starting = self.starting(signals)
        if proposed > self.current and starting:
            self.deferred += 1
            self.held = True
            if self.wc.carry:
                self.owed = max(self.owed, proposed)
            proposed = self.current
        elif proposed < self.current:
            self.owed = 0
        elif not starting:
            proposed, self.owed = max(proposed, self.owed), 0
            if proposed > self.current:
                self.joined_at = signals.t
        if proposed != self.current:
            self.still, self.held, self.peak = 0, False, loss
            self.last_dir = 1 if proposed > self.current else -1
            self.probing = self.cut > cut
        self.current = proposed
        return proposed

    def _cap(self, proposed: int, loss: float) -> int:
        """An add of more than one stream, cut to one by ``probe`` or ``climb`` if they apply;
        ``loss``: the MI just measured's (unknown: 0)."""
        one = self.config.clip(self.current + 1)
        if self.wc.probe and self.still >= self.wc.probe:
            self.capped += 1
            return one
        wc = self.wc
        if not wc.climb:
            return proposed
        if self.last_dir > 0:  # continues a climb, unless the last add was a probe that lost
            if not (wc.climb_probe and self.probing):
                return proposed
            lost = loss >= wc.climb_loss
        else:
            fresh = self.last_dir < 0 or self.held or wc.climb == 2
            lost = fresh and (self.peak if wc.climb_peak else loss) >= wc.climb_loss
        if lost:
            self.cut += 1
            return one
        return proposed


class Warmup(RuleWrapper):
    """``warmup[:INNER]``: follow INNER (default ``ppo``); defer adds during start-up."""

    name = "warmup"

    def __init__(self, args: str, config: ControllerConfig, wc: WarmupConfig | None = None) -> None:
        cfg, args = self._options(args, WarmupConfig.parse, wc or WarmupConfig())
        self.inner = self._wrap_once(args, config, "hold", "applies a warm-up")
        self.rule: StartGate = StartGate(cfg, config, self.inner.initial())

    @property
    def deferred(self) -> int:
        """Adds deferred (for tests and logs)."""
        return self.rule.deferred
