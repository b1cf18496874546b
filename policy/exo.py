"""``exo[:KEY=VALUE,...][:INNER]``: hide from a policy the loss its own stream count does not
explain.

Issue #16 round 37 (``docs/results/issue16-round37/``): on short paths beside a BBR rival
our loss sits at a floor of 1.8-3.3 % whatever our count below the best one (gen-v7-v01:
1.8 % at 1 stream, 2.6 % at 8), and rises only past it (4.1 % at 12). Every policy we have
reads the floor as its own loss and sits at 3-8 streams where 8-16 are best. The floor is
readable from the transfer's own history: a policy that moves its count +1/-1 (as the
shipped one does) samples loss at several counts, and loss that others cause, or random
loss, does not fall when the count does.

The wrapper follows its inner controller (default ``ppo``) MI for MI and changes only the
loss it shows it:

1. **Window**: the last ``window`` MIs (16) with a known loss rate, as (stream count, loss
   rate) pairs.
2. **Floor**: once the window holds ``min_points`` MIs (8) at counts spread at least
   ``spread`` apart (the largest count over the smallest, 1.5) and ``min_gap`` streams (2),
   a least-squares line ``loss = a + b * n`` is fitted to it. The floor is its loss at zero
   streams, ``a``, and no more than its loss at the smallest count of the window (a loss that
   falls as the count rises is not ours at all, but the floor is not raised past what was
   seen), and never below 0. Loss of our own that grows with the count as fast as or faster
   than in proportion (a shallow queue our streams fill) fits an ``a`` of 0 or below and
   leaves the loss as it was. Without such spread, the last floor fitted stands.
3. **Shown loss**: ``max(loss - share * floor, 0)`` (``share`` 1.0), with the retransmitted
   segments scaled to match; every other signal (throughput, RTTs, the stream count) is
   passed on as measured.
4. **Queueing** (``rtt``, off by default; round 38): the same fit over the RTT ratio minus 1
   (the queueing delay over the minimum RTT), and the ratio shown is ``1 + max(ratio - 1 -
   share * floor, 0)`` (the mean RTT to match). A BBR rival's standing queue turns the shipped
   policy back as often as its loss does (``docs/results/issue16-round38/``). The RTT
   gradient is passed on: it measures change within an MI, which a standing queue has none
   of.

Measured in round 38 (``docs/results/issue16-round38/``, testbed, beside the shipped policy):
gen-v7 (3 runs) +0.009 +- 0.015 around ``ppo``, -0.017 +- 0.012 with ``rtt=1``; gen-v2
validation -0.005 +- 0.014; fig3 fails (JFI 0.970 in one run of three: a transfer that takes
the other transfers' loss off climbs first, and that loss is how transfers share). Loss an
on/off rival causes comes and goes in time and is not separable by count over 16 MIs. Not
the default.

It does not decide anything itself, so it needs nothing of the inner controller but
``decide`` (``exo:gd`` works). Options: ``exo:window=24,share=0.5:ppo``
(:class:`ExoConfig`). Choosing its constants is validation's job (``docs/evaluation.md``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, replace
from statistics import fmean

from policy.base import ControllerConfig, Wrapper
from policy.gd import parse_config
from policy.signals import SignalVector


@dataclass(frozen=True, slots=True)
class ExoConfig:
    """Constants of the exogenous-loss filter (see the module docstring)."""

    window: int = 16
    """MIs with a known loss rate the floor is fitted over."""
    min_points: int = 8
    """MIs the window must hold before a floor is fitted."""
    spread: float = 1.5
    """The window's largest count over its smallest must reach this for a fit."""
    min_gap: int = 2
    """... and the two must be at least this many streams apart."""
    share: float = 1.0
    """Share of the fitted floor taken off the loss the inner controller is shown."""
    rtt: bool = False
    """Also take off the queueing the count does not explain: the same fit over the RTT
    ratio minus 1 (round 38: a BBR rival's standing queue turns the shipped policy back as
    often as its loss does)."""

    @classmethod
    def parse(cls, text: str) -> ExoConfig:
        """``KEY=VALUE[,KEY=VALUE...]`` over the defaults, e.g. ``window=24,share=0.5``."""
        c = parse_config(cls, text, "exo")
        if c.window < 2 or not 2 <= c.min_points <= c.window:
            raise ValueError(f"exo: need window >= min_points >= 2, got {c}")
        if c.spread < 1.0 or c.min_gap < 1 or not 0.0 <= c.share <= 1.0:
            raise ValueError(f"exo: need spread >= 1, min_gap >= 1, 0 <= share <= 1, got {c}")
        return c


def fit_floor(points: Sequence[tuple[int, float]], ec: ExoConfig) -> float | None:
    """The loss floor of ``points`` ((count, loss) pairs), or ``None`` if they cannot tell
    (too few, or counts too close together): rule 2 of the module docstring."""
    if len(points) < ec.min_points:
        return None
    ns = [float(n) for n, _ in points]
    lo, hi = min(ns), max(ns)
    if lo <= 0 or hi / lo < ec.spread or hi - lo < ec.min_gap:
        return None
    n_mean = fmean(ns)
    l_mean = fmean(loss for _, loss in points)
    var = sum((n - n_mean) ** 2 for n in ns)
    b = sum((n - n_mean) * (loss - l_mean) for n, (_, loss) in zip(ns, points, strict=True)) / var
    a = l_mean - b * n_mean
    return max(min(a, a + b * lo), 0.0)


class FloorFit:
    """One signal's window of (count, value) pairs and the floor fitted last (rule 2)."""

    def __init__(self, ec: ExoConfig) -> None:
        self.ec = ec
        self.points: deque[tuple[int, float]] = deque(maxlen=ec.window)
        self.floor = 0.0
        """The floor in effect (the last one fitted; 0 before any fit)."""
        self.fits = 0
        """MIs in which a floor was fitted."""

    def cut(self, n: int, value: float) -> float:
        """Add this MI's pair, refit, and return how much to take off its value."""
        self.points.append((n, value))
        floor = fit_floor(self.points, self.ec)
        if floor is not None:
            self.floor, self.fits = floor, self.fits + 1
        return self.ec.share * self.floor


class Exo(Wrapper):
    """``exo[:OPTIONS][:INNER]``: INNER (default ``ppo``) shown the loss above the floor."""

    name = "exo"

    def __init__(self, args: str, config: ControllerConfig, ec: ExoConfig | None = None) -> None:
        self.ec, args = self._options(args, ExoConfig.parse, ec or ExoConfig())
        self.inner = self._wrap(args, config, None)
        self.loss = FloorFit(self.ec)
        self.queue = FloorFit(self.ec)
        """The same for the RTT ratio minus 1 (``rtt``)."""

    @property
    def floor(self) -> float:
        """The loss floor in effect (for tests and logs)."""
        return self.loss.floor

    @property
    def fits(self) -> int:
        """MIs in which a loss floor was fitted (for tests and logs)."""
        return self.loss.fits

    def initial(self) -> int:
        return self.inner.initial()

    def decide(self, signals: SignalVector) -> int:
        return self.inner.decide(self.shown(signals))

    def shown(self, signals: SignalVector) -> SignalVector:
        """The signal vector the inner controller sees for this MI (the windows move on)."""
        loss, ratio = signals.loss_rate, signals.rtt_ratio
        if loss is not None:
            cut = self.loss.cut(signals.streams, loss)
            if cut > 0.0 and loss > 0.0:
                kept = max(loss - cut, 0.0)
                signals = replace(
                    signals, loss_rate=kept, retrans_segs=round(signals.retrans_segs * kept / loss)
                )
        if self.ec.rtt and ratio is not None:
            cut = self.queue.cut(signals.streams, ratio - 1.0)
            if cut > 0.0 and ratio > 1.0:
                kept = 1.0 + max(ratio - 1.0 - cut, 0.0)
                base = signals.min_rtt_ms
                signals = replace(
                    signals, rtt_ratio=kept, rtt_ms=base * kept if base else signals.rtt_ms
                )
        return signals
