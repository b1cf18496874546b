"""``rebound[:KEY=VALUE,...][:INNER]``: when a flood of loss that others made ends, add
streams at once instead of climbing back by one a measurement interval.

Round 63 (issue #16, ``docs/results/issue16-round63/``). Beside an on/off BBR transfer on a
shallow, mildly lossy long path (gen-v18-t02: 65 ms, 0.11 % random loss; the validation
scenario ``hand-bbr-onoff-lossy-80ms``: 80 ms, 0.1 %), every count reads 10-45 % loss and a
few Mbit/s while the rivals are on, so the pair retreats through the on-period to 2-5
streams. When the rivals stop, one cubic stream is held to a few Mbit/s by the random loss
(Mathis), the path needs 10-16 streams, and the pair climbs there by +1 a measurement
interval (MI): in two of the shipped policy's three runs it held 3-4 streams through the
whole 8-s off period (11-41 Mbit/s where 14 streams carried 99-128).

The rule: a run of at least ``mis`` MIs each with loss >= ``hi`` is a flood; when an MI
within ``gap`` MIs of its end reads loss < ``lo`` and a throughput at least ``rise`` times
the flood's median (the link came free; after a flood of our own making the throughput does
not jump), the count in effect goes up by ``step`` whatever INNER proposed (a larger add is
kept). Up to ``climbs`` such steps follow each flood, the second and later only while the
loss stays below ``lo`` and each MI's throughput is at least ``gain`` above the one before
(the added streams paid); ``settle`` join MIs after a step are skipped before that check
(round 63: the added streams' slow start made 4-10 % loss in the MI after the first step, so
without it the second step never came). ``min_rtt_ms`` and ``max_n`` bound where it acts:
paths whose minimum RTT is at least this (0: any; an unknown RTT is gated out, since the class
is long paths), counts of at most this (0: any). Retreats and holds outside a rebound pass as
asked. A flood's throughputs are kept only until the next one starts more than ``gap`` MIs
later, and are read only within ``gap`` MIs of its end.

The inner controller sees every signal vector; its target is set to the rule's count, so its
next step starts from there (it must have a ``target``).
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median

from policy.base import ControllerConfig, RuleWrapper
from policy.gd import RuleConfig
from policy.signals import SignalVector


@dataclass(frozen=True, slots=True)
class ReboundConfig(RuleConfig):
    """Constants of the rebound (see the module docstring)."""

    who = "rebound"

    hi: float = 0.10
    """An MI with loss at least this is part of a flood."""
    mis: int = 3
    """A flood is at least this many such MIs in a row (a slow-start burst of our own is 1-2)."""
    lo: float = 0.01
    """An MI with loss below this ends the flood (the path's random loss stays below it)."""
    gap: int = 3
    """The MI that ends the flood comes at most this many MIs after its last flooded MI (the
    rivals' loss decays through 5-9 % for one or two MIs: gen-v3-v07's runs in round 63)."""
    rise: float = 2.0
    """...and carries at least this many times the flood's median throughput."""
    step: int = 5
    """Streams added at each rebound step."""
    climbs: int = 2
    """Rebound steps after one flood, the first at its end."""
    gain: float = 0.1
    """A later step needs the MI's throughput at least ``1 + gain`` times the MI of the step
    before."""
    settle: int = 0
    """MIs after a step that the next step's check skips: the added streams' join MIs, whose
    slow-start loss (3.7-9.9 % on ``hand-bbr-onoff-lossy-80ms``, round 63) says nothing of
    whether they paid. 0: the MI right after a step judges it."""
    min_rtt_ms: float = 30.0
    """Only on paths whose minimum RTT is at least this (0: any)."""
    max_n: int = 0
    """Only from a count of at most this (0: any)."""

    def __post_init__(self) -> None:
        if not (
            0 < self.lo <= self.hi < 1
            and self.mis >= 1
            and self.gap >= 1
            and self.rise >= 1
            and self.step >= 1
            and self.climbs >= 1
            and self.gain >= 0
            and self.settle >= 0
            and self.min_rtt_ms >= 0
            and self.max_n >= 0
        ):
            raise ValueError(
                "rebound: needs 0 < lo <= hi < 1, mis >= 1, gap >= 1, rise >= 1, step >= 1, "
                "climbs >= 1, gain >= 0, settle >= 0, min_rtt_ms >= 0 and max_n >= 0, got "
                f"hi={self.hi}, lo={self.lo}, mis={self.mis}, gap={self.gap}, "
                f"rise={self.rise}, step={self.step}, climbs={self.climbs}, gain={self.gain}, "
                f"settle={self.settle}, min_rtt_ms={self.min_rtt_ms}, max_n={self.max_n}"
            )


class Rebound:
    """The rule, apart from any controller: :meth:`step` takes the count a controller proposes
    for the next MI and the MI just measured, and returns the count to use."""

    def __init__(self, rc: ReboundConfig, config: ControllerConfig, initial: int) -> None:
        self.rc, self.config = rc, config
        self.current = config.clip(initial)
        """The count in effect during the MI being decided on (the last count returned)."""
        self.rebounds = 0
        """Steps the rule added."""
        self.flood: list[float] = []
        """Throughputs of the MIs of the current (or last) run of flooded MIs."""
        self.since = 0
        """MIs since the last flooded one (0: this run is still flooding)."""
        self.left = 0
        """Rebound steps still allowed after the last flood's end (``climbs``)."""
        self.ref_bps = 0.0
        """The throughput of the MI the last step was taken on (``gain``)."""
        self.wait = 0
        """Join MIs still to skip before the next step's check (``settle``)."""

    def _gated_in(self, signals: SignalVector) -> bool:
        rc, rtt = self.rc, signals.min_rtt_ms
        if rc.min_rtt_ms > 0 and (rtt is None or rtt < rc.min_rtt_ms):
            return False
        return rc.max_n == 0 or self.current <= rc.max_n

    def step(self, proposed: int, signals: SignalVector) -> int:
        rc, n = self.rc, self.current
        proposed = self.config.clip(proposed)
        loss, bps = signals.loss_rate, signals.throughput_bps
        add = False
        if self.left > 0 and self.wait > 0:
            self.wait -= 1  # a join MI of the streams just added: not judged, not a flood
        elif loss is not None and loss >= rc.hi:
            if self.since > rc.gap:  # a new flood (a dip under hi within gap joins them)
                self.flood = []
            self.flood.append(bps)
            self.since, self.left = 0, 0
        else:
            self.since += 1
            clear = loss is not None and loss < rc.lo
            if (
                clear
                and len(self.flood) >= rc.mis
                and self.since <= rc.gap
                and bps >= rc.rise * median(self.flood)
            ):  # the flood's end: the first step
                self.flood, self.left = [], rc.climbs
                add = True
            elif self.left > 0 and clear and bps >= (1 + rc.gain) * self.ref_bps:
                add = True  # the last step paid: the next
            elif self.left > 0:
                self.left = 0  # it did not: the climb is the inner controller's again
        if add and self._gated_in(signals):  # add: a step is left (the first sets ``climbs``)
            self.left, self.ref_bps, self.wait = self.left - 1, bps, rc.settle
            more = self.config.clip(n + rc.step)
            if more > proposed:
                self.rebounds += 1
                proposed = more
        elif add:
            self.left = 0
        self.current = proposed
        return proposed


class ReboundWrapper(RuleWrapper):
    """``rebound[:hi=H,mis=M,lo=L,gap=G,rise=R,step=S,climbs=C,gain=A,settle=W,min_rtt_ms=T,
    max_n=X][:INNER]``: follow INNER (default ``ppo``), except that the end of a flood of loss others
    made adds ``S`` streams, up to ``C`` times while the added streams pay."""

    name = "rebound"

    def __init__(self, args: str, config: ControllerConfig) -> None:
        cfg, args = self._options(args, ReboundConfig.parse, ReboundConfig())
        self.inner = self._wrap_once(args, config, "hold", "rebounds")
        self.rule: Rebound = Rebound(cfg, config, self.inner.initial())
        self.target = self.rule.current
