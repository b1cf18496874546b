"""``shed[:KEY=VALUE,...][:INNER]``: a retreat sheds at least a share of the streams
(multiplicative decrease), so copies of one policy on one link drift towards equal counts.

Round 50 (issue #16, ``docs/results/issue16-round50/``). On fig3's link (1 Gbit/s shared by
50-Mbit/s-paced streams) a transfer's share of the link is its share of the streams, and
every transfer reads the same congestion (loss, queueing) whatever its own count. The
shipped policy answers that shared reading with steps of +-1 (and +-5): additive increase,
additive decrease, which keeps whatever difference between two transfers' counts the joins
left (Chiu and Jain, 1989: only a decrease that grows with the count closes it). In the
replayed runs of round 49 a late joiner held 7-13 streams beside a first transfer at 19-20
for 40+ MIs, and fig3's JFI fell to 0.945-0.973 in 4 of 6 runs.

The rule: when INNER proposes fewer streams than the current count ``n``, the count drops by
at least ``beta * n`` streams, dithered (the fraction carried to the next retreat, so a
transfer at 15 with ``beta`` 0.1 sheds 1 and 2 in turn; no random draw, so replays hold),
never below 1; adds and holds pass as asked, and a larger retreat is kept. With ``beta`` 0.1
a transfer at 20 streams retreats by 2 where one at 7 retreats by 1 (its 0.7 is less than the
step INNER asked): over shared congestion events the larger one loses more, and a rounded
share (``ceil``) would not do, since it sheds the same 2 from every count of 11-20. Alone,
the walk around the best count steps down further and climbs back by INNER's adds.
``min_n``: only from a count of at least this (0: any). ``max_n``: only from a count of at most
this (0: any). Round 52: beside on/off rivals a single transfer at 35-47 streams retreats from
loss it did not make, and shedding 4 streams there (round 51's K51 on gen-v11 t03 and t06)
lowers its level; fig3's transfers shed at 10-29. ``max_rtt_ms``: only on paths whose minimum
RTT is at most this (0: any; an unknown RTT is gated in).
``below_peak``: only from a count at least this many streams below the highest count the
transfer has run (0: any). Round 55: on gen-v13-t06 (a single transfer on a clean 39-ms path,
32+ best) 11 of the pair's 13 retreats from at most 30 streams came from the highest count it
had run (a walk testing its ceiling), and K52c's sheds there held it at 26-30; of the 722
retreats in K52c's five fig3 runs 662 came from below the transfer's peak (a share that shrank
when another transfer joined), where the shed is for. 1, not 2: two transfers on one link can
settle into a +-1 cycle one and two streams below the first one's peak, and at 2 it never sheds
(``tests/unit/test_shed.py``).

``once`` (round 62): fig1's lone transfer walks a sawtooth below its ramp's peak, and with
``below_peak=1`` every retreat there sheds, so two in a row (21 -> 19 -> 17, or 19 -> 16) take
the 5-MI throughput under 90 % of the best and its time to optimum from 6 s to 145 s (one of
three 200-s runs). With ``once=1`` a retreat in the MI right after a deepened one goes as
asked: one shed per run of retreats. Two transfers that read the same congestion still drift
together (``tests/unit/test_shed.py``); what it costs fig3 is a testbed question.

``once_share`` (round 65): what ``once`` cost fig3. Round 65's R (the shipped Q with
``once=1``) read fig1 6.0 s in 5 of 5 runs and fig3 in 4 of 5 twice, each miss a late joiner
held several streams below the first transfer's 19-22: the first transfer's sawtooth near its peak
is fig1's, and with ``once`` it sheds less there, so the gap the join left closes more slowly.
The two differ in what the transfer carries: alone (fig1) a retreat comes at 90-100 % of the
highest MI throughput the transfer has measured, beside two late joiners at a third to a half
of it. With ``once_share=S`` (0 < S <= 1) ``once`` holds only while the MI's throughput is at
least S of that best; below it every retreat may shed, as without ``once``.

The inner controller sees every signal vector; its target is set to the shed count, so its
next step starts from there (it must have a ``target``).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import floor

from policy.base import ControllerConfig, RuleWrapper
from policy.gd import RuleConfig
from policy.signals import SignalVector


@dataclass(frozen=True, slots=True)
class ShedConfig(RuleConfig):
    """Constants of the shed (see the module docstring)."""

    who = "shed"

    beta: float = 0.1
    """A retreat sheds at least ``beta * n`` of the ``n`` streams in effect (dithered)."""
    min_n: int = 0
    """Only from a count of at least this (0: any)."""
    max_n: int = 0
    """Only from a count of at most this (0: any)."""
    max_rtt_ms: float = 0.0
    """If > 0, only on paths whose minimum RTT is at most this."""
    below_peak: int = 0
    """If > 0, only from a count at least this many below the highest count run so far."""
    once: int = 0
    """1: a retreat in the MI right after a deepened one passes as asked (one shed per run of
    retreats); 0: every retreat may shed."""
    once_share: float = 0.0
    """With ``once``: if > 0, ``once`` holds only while the MI's throughput is at least this share
    of the highest MI throughput the transfer has measured (0: always)."""

    def __post_init__(self) -> None:
        if not (
            0 < self.beta < 1
            and self.min_n >= 0
            and self.max_n >= 0
            and self.max_rtt_ms >= 0
            and self.below_peak >= 0
            and self.once in (0, 1)
            and 0 <= self.once_share <= 1
        ):
            raise ValueError(
                "shed: needs 0 < beta < 1, min_n >= 0, max_n >= 0, max_rtt_ms >= 0, "
                f"below_peak >= 0, once 0 or 1 and 0 <= once_share <= 1, got beta={self.beta}, "
                f"min_n={self.min_n}, max_n={self.max_n}, max_rtt_ms={self.max_rtt_ms}, "
                f"below_peak={self.below_peak}, once={self.once}, once_share={self.once_share}"
            )
        if self.max_n and self.max_n < self.min_n:
            raise ValueError(f"shed: max_n={self.max_n} is below min_n={self.min_n}: it never acts")


class Shed:
    """The rule, apart from any controller: :meth:`step` takes the count a controller proposes
    for the next MI and the MI just measured, and returns the count to use."""

    def __init__(self, sc: ShedConfig, config: ControllerConfig, initial: int) -> None:
        self.sc, self.config = sc, config
        self.current = config.clip(initial)
        """The count in effect during the MI being decided on (the last count returned)."""
        self.sheds = 0
        """Retreats deepened by the rule."""
        self.carry = 0.0
        """The fraction of a stream the last retreats owed and did not shed (dithering)."""
        self.peak = self.current
        """The highest count in effect so far (``below_peak``)."""
        self.shed_last = False
        """Whether the last step deepened a retreat (``once``)."""
        self.best_bps = 0.0
        """The highest MI throughput measured so far (``once_share``)."""

    def step(self, proposed: int, signals: SignalVector) -> int:
        n, sc = self.current, self.sc
        self.peak = max(self.peak, n)
        proposed = self.config.clip(proposed)
        within = sc.min_n <= n and (sc.max_n == 0 or n <= sc.max_n)
        within = within and n <= self.peak - sc.below_peak
        self.best_bps = max(self.best_bps, signals.throughput_bps)
        near_best = sc.once_share <= 0 or signals.throughput_bps >= sc.once_share * self.best_bps
        within = within and not (sc.once and self.shed_last and near_best)
        shed = False
        if proposed < n and within and signals.rtt_within(sc.max_rtt_ms):
            owed = sc.beta * n + self.carry
            whole = floor(owed + 1e-9)
            self.carry = max(owed - whole, 0.0) if n - proposed < owed else 0.0
            deeper = self.config.clip(max(1, n - whole))
            if deeper < proposed:
                self.sheds += 1
                proposed, shed = deeper, True
        self.shed_last = shed
        self.current = proposed
        return proposed


class ShedWrapper(RuleWrapper):
    """``shed[:beta=B,min_n=M,max_n=X,max_rtt_ms=R,below_peak=P,once=O,once_share=S][:INNER]``:
    follow INNER (default ``ppo``), except that a retreat sheds at least ``B * n`` streams
    (dithered)."""

    name = "shed"

    def __init__(self, args: str, config: ControllerConfig) -> None:
        cfg, args = self._options(args, ShedConfig.parse, ShedConfig())
        self.inner = self._wrap_once(args, config, "hold", "sheds")
        self.rule: Shed = Shed(cfg, config, self.inner.initial())
        self.target = self.rule.current
