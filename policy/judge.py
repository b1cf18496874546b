"""``judge[:KEY=VALUE,...][:INNER]``: judge each large add by the MI after the one it joins in.

Round 23 (issue #16, ``docs/results/issue16-round23/adds23.txt``, 507 adds of >= 4 streams in
testbed logs): the MI in which added streams join shows a loss burst on every network, so
a policy that reads it retreats from adds that pay (beside BBR flows: the next MI's loss is
below the pre-add level, throughput x2.0, utility 9 -> 36) as readily as from adds that do
not (a LAN where one stream is right: throughput x1.00, utility 62 -> -171). The next MI
separates the two. The judge wraps an inner controller (default ``ppo``) and follows it,
except around an add of ``step`` (4) or more streams:

1. **Join**: in the MI the added streams join, a retreat the inner controller asks for is
   not taken (the count stays at the added level). A further add is taken, and the judging
   moves on to that level (a ramp of +5s is not slowed).
2. **Verdict**: in the MI after the join MI, the utility is compared with the MI before
   the add. If it beats that by ``margin`` (10 %) the add paid: the inner controller is
   kept at or above ``floor_share`` (1.0) of the added level for ``hold`` MIs (10).
   Otherwise it did not: the count goes back to the level before the add (before the first
   add of a ramp) and adds are
   refused for a cooldown (``cooldown`` MIs, 8, doubled after each consecutive unpaid add
   up to ``max_cooldown``, 64) - a +5/-5 see-saw on a LAN costs one add per cooldown. A
   floor left by an earlier add that paid stays for the rest of its hold.
3. **Options of round 40** (off by default): ``per_step=1`` judges each step of a ramp
   against the step before it (its level, the utility of its MI) rather than the whole ramp
   against the MI before its first add, which judged gen-v7-v01's 2 -> 7 -> 12 "paid" (12
   streams at 807-852 against 432 at 2, where 7 had read 1295-1353) and floored the
   overshoot it was meant to undo (``docs/results/issue16-round39/``). ``keep_band`` keeps
   an add that fell short of paying by less than that share without a floor, so only a
   clear fall is undone (0.2 with the 10 % margin: a fall of more than 10 %). ``max_rtt_ms``
   judges adds only on paths whose minimum RTT is at most that (one MI after the join,
   streams on a long path are still in slow start).
4. **``mis`` (round 58, off by default)**: the verdict compares the mean utility of ``mis`` MIs
   after the join MI with the mean of the ``mis`` MIs up to the one before the add (fewer if the
   transfer is younger), and in the verdict's MIs before its last the count holds at the added
   level (no retreat, no add). ``per_step``'s yardstick for a further step of a ramp stays the
   one MI before that step (a join MI). Beside BBR rivals one MI's utility swings by its own size
   (round 58: K55's 5 runs on ``hand-bbr-shared-1g`` read -67..97 at a steady count), and 5 of
   15 round-58 runs there undid a ramp to 18-19 streams back to 3-4 where 16 are worth about
   four times 4 (round 57's sweep) because one pre-add MI read high or one verdict MI low.
5. **``back`` (round 60, off by default)**: an unpaid ramp goes back one step, to the level
   before its last add, not to the level before its first (the cooldown's ceiling is that
   level too). Round 60's I on ``hand-bbr-established-1g`` ramped 2 -> 27 by +5s, its verdict
   MIs read the overshoot's burst (-50, 15, 32 against about 0 before the ramp), and the undo
   went to 2 streams where 16 read about 48 later in the same run (0.166 against 0.53-0.68 for
   its other nine runs); round 59's F went 21 -> 1 the same way on a LAN. A single add goes
   back to where it began either way.

Measured in round 24 (``docs/results/issue16-round24/``, testbed, 2 runs per scenario) around
round 22's kicked member (``hold-kick22-s3``): it ended that policy's +5/-5 see-saw on LANs
(gen-v2-v10 1.003 vs 0.504) and kept its climb beside BBR flows (0.705), but on gen-v2
validation it stayed below the shipped policy (-0.079 with the floor, -0.041 with
``hold=0``); it is not the default.

The inner controller sees every signal vector (its history stays whole); when the judge
overrides it, the inner target is set to the judge's count. So the inner controller must
have a ``target`` attribute (``ppo``, ``ensemble``, ``guard``, ``stdin`` do). A checkpoint or
bundle whose ``meta["judge"]`` holds a :class:`JudgeConfig` is judged by ``ppo`` itself
(:class:`AddJudge`; ``python3 -m train.ship --checkpoint CKPT --judge``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from policy.base import ControllerConfig, RuleWrapper
from policy.gd import RuleConfig
from policy.signals import SignalVector
from policy.utility import utility_of


@dataclass(frozen=True, slots=True)
class JudgeConfig(RuleConfig):
    """Constants of the judge (see the module docstring)."""

    who = "judge"

    step: int = 4
    """The smallest add (streams, from one MI to the next) that is judged."""
    margin: float = 0.10
    """An add paid if the verdict MI's utility beats the MI before the add by this share."""
    hold: int = 10
    """MIs the floor lasts after an add that paid."""
    floor_share: float = 1.0
    """After an add that paid, the inner controller is kept at or above this share of the
    added level."""
    cooldown: int = 8
    """MIs adds are refused after the first unpaid add of a run of them."""
    max_cooldown: int = 64
    """The cooldown doubles with each consecutive unpaid add up to this."""
    per_step: int = 0
    """0: a ramp (adds of ``step`` or more in consecutive MIs) is judged as one add, against
    the MI before its first add (round 24). 1: each further add of a ramp moves the judging
    on to that step, against the MI before it (the step before's level, its utility), so a
    ramp's last step is undone alone when it overshot (round 40)."""
    keep_band: float = 0.0
    """An add whose verdict falls short of paying by less than this share of the pre-add
    utility is kept without a floor, not undone (0: every add that did not pay is undone;
    0.2 with the default margin: undone only when the utility fell by more than 10 %)."""
    max_rtt_ms: float = 0.0
    """Adds are judged only while the path's minimum RTT is at most this (0: on every path).
    One MI after the join, streams on a long path are still in slow start, so the verdict
    MI reads their burst, not the level (round 40: hand-lossy-long's 12 -> 17 read 213 ->
    157, 151, then 207)."""

    mis: int = 1
    """MIs averaged on each side of the verdict (see the module docstring, item 4)."""

    back: int = 0
    """0: an unpaid ramp goes back to the level before its first add; 1: to the level before
    its last (see the module docstring, item 5)."""

    band: int = 0
    """1: only inside a bundle with a band (``meta["band"]``, :mod:`policy.band`): adds are
    judged only while the band is open, i.e. the band's member decides, and the judge starts
    afresh each time the band opens; while the band is closed the bundle decides as without
    a judge (round 49b: beside BBR rivals the band's member see-saws 12 <-> 22 by +5/-5 where
    a fixed 12-16 is best, and drifts down after adds that paid)."""

    def __post_init__(self) -> None:
        if self.band not in (0, 1):
            raise ValueError(f"judge: band must be 0 or 1, got {self.band}")
        if self.back not in (0, 1):
            raise ValueError(f"judge: back must be 0 or 1, got {self.back}")
        if self.per_step not in (0, 1):
            raise ValueError(f"judge: per_step must be 0 or 1, got {self.per_step}")
        if self.keep_band < 0:
            raise ValueError(f"judge: keep_band must be >= 0, got {self.keep_band}")
        if self.max_rtt_ms < 0:
            raise ValueError(f"judge: max_rtt_ms must be >= 0, got {self.max_rtt_ms}")
        if self.mis < 1:
            raise ValueError(f"judge: mis must be >= 1, got {self.mis}")


class AddJudge:
    """The judge's state machine, apart from any controller: :meth:`step` takes the count a
    controller proposes for the next MI and the MI just measured, and returns the count to
    use. Used by :class:`Judge` around any controller, and by ``ppo`` itself when its
    checkpoint's ``meta["judge"]`` holds a :class:`JudgeConfig` (a shipped policy)."""

    def __init__(
        self,
        jc: JudgeConfig,
        config: ControllerConfig,
        initial: int,
        recent: Iterable[float] = (),
    ) -> None:
        self.jc, self.config = jc, config
        self.recent: deque[float] = deque(recent, maxlen=jc.mis)
        """The utilities of the last ``mis`` MIs, the one just measured included (a judge
        started afresh mid-transfer takes its predecessor's, ``recent``)."""
        self.after: list[float] = []
        """The utilities of the verdict's MIs so far."""
        self.mode = "follow"
        """``follow``, ``join`` (the next MI is the added streams' first) or ``verdict``."""
        self.current = initial
        """The count in effect during the MI being decided on (the last count returned)."""
        self.base = 0
        """The count before the add being judged."""
        self.last_base = 0
        """The count before the last add of the ramp being judged (``back``)."""
        self.u_before = 0.0
        """Utility of the MI before the add being judged."""
        self.floor = self.floor_left = 0
        self.ceil = self.cool_left = 0
        self.cool_next = jc.cooldown
        self.handlers = {"follow": self._follow, "join": self._join, "verdict": self._verdict}
        """The state table: each mode's handler of (proposed count, signals)."""
        self.paid = 0
        """Adds judged as paid (for tests and logs)."""
        self.unpaid = 0
        """Adds judged as unpaid and undone."""
        self.kept = 0
        """Adds short of paying within ``keep_band``: kept without a floor."""

    def step(self, proposed: int, signals: SignalVector) -> int:
        """The count for the next MI, given the controller's ``proposed`` one."""
        self.observe(signals)
        self.current = self.config.clip(self.handlers[self.mode](proposed, signals))
        return self.current

    def observe(self, signals: SignalVector) -> None:
        """Count the MI just measured into ``recent`` (:meth:`step` does; a band's judge is
        shown the MIs while the band is closed this way)."""
        self.recent.append(utility_of(signals))

    def _follow(self, proposed: int, signals: SignalVector) -> int:
        if self.floor_left > 0:
            proposed = max(proposed, self.floor)
            self.floor_left -= 1
        if self.cool_left > 0:
            proposed = min(proposed, max(self.ceil, self.current))
            self.cool_left -= 1
        if proposed - self.current >= self.jc.step and self._judged_path(signals):
            self.mode, self.base = "join", self.current
            self.last_base = self.current
            self.u_before = sum(self.recent) / len(self.recent)
        return proposed

    def _judged_path(self, signals: SignalVector) -> bool:
        """Whether adds on this path are judged (``max_rtt_ms``; an unknown RTT is judged)."""
        return signals.rtt_within(self.jc.max_rtt_ms)

    def _join(self, proposed: int, signals: SignalVector) -> int:
        """The added streams' first MI: no retreat; a further add moves the judging on."""
        if proposed - self.current >= self.jc.step:
            self.mode, self.last_base = "join", self.current
            if self.jc.per_step:  # the step before is the yardstick of this one
                self.base, self.u_before = self.current, self.recent[-1]
        else:
            self.mode, self.after = "verdict", []
        return max(proposed, self.current)

    def _verdict(self, proposed: int, signals: SignalVector) -> int:
        """The MI after the join MI (the ``mis``-th after it): keep the add (a floor under it)
        or undo it (a cooldown); before the last of the verdict's MIs the count holds."""
        self.after.append(self.recent[-1])  # this MI's utility, counted by step
        if len(self.after) < self.jc.mis:
            return self.current
        self.mode = "follow"
        u = sum(self.after) / len(self.after)
        if u > self.u_before + self.jc.margin * abs(self.u_before):
            self.paid += 1
            self.cool_next = self.jc.cooldown
            self.floor = int(self.current * self.jc.floor_share)
            self.floor_left = self.jc.hold
            return self._follow(proposed, signals)  # a further add is judged anew
        band = self.jc.keep_band
        if band > 0 and u >= self.u_before + (self.jc.margin - band) * abs(self.u_before):
            self.kept += 1  # short of paying, within the band: no floor, no undo
            return self._follow(proposed, signals)
        self.unpaid += 1
        back = self.last_base if self.jc.back else self.base
        self.ceil, self.cool_left = back, self.cool_next
        self.cool_next = min(2 * self.cool_next, self.jc.max_cooldown)
        return min(proposed, back)


class Judge(RuleWrapper):
    """``judge[:INNER]``: follow INNER (default ``ppo``); judge large adds one MI late."""

    name = "judge"

    def __init__(self, args: str, config: ControllerConfig, jc: JudgeConfig | None = None) -> None:
        cfg, args = self._options(args, JudgeConfig.parse, jc or JudgeConfig())
        if cfg.band:
            raise ValueError("judge: band=1 judges a banded bundle's member; ship it in the bundle")
        self.inner = self._wrap_once(args, config, "set", "judges its adds")
        self.rule: AddJudge = AddJudge(cfg, config, self.inner.initial())
