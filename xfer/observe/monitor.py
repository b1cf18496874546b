"""The monitor: once per MI, turn every data socket's ``TCP_INFO`` counters into the paper's
signal vector. Streams never compute anything; they only exist. Sub-samples of the RTT within
an MI give Aurora's RTT gradient (mean RTT of the MI's 2nd half minus its 1st half, over the
MI's duration). Fields the kernel does not give are ``None``.
"""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass, field

import psutil

from policy.signals import PathSignal, SignalVector
from xfer.observe.tcpinfo import TcpInfo, stream_info
from xfer.transport import PathAggregator


@dataclass
class _Counters:
    acked: int = 0
    retrans: int = 0
    segs: int = 0


def _counters(info: TcpInfo | None) -> _Counters:
    if info is None:
        return _Counters()
    return _Counters(info.bytes_acked or 0, info.total_retrans or 0, info.data_segs_out or 0)


@dataclass
class Monitor:
    """Samples the data sockets a :class:`StreamPool` registers."""

    started: float
    mptcp: bool = False
    """Data sockets may be MPTCP: sum their subflows and report per-path aggregates."""
    socks: dict[int, socket.socket] = field(default_factory=dict)
    _prev: dict[int, _Counters] = field(default_factory=dict)
    _ended: dict[int, _Counters] = field(default_factory=dict)
    _rtt: list[tuple[float, float]] = field(default_factory=list)
    _min_rtt_us: int | None = None
    _last_t: float = 0.0
    _app_bytes_prev: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _proc: psutil.Process = field(default_factory=psutil.Process)
    _paths: PathAggregator = field(default_factory=PathAggregator)
    _progress: dict[int, tuple[int, float]] = field(default_factory=dict)
    _stalled: set[int] = field(default_factory=set)
    stall_floor: float = 0.3
    """A stream is stalled after max(this, srtt + 4 rttvar) without ACK progress."""

    def __post_init__(self) -> None:
        self._last_t = self.started
        self._proc.cpu_percent(None)

    def add(self, sid: int, sock: socket.socket) -> None:
        with self._lock:
            self.socks[sid] = sock
            self._prev[sid] = _Counters()

    def remove(self, sid: int, final: TcpInfo | None) -> None:
        """A stream ended; keep its last counters so this MI still counts its bytes."""
        with self._lock:
            self.socks.pop(sid, None)
            self._progress.pop(sid, None)
            if sid in self._prev:
                self._ended[sid] = _counters(final)

    def sample_rtt(self, now: float) -> None:
        """A sub-sample (several per MI): mean RTT over streams, and per-stream ACK progress
        for stall detection."""
        rtts = []
        stalled = set()
        with self._lock:
            socks = list(self.socks.items())
        for sid, s in socks:
            info = self.info(s)
            if not info.rtt_us:
                continue
            rtts.append(info.rtt_us)
            if info.min_rtt_us and (self._min_rtt_us is None or info.min_rtt_us < self._min_rtt_us):
                self._min_rtt_us = info.min_rtt_us
            acked, sent = info.bytes_acked or 0, info.bytes_sent or 0
            last = self._progress.get(sid)
            if last is None or acked != last[0] or sent <= acked:
                self._progress[sid] = (acked, now)
            elif now - last[1] > max(
                self.stall_floor, (info.rtt_us + 4 * (info.rttvar_us or 0)) / 1e6
            ):
                stalled.add(sid)
        self._stalled = stalled
        if rtts:
            self._rtt.append((now, sum(rtts) / len(rtts)))

    @property
    def min_rtt_ms(self) -> float | None:
        """The smallest RTT any data stream has seen so far, ms (None before the first)."""
        return self._min_rtt_us / 1000 if self._min_rtt_us else None

    def srtt_s(self) -> float:
        """The latest mean RTT over the streams, seconds (0 before the first sample)."""
        return self._rtt[-1][1] / 1e6 if self._rtt else 0.0

    def stalled(self) -> set[int]:
        """Streams with unacknowledged data and no ACK progress for longer than their
        RTO-like timeout at the last sub-sample (a failing path)."""
        return set(self._stalled)

    @staticmethod
    def info(sock: socket.socket) -> TcpInfo:
        """One stream's counters: TCP_INFO, or for MPTCP the subflows' sum with data-level
        bytes acked/sent (unknown fields are None)."""
        return stream_info(sock)

    def interval(
        self, now: float, streams: int, app_bytes: int, cc: str | None = None
    ) -> SignalVector:
        """Close the MI that ends at ``now`` and return its signal vector (``cc``: the
        congestion control the streams ran, passed through)."""
        self.sample_rtt(now)
        d = _Counters()
        paths: tuple[PathSignal, ...] = ()
        with self._lock:
            if self.mptcp:
                paths = self._paths.sample(now, dict(self.socks))
            current = {sid: _counters(self.info(s)) for sid, s in self.socks.items()}
            ended, self._ended = self._ended, {}
            for sid, c in [*current.items(), *ended.items()]:
                p = self._prev.get(sid, _Counters())
                d.acked += max(0, c.acked - p.acked)
                d.retrans += max(0, c.retrans - p.retrans)
                d.segs += max(0, c.segs - p.segs)
            self._prev = {sid: current[sid] for sid in current}
        dt = max(now - self._last_t, 1e-6)
        t0, self._last_t = self._last_t, now
        samples, self._rtt = [x for x in self._rtt if x[0] >= t0], []
        goodput = (app_bytes - self._app_bytes_prev) * 8 / dt
        self._app_bytes_prev = app_bytes
        rtt_ms, grad = _rtt_stats(samples, t0, now)
        min_ms = self.min_rtt_ms
        return SignalVector(
            t=now - self.started,
            mi_s=dt,
            streams=streams,
            throughput_bps=d.acked * 8 / dt,
            goodput_bps=goodput,
            loss_rate=(d.retrans / d.segs) if d.segs else (0.0 if current else None),
            rtt_ms=rtt_ms,
            min_rtt_ms=min_ms,
            rtt_gradient=grad,
            rtt_ratio=(rtt_ms / min_ms) if rtt_ms and min_ms else None,
            cpu_percent=self._proc.cpu_percent(None),
            bytes_acked=d.acked,
            retrans_segs=d.retrans,
            data_segs_out=d.segs,
            paths=paths,
            cc=cc,
        )


def _rtt_stats(
    samples: list[tuple[float, float]], t0: float, t1: float
) -> tuple[float | None, float | None]:
    """Mean RTT (ms) over the MI and the RTT gradient (s of RTT per s of time)."""
    if not samples:
        return None, None
    mean_us = sum(r for _, r in samples) / len(samples)
    mid = (t0 + t1) / 2
    first = [r for t, r in samples if t < mid]
    second = [r for t, r in samples if t >= mid]
    grad = None
    if first and second:
        grad = (sum(second) / len(second) - sum(first) / len(first)) / 1e6 / max(t1 - t0, 1e-6)
    return mean_us / 1000, grad
