"""A bundle's ``meta["band"]``: which of its members decide on paths of which minimum RTT.

Round 47 (issue #16, ``docs/results/issue16-round47/``). The one policy on record that climbs
beside BBR flows on the testbed is round 22's kickstarted hold member (``hold-kick22-s3``):
alone it held 11-17 streams on ``hand-bbr-shared-1g`` (30 ms) where the shipped pair holds
1-4, and it shares evenly with copies of itself in fig3 (round 23). In the mean vote with
``onoff-s4`` its climb is cancelled; alone it see-saws +5/-5 on LANs of 0.7-1.7 ms where one
stream is best (round 23: gen-v2-v10 -0.54). Nothing the networks observe separates those two
kinds of network at the moment they decide, but the path's minimum RTT separates where it was
measured to pay and to cost, and on paths of at most 20 ms the shipped ledger acts already.

So a bundle may name a band of minimum RTTs and the members that decide inside it: on a path
whose minimum RTT is above ``min_rtt_ms`` and at most ``max_rtt_ms``, the ensemble's combine
rule runs over the ``inside`` members' probabilities only; elsewhere (an unknown RTT too) over
the other members'. Every member's feature history is pushed every MI either way, so a member
that starts deciding mid-transfer (the minimum RTT fell below the band's edge) decides from a
whole history. The rules after the networks (judge, warm-up, ledger) are unchanged.

``not_cc`` (round 47c): K3 never trained on the loss our own BBR streams make (round 18: 6-13 %
at 2-16 streams below 1 BDP of queue), and on the one validation path of the band where our
streams run BBR (gen-v3-v03) it read 0.33 against the pair's 0.63; ``not_cc=bbr`` keeps the
pair deciding there.

``min_loss`` (round 48): inside the band K3 also holds 10-17 streams where nobody else is (a
plain 1 Gbit/s, 50-ms WAN: 0.80 against the pair's 0.91, round 47d) and climbs past what a
per-stream cap needs. What separates those paths from the ones it wins on is the loss the
transfer sees while the pair holds a few streams: 0-0.1 % on a clean or capped WAN, 2-3 %
beside BBR rivals, 5-15 % beside on/off BBR (round 47's logs). With ``min_loss`` set, the band
applies only while the median loss rate of the last ``loss_window`` MIs is at least that; the
median, not the mean, so one MI of slow-start or probe loss does not open it, and only once the
window is full. The window runs on whoever decides, so beside BBR rivals the inside member keeps
deciding while the loss stays; when the rivals leave and the loss falls, the others decide again.

``fresh`` (round 48b): given the decision only after five MIs of the pair's, K3 did not do what
it does from a transfer's start (+5, +5, then 9-20 streams held beside BBR rivals): with the
pair's 1-2 streams in its history it walked down to 1-3 (the band open in 25 of 30 MIs; the two
30-ms BBR situations +0.086 against K3 alone's +0.261). With ``fresh=1`` the inside member's
feature history restarts the first time the band opens in a transfer, so it decides from there
as from a start, from the count it is given. Later openings continue its history.

``max_n`` (round 61): D's 2 % gate over 5 MIs misses established BBR flows (one stream beside
them reads about 1 %, round 60's H), and a 1 % gate over every MI opened on our own loss (round
60's J: a pair's 2-4 streams in slow start into a 0.15-BDP queue beside one reno flow read
1.2-2.3 % at 29 ms, gen-v2-v04 -0.156). The loss level cannot separate the two, but the count
it is read at can: one cubic stream past its slow start makes well under 1 % loss of its own on
any path of the band, while beside BBR rivals the pair sits at one stream reading 1-8 %. With
``max_n`` set, a second gate opens the band as well: the median of the last ``low_window`` MIs
in which our streams numbered at most ``max_n`` is at least ``low_loss``. A band opened by it
stays open while the median over every MI of ``loss_window`` holds ``low_loss`` (one opened
by ``min_loss``, while it holds ``min_loss``, as without ``max_n``); when the band closes the
low-count window starts empty again, so a reopening waits for fresh such MIs.
"""

from __future__ import annotations

from dataclasses import dataclass

from policy.gd import RuleConfig
from policy.signals import RecentLoss


@dataclass(frozen=True, slots=True)
class BandConfig(RuleConfig):
    """Which members decide where (see the module docstring)."""

    who = "band"

    min_rtt_ms: float = 20.0
    """The band's lower edge (exclusive)."""
    max_rtt_ms: float = 60.0
    """The band's upper edge (inclusive)."""
    inside: int = -1
    """The member (its index in the bundle; negative counts from the end) that decides inside
    the band; the others decide outside it."""
    not_cc: str = ""
    """If set: the band does not apply while our streams run this congestion control (the
    signal vector's ``cc``; an unknown cc is not it)."""

    min_loss: float = 0.0
    """If above 0: the band applies only while the median loss rate (0..1) of the last
    ``loss_window`` MIs is at least this."""
    loss_window: int = 5
    """MIs in ``min_loss``'s median (MIs whose loss is unknown are not counted)."""
    fresh: int = 0
    """1: the inside member's feature history restarts the first time the band opens."""
    max_n: int = 0
    """If above 0 (with ``min_loss``): the band also opens on the loss of MIs in which our
    streams numbered at most this (see the module docstring)."""
    low_loss: float = 0.01
    """``max_n``'s gate: the median loss rate (0..1) of the low-count MIs that opens the band."""
    low_window: int = 3
    """``max_n``'s gate: how many of the last low-count MIs its median is over."""

    def __post_init__(self) -> None:
        if not 0 <= self.min_rtt_ms < self.max_rtt_ms:
            raise ValueError(
                "band: needs 0 <= min_rtt_ms < max_rtt_ms, "
                f"got min_rtt_ms={self.min_rtt_ms}, max_rtt_ms={self.max_rtt_ms}"
            )
        if self.max_n < 0 or not 0 < self.low_loss < 1 or self.low_window < 1:
            raise ValueError(
                "band: needs max_n >= 0 (0: off), 0 < low_loss < 1 and low_window >= 1, "
                f"got max_n={self.max_n}, low_loss={self.low_loss}, low_window={self.low_window}"
            )
        if self.fresh not in (0, 1):
            raise ValueError(f"band: fresh is 0 or 1, got {self.fresh}")
        if not 0 <= self.min_loss < 1 or self.loss_window < 1:
            raise ValueError(
                "band: needs 0 <= min_loss < 1 and loss_window >= 1, "
                f"got min_loss={self.min_loss}, loss_window={self.loss_window}"
            )

    def split(self, n_members: int) -> tuple[list[int], list[int]]:
        """(the members that decide outside the band, the one inside it), as row indices of a
        bundle of ``n_members``; a bad index is an error (checked once, when a bundle is
        built or shipped)."""
        if n_members < 2 or not -n_members <= self.inside < n_members:
            raise ValueError(
                f"band: member {self.inside} of a bundle of {n_members}: needs two or more "
                "members and an index among them"
            )
        inside = self.inside % n_members
        return [i for i in range(n_members) if i != inside], [inside]

    def on_path(self, min_rtt_ms: float | None, cc: str | None = None) -> bool:
        """Whether a path of this minimum RTT, with our streams on ``cc``, is inside the band
        when its loss is (the loss gates are :func:`reaches`)."""
        within = min_rtt_ms is not None and self.min_rtt_ms < min_rtt_ms <= self.max_rtt_ms
        return within and not (self.not_cc and cc == self.not_cc)


def reaches(loss: float | None, level: float) -> bool:
    """Whether a median loss rate (None while unknown) reaches a gate's level; a level of 0 or
    less is no gate."""
    return level <= 0 or (loss is not None and loss >= level)


class Band:
    """One transfer's band: the member rows that decide this MI (the loss window is state)."""

    def __init__(self, config: BandConfig, n_members: int) -> None:
        self.config = config
        self.outside, self.inside = config.split(n_members)
        self.losses = RecentLoss(config.loss_window)
        self.low = RecentLoss(config.low_window)
        """``max_n``'s window: the loss of MIs at ``max_n`` streams or fewer, since it last closed."""
        self.hold = config.min_loss
        """The loss (every MI's median) an open band needs to stay open: the opening gate's."""
        self.opened = 0
        """How many times the band has opened in this transfer (closed -> inside)."""
        self.restart = False
        """Set by :meth:`rows` at the MI the band opens for the first time, with ``fresh``:
        the inside member's feature history restarts before this MI is pushed."""
        self.is_open = False
        """Whether the band is open this MI (its inside member decides), as :meth:`rows` left it."""
        self.opening = False
        """Whether the band opened at this MI (closed the MI before): a band-scoped judge
        (``JudgeConfig.band``) starts afresh here."""

    def loss(self) -> float | None:
        """The median loss rate of the last ``loss_window`` MIs, or None before it is full."""
        return self.losses.median()

    def rows(
        self,
        min_rtt_ms: float | None,
        cc: str | None,
        loss_rate: float | None,
        streams: int | None = None,
    ) -> list[int]:
        """This MI's deciding members, after counting its loss rate (read at ``streams``) into
        the window."""
        self.losses.push(loss_rate)
        c = self.config
        if c.max_n > 0 and streams is not None and streams <= c.max_n:
            self.low.push(loss_rate)
        loss = self.loss()
        on_path = c.on_path(min_rtt_ms, cc)
        if self.is_open:  # it stays open on the loss of the gate that opened it
            inside = on_path and reaches(loss, self.hold)
        else:
            self.hold = c.min_loss
            inside = on_path and reaches(loss, c.min_loss)
            low = self.low.median() if c.max_n > 0 and c.min_loss > 0 else None
            if on_path and not inside and low is not None and reaches(low, c.low_loss):
                inside, self.hold = True, c.low_loss
        if self.is_open and not inside:
            self.low = RecentLoss(c.low_window)
        self.opening = inside and not self.is_open
        self.opened += self.opening
        self.restart = bool(self.config.fresh) and self.opening and self.opened == 1
        self.is_open = inside
        return self.inside if inside else self.outside
