"""The signal vector: one typed structure, defined once.

The engine's monitor produces it every monitoring interval (MI) from the kernel's
``TCP_INFO``; the simulator in ``train/`` produces the same; every controller consumes it.
A field the kernel could not provide is ``None`` ("unknown"), never a guess.
"""

from __future__ import annotations

from collections import deque
from dataclasses import asdict, dataclass, field
from statistics import median
from typing import Any


@dataclass(frozen=True, slots=True)
class PathSignal:
    """Aggregate of the subflows that use one network path (MPTCP), for one MI."""

    path_id: str
    """Path name: the local/remote address pair of the subflows, e.g. ``10.1.0.1->10.2.0.2``."""
    subflows: int
    """Subflows on this path at the end of the MI."""
    throughput_bps: float
    """Bits per second acknowledged on this path during the MI."""
    loss_rate: float | None
    """Retransmitted segments / data segments sent on this path during the MI."""
    rtt_ms: float | None
    """Mean smoothed RTT of the path's subflows, milliseconds."""


@dataclass(frozen=True, slots=True)
class SignalVector:
    """What one MI measured over all data streams of a transfer (the paper's x_t)."""

    t: float
    """Seconds since the transfer started, at the end of this MI."""
    mi_s: float
    """Actual duration of this MI in seconds."""
    streams: int
    """Data streams open at the end of the MI (what the controller's last decision produced)."""
    throughput_bps: float
    """Bits per second acknowledged by the peer's TCP (delta of ``tcpi_bytes_acked``) over the MI."""
    goodput_bps: float
    """Bits per second of file data confirmed written and verified by the receiver over the MI."""
    loss_rate: float | None
    """Delta retransmitted segments / delta data segments out over the MI (0..1), or unknown."""
    rtt_ms: float | None
    """Mean smoothed RTT over streams and samples in the MI, milliseconds."""
    min_rtt_ms: float | None
    """Minimum RTT seen on any stream since the transfer started, milliseconds."""
    rtt_gradient: float | None
    """Aurora's latency inflation: (mean RTT of the MI's 2nd half - 1st half) / MI duration (s/s)."""
    rtt_ratio: float | None
    """Mean RTT in this MI over the minimum RTT seen (>= 1)."""
    cpu_percent: float | None = None
    """CPU use of this process over the MI, percent of one core (psutil)."""
    bytes_acked: int = 0
    """Bytes acknowledged during this MI (sum over streams)."""
    retrans_segs: int = 0
    """Retransmitted segments during this MI."""
    data_segs_out: int = 0
    """Data segments sent during this MI."""
    paths: tuple[PathSignal, ...] = field(default=())
    """Per-path aggregates (MPTCP); empty for plain TCP."""
    cc: str | None = None
    """Kernel congestion control our streams ran in this MI (the sender's choice for its
    streams, e.g. ``cubic``, ``bbr``; with ``--cc auto`` the current choice), or unknown."""

    def rtt_within(self, top_ms: float) -> bool:
        """Whether the path's minimum RTT is at most ``top_ms``: the RTT gate of the rules
        around a policy (``judge``, ``ledger``, ``shed``); ``top_ms <= 0`` gates nothing out,
        and an unknown RTT is gated in."""
        rtt = self.min_rtt_ms
        return top_ms <= 0 or rtt is None or rtt <= top_ms

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the ``--json-stream`` record minus its ``event`` key)."""
        d = asdict(self)
        d["paths"] = [asdict(p) for p in self.paths]
        return d


class RecentLoss:
    """The loss rates of the last ``window`` MIs whose loss is known (an unknown one is not
    counted), and their median: the band's ``min_loss`` and the ledger's ``probe_max_loss``."""

    def __init__(self, window: int) -> None:
        self.rates: deque[float] = deque(maxlen=window)

    def push(self, loss_rate: float | None) -> None:
        if loss_rate is not None:
            self.rates.append(loss_rate)

    def median(self, full: bool = True) -> float | None:
        """The median, or None while there is none (``full``: until the window is full)."""
        short = len(self.rates) < (self.rates.maxlen or 0) if full else not self.rates
        return None if short else median(self.rates)
