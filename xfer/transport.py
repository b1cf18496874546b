"""Transports for data streams, registered by name: ``tcp`` and ``mptcp``.

A transport makes connected client sockets and listening sockets with xfer's socket options
applied, and tells what a connected socket really is (``describe``). The ``mptcp`` transport
falls back to TCP, with one clear warning per transport object, when this kernel cannot make
MPTCP sockets (ENOPROTOOPT: ``net.mptcp.enabled=0``; EPROTONOSUPPORT: no MPTCP built in) or
when the peer answers without MPTCP (the connection falls back inside the kernel).

``PathAggregator`` turns the subflows of all data sockets, sampled once per monitoring
interval, into per-path ``PathSignal``s for the signal vector.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import socket
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from policy.signals import PathSignal
from xfer.observe.tcpinfo import IPPROTO_MPTCP, SubflowInfo, mptcp_info, mptcp_subflows

log = logging.getLogger("xfer.transport")

SO_MAX_PACING_RATE = getattr(socket, "SO_MAX_PACING_RATE", 47)
_NO_MPTCP = {
    errno.ENOPROTOOPT: "MPTCP is disabled on this host (sysctl net.mptcp.enabled=0)",
    errno.EPROTONOSUPPORT: "this kernel has no MPTCP support",
    errno.EINVAL: "this kernel does not know IPPROTO_MPTCP",
}


class TransportError(OSError):
    """A transport could not be created or configured (our side, not the peer)."""


@dataclass(frozen=True, slots=True)
class SocketOptions:
    """Options applied to every data socket (client sockets and accepted sockets)."""

    nodelay: bool = False
    """TCP_NODELAY; off for bulk data so the kernel coalesces small writes."""
    congestion: str | None = None
    """TCP_CONGESTION name (``cubic``, ``bbr``, ``reno``); ``None`` keeps the system default."""
    max_pacing_rate: int | None = None
    """SO_MAX_PACING_RATE in bytes/s (per-stream cap); ``None`` for no cap."""
    sndbuf: int | None = None
    """SO_SNDBUF in bytes; ``None`` leaves the kernel's autotuning on (recommended)."""
    rcvbuf: int | None = None
    """SO_RCVBUF in bytes; ``None`` leaves the kernel's autotuning on (recommended)."""


@dataclass(frozen=True, slots=True)
class SocketDescription:
    """What a connected data socket really is."""

    kind: Literal["tcp", "mptcp"]
    """``mptcp`` only if the kernel runs MPTCP on this connection (not fallen back)."""
    requested: Literal["tcp", "mptcp"]
    """What the socket was created as (``IPPROTO_MPTCP`` or plain TCP)."""
    subflows: int
    """Subflows open now (1 for TCP)."""
    reason: str = ""
    """Why ``kind`` differs from ``requested``, empty if it does not."""

    @property
    def fell_back(self) -> bool:
        """True when MPTCP was asked for but the connection is plain TCP."""
        return self.requested == "mptcp" and self.kind == "tcp"


def apply_options(sock: socket.socket, opts: SocketOptions) -> list[str]:
    """Apply ``opts`` to ``sock``; returns one message per option the kernel refused.

    An unknown congestion control name is our caller's mistake and raises
    ``TransportError``; other refusals (e.g. SO_MAX_PACING_RATE on an MPTCP socket) are
    returned so the caller can warn once.
    """
    problems: list[str] = []
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, int(opts.nodelay))
    if opts.congestion:
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, opts.congestion.encode())
        except OSError as exc:
            avail = _available_cc()
            raise TransportError(
                exc.errno,
                f"congestion control {opts.congestion!r} is not available "
                f"(kernel offers: {avail or 'unknown'}; try `modprobe tcp_{opts.congestion}`)",
            ) from exc
    for name, level, opt, value in (
        ("SO_MAX_PACING_RATE", socket.SOL_SOCKET, SO_MAX_PACING_RATE, opts.max_pacing_rate),
        ("SO_SNDBUF", socket.SOL_SOCKET, socket.SO_SNDBUF, opts.sndbuf),
        ("SO_RCVBUF", socket.SOL_SOCKET, socket.SO_RCVBUF, opts.rcvbuf),
    ):
        if value is None:
            continue
        try:
            sock.setsockopt(level, opt, int(value))
        except OSError as exc:
            hint = (
                " (not supported on MPTCP sockets: the cap is not applied)"
                if (sock.proto == IPPROTO_MPTCP)
                else ""
            )
            problems.append(f"{name}={value} refused by the kernel: {exc.strerror}{hint}")
    return problems


def _ipv4_sysctl(name: str) -> str:
    """``/proc/sys/net/ipv4/NAME`` of this network namespace, stripped ("" if unreadable)."""
    try:
        with open(f"/proc/sys/net/ipv4/{name}") as f:
            return f.read().strip()
    except OSError:
        return ""


def _available_cc() -> str:
    return _ipv4_sysctl("tcp_available_congestion_control")


def default_cc() -> str | None:
    """The congestion control new TCP sockets get when xfer sets none (this network
    namespace's ``net.ipv4.tcp_congestion_control``), or ``None`` if it cannot be read."""
    return _ipv4_sysctl("tcp_congestion_control") or None


def _resolve(host: str, port: int, passive: bool = False) -> tuple[int, tuple[str, int]]:
    flags = socket.AI_PASSIVE if passive else 0
    infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=flags)
    if not infos:
        raise TransportError(errno.EADDRNOTAVAIL, f"cannot resolve {host!r}")
    family, _, _, _, addr = infos[0]
    return family, (str(addr[0]), int(addr[1]))


class Transport:
    """Base transport: plain TCP. Subclasses change ``proto`` and the fallback handling."""

    name: ClassVar[str] = "tcp"
    proto: ClassVar[int] = socket.IPPROTO_TCP

    def __init__(self, options: SocketOptions | None = None, *, quiet: bool = False) -> None:
        self.options = options or SocketOptions()
        self.quiet = quiet
        """Report fallbacks at INFO instead of WARNING (the receiver did not ask for MPTCP)."""
        self.fallback_reason: str | None = None
        """Set once the transport had to fall back to TCP (kernel or peer)."""
        self.kernel_has_mptcp = True
        """False once this host's kernel refused to make an MPTCP socket."""
        self._warned: set[str] = set()
        self._lock = threading.Lock()  # streams are opened from several threads

    def warn_once(self, message: str) -> None:
        """Log ``message`` (as a warning unless ``quiet``) the first time this transport sees it."""
        with self._lock:
            if message in self._warned:
                return
            self._warned.add(message)
        log.log(logging.INFO if self.quiet else logging.WARNING, "xfer: %s", message)

    def new_socket(self, family: int) -> socket.socket:
        """An unconnected socket of this transport with the options applied."""
        sock = self._raw_socket(family)
        try:
            for problem in apply_options(sock, self.options):
                self.warn_once(f"{self.name}: {problem}")
        except BaseException:
            sock.close()
            raise
        return sock

    def _raw_socket(self, family: int) -> socket.socket:
        return socket.socket(family, socket.SOCK_STREAM, self.proto)

    def connect(self, host: str, port: int, timeout: float | None = 30.0) -> socket.socket:
        """A blocking, connected client socket to ``host:port``."""
        family, addr = _resolve(host, port)
        sock = self.new_socket(family)
        try:
            sock.settimeout(timeout)
            sock.connect(addr)
            sock.settimeout(None)
        except BaseException:
            sock.close()
            raise
        self.check_connected(sock, f"{host}:{port}")
        return sock

    async def connect_async(self, host: str, port: int) -> socket.socket:
        """A non-blocking, connected client socket (for ``asyncio.open_connection(sock=)``)."""
        loop = asyncio.get_running_loop()
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        if not infos:
            raise TransportError(errno.EADDRNOTAVAIL, f"cannot resolve {host!r}")
        family, _, _, _, addr = infos[0]
        sock = self.new_socket(family)
        try:
            sock.setblocking(False)
            await loop.sock_connect(sock, addr)
        except BaseException:
            sock.close()
            raise
        self.check_connected(sock, f"{host}:{port}")
        return sock

    def listen(self, host: str, port: int, backlog: int = 128) -> socket.socket:
        """A listening socket bound to ``host:port`` (SO_REUSEADDR set)."""
        family, addr = _resolve(host, port, passive=True)
        sock = self.new_socket(family)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(addr)
            sock.listen(backlog)
        except BaseException:
            sock.close()
            raise
        return sock

    def check_connected(self, sock: socket.socket, peer: str) -> SocketDescription:
        """Describe a freshly connected socket; warn once if MPTCP fell back to TCP."""
        desc = self.describe(sock)
        if desc.fell_back:
            self.fallback_reason = desc.reason
            self.warn_once(f"mptcp: connection to {peer} fell back to TCP: {desc.reason}")
        return desc

    def describe(self, sock: socket.socket) -> SocketDescription:
        """What ``sock`` really is (see ``describe``)."""
        return describe(sock)


class MptcpTransport(Transport):
    """Data streams as ``IPPROTO_MPTCP`` sockets, falling back to TCP when impossible."""

    name: ClassVar[str] = "mptcp"
    proto: ClassVar[int] = IPPROTO_MPTCP

    def _raw_socket(self, family: int) -> socket.socket:
        if self.kernel_has_mptcp:
            try:
                return socket.socket(family, socket.SOCK_STREAM, IPPROTO_MPTCP)
            except OSError as exc:
                if exc.errno not in _NO_MPTCP:
                    raise
                self.kernel_has_mptcp = False
                self.fallback_reason = _NO_MPTCP[exc.errno]
                self.warn_once(f"mptcp: {self.fallback_reason}; using plain TCP instead")
        return socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)


TRANSPORTS: dict[str, type[Transport]] = {"tcp": Transport, "mptcp": MptcpTransport}
"""The registry: ``--transport NAME`` picks one of these."""


def make_transport(name: str, options: SocketOptions | None = None) -> Transport:
    """The transport registered as ``name``."""
    try:
        cls = TRANSPORTS[name]
    except KeyError:
        raise ValueError(
            f"unknown transport {name!r}; choose one of: {', '.join(TRANSPORTS)}"
        ) from None
    return cls(options)


def listen_any(host: str, port: int, backlog: int = 128, *, mptcp: bool = True) -> socket.socket:
    """The receiver's listener: MPTCP when possible (it accepts plain TCP too), else TCP.

    Falling back here is silent (logged at INFO): the receiver did not ask for MPTCP.
    """
    transport: Transport = MptcpTransport(quiet=True) if mptcp else Transport(quiet=True)
    return transport.listen(host, port, backlog)


def describe(sock: socket.socket) -> SocketDescription:
    """Tell whether a connected socket really runs MPTCP.

    ``MPTCP_INFO`` fails (EOPNOTSUPP) on plain TCP sockets and on MPTCP sockets whose
    connection fell back to TCP; older kernels may instead set the fallback flag.
    """
    requested: Literal["tcp", "mptcp"] = "mptcp" if sock.proto == IPPROTO_MPTCP else "tcp"
    info = mptcp_info(sock)
    if info is None or info.fallback:
        reason = "peer (or a middlebox) does not do MPTCP" if requested == "mptcp" else ""
        return SocketDescription("tcp", requested, 1, reason)
    if info.subflows_total is not None:
        subflows = info.subflows_total
    else:
        subflows = len(mptcp_subflows(sock)) or (info.subflows or 0) + 1
    return SocketDescription("mptcp", requested, subflows)


# --- per-path aggregation -------------------------------------------------------------------

SubflowKey = tuple[object, object]
"""(connection key chosen by the caller, subflow id or local/remote pair)."""


def subflow_sample(
    connections: Mapping[Any, Sequence[SubflowInfo]],
) -> dict[SubflowKey, SubflowInfo]:
    """Flatten ``{connection key: subflows}`` into ``{(connection, subflow): info}``."""
    out: dict[SubflowKey, SubflowInfo] = {}
    for conn, subflows in connections.items():
        for sf in subflows:
            ident = sf.id if sf.id is not None else (sf.local, sf.remote)
            out[(conn, ident)] = sf
    return out


def aggregate_paths(
    prev: Mapping[SubflowKey, SubflowInfo],
    cur: Mapping[SubflowKey, SubflowInfo],
    interval_s: float,
) -> tuple[PathSignal, ...]:
    """Per-path signals between two samples taken ``interval_s`` seconds apart.

    A subflow absent from ``prev`` counts from zero (it opened during the interval); one
    absent from ``cur`` is gone and its last bytes are lost to the count. Paths are sorted
    by ``path_id``.
    """
    acc: dict[str, list[float]] = {}  # path -> [subflows, acked, retrans, segs, rtt_sum, rtt_n]
    for key, sf in cur.items():
        a = acc.setdefault(sf.path_id, [0, 0, 0, 0, 0, 0])
        a[0] += 1
        old = prev.get(key)
        t, o = sf.tcp, (old.tcp if old is not None else None)
        a[1] += _delta(t.bytes_acked, o.bytes_acked if o else 0)
        a[2] += _delta(t.total_retrans, o.total_retrans if o else 0)
        a[3] += _delta(t.data_segs_out, o.data_segs_out if o else 0)
        if t.rtt_us is not None:
            a[4] += t.rtt_us
            a[5] += 1
    dt = max(interval_s, 1e-9)
    return tuple(
        PathSignal(
            path_id=path,
            subflows=int(a[0]),
            throughput_bps=a[1] * 8 / dt,
            loss_rate=(a[2] / a[3]) if a[3] > 0 else None,
            rtt_ms=(a[4] / a[5] / 1000) if a[5] else None,
        )
        for path, a in sorted(acc.items())
    )


def _delta(now: int | None, before: int | None) -> int:
    """Counter increase; 0 when unknown or when the counter went backwards."""
    if now is None or before is None or now < before:
        return 0
    return now - before


class PathAggregator:
    """Remembers the previous sample and yields per-path signals for each new one."""

    def __init__(self) -> None:
        self._prev: dict[SubflowKey, SubflowInfo] = {}
        self._t: float | None = None

    def update(
        self, now: float, connections: Mapping[Any, Sequence[SubflowInfo]]
    ) -> tuple[PathSignal, ...]:
        """Per-path signals since the last call (since the first sample if this is it).

        ``now`` is a monotonic time in seconds; ``connections`` maps a stable key per data
        socket (e.g. the stream id) to ``mptcp_subflows(sock)``. The first call only sets
        the baseline and returns ``()``.
        """
        cur = subflow_sample(connections)
        if self._t is None:
            result: tuple[PathSignal, ...] = ()
        else:
            result = aggregate_paths(self._prev, cur, now - self._t)
        self._prev, self._t = cur, now
        return result

    def sample(self, now: float, socks: Mapping[Any, socket.socket]) -> tuple[PathSignal, ...]:
        """``update`` with the subflows read from each socket (plain TCP sockets add none)."""
        return self.update(now, {key: mptcp_subflows(s) for key, s in socks.items()})


def paths_of(signals: Iterable[PathSignal]) -> dict[str, PathSignal]:
    """Index path signals by ``path_id``."""
    return {p.path_id: p for p in signals}
