"""Kernel statistics of TCP and MPTCP sockets, read behind capability checks.

``tcp_info(sock)`` reads ``TCP_INFO`` with one ``getsockopt`` and one ``struct.unpack_from``.
``mptcp_info(sock)`` reads the MPTCP connection-level counters (``MPTCP_INFO``) and
``mptcp_subflows(sock)`` the ``tcp_info`` and addresses of every subflow (``MPTCP_FULL_INFO``,
or ``MPTCP_TCPINFO`` + ``MPTCP_SUBFLOW_ADDRS`` on kernels 5.16 to 6.4). The MPTCP options take
an input header that Python's ``socket.getsockopt`` cannot pass, so they go through libc's
``getsockopt`` via ctypes.

Every field the kernel did not provide (older kernel, short buffer, socket closed) is
``None``; nothing here raises on a kernel that lacks a feature.

Layouts: ``include/uapi/linux/tcp.h`` (struct tcp_info) and ``include/uapi/linux/mptcp.h``
(struct mptcp_info, mptcp_subflow_data, mptcp_subflow_addrs, mptcp_subflow_info,
mptcp_full_info), little-endian x86-64/arm64 as on Linux 6.x.
"""

from __future__ import annotations

import ctypes
import errno
import socket
import struct
from dataclasses import dataclass, fields, replace

IPPROTO_MPTCP = getattr(socket, "IPPROTO_MPTCP", 262)
SOL_MPTCP = 284
MPTCP_INFO = 1
MPTCP_TCPINFO = 2
MPTCP_SUBFLOW_ADDRS = 3
MPTCP_FULL_INFO = 4
MPTCP_INFO_FLAG_FALLBACK = 1

TCP_INFO_SIZE = 280
"""sizeof(struct tcp_info) on Linux 6.x (the kernel reports its own size; we ask for this)."""
SUBFLOW_INFO_SIZE = 264
"""sizeof(struct mptcp_subflow_info): u32 id, 4 bytes padding, two 128-byte sockaddr_storage."""
MPTCP_INFO_SIZE = 96
"""sizeof(struct mptcp_info) on Linux >= 6.10 (older kernels return less: fields become None)."""
_ADDRS_SIZE = 256
_FULL_INFO_HEADER = 40
_SUBFLOW_DATA_HEADER = 16
_MAX_SUBFLOWS = 16

# struct tcp_info: field -> (offset, struct code). Offsets checked live on 6.18 (TESTBED.md).
_TCP_FIELDS: dict[str, tuple[int, str]] = {
    "rto_us": (8, "I"),
    "unacked": (24, "I"),
    "lost": (32, "I"),
    "last_ack_recv_ms": (56, "I"),
    "rtt_us": (68, "I"),
    "rttvar_us": (72, "I"),
    "snd_cwnd": (80, "I"),
    "total_retrans": (100, "I"),
    "pacing_rate": (104, "Q"),
    "bytes_acked": (120, "Q"),
    "min_rtt_us": (148, "I"),
    "data_segs_out": (156, "I"),
    "delivery_rate": (160, "Q"),
    "delivered": (192, "I"),
    "bytes_sent": (200, "Q"),
    "bytes_retrans": (208, "Q"),
}


def _layout(table: dict[str, tuple[int, str]]) -> tuple[struct.Struct, tuple[str, ...], int]:
    """One Struct reading every field of ``table`` in offset order (gaps become pad bytes)."""
    fmt, pos, names = "<", 0, []
    for name, (off, code) in sorted(table.items(), key=lambda kv: kv[1][0]):
        fmt += f"{off - pos}x{code}" if off > pos else code
        pos = off + struct.calcsize("<" + code)
        names.append(name)
    return struct.Struct(fmt), tuple(names), pos


_TCP_STRUCT, _TCP_ORDER, _TCP_NEEDED = _layout(_TCP_FIELDS)


@dataclass(frozen=True, slots=True)
class TcpInfo:
    """The part of one socket's (or subflow's) ``struct tcp_info`` that xfer uses."""

    rtt_us: int | None = None
    """Smoothed RTT, microseconds."""
    rttvar_us: int | None = None
    """RTT variation, microseconds."""
    min_rtt_us: int | None = None
    """Minimum RTT seen by the connection (windowed), microseconds."""
    snd_cwnd: int | None = None
    """Congestion window, segments."""
    total_retrans: int | None = None
    """Retransmitted segments since the connection started (cumulative)."""
    pacing_rate: int | None = None
    """Current pacing rate, bytes per second."""
    bytes_acked: int | None = None
    """Bytes acknowledged by the peer (cumulative)."""
    bytes_sent: int | None = None
    """Bytes sent including retransmissions (cumulative)."""
    bytes_retrans: int | None = None
    """Bytes retransmitted (cumulative)."""
    data_segs_out: int | None = None
    """Data segments sent including retransmissions (cumulative)."""
    delivery_rate: int | None = None
    """Most recent delivery-rate sample, bytes per second."""
    delivered: int | None = None
    """Segments delivered (cumulative, incl. SACKed)."""
    lost: int | None = None
    """Segments currently presumed lost (a gauge, not cumulative)."""
    rto_us: int | None = None
    """Current retransmission timeout, microseconds (grows with backoff on a dead path)."""
    unacked: int | None = None
    """Segments in flight, not yet acknowledged (a gauge)."""
    last_ack_recv_ms: int | None = None
    """Milliseconds since the last ACK arrived: large with data in flight = a stalled path."""

    @property
    def known(self) -> bool:
        """True when the kernel gave at least the RTT and the byte counters."""
        return self.rtt_us is not None and self.bytes_acked is not None

    def stalled(self, after_ms: int) -> bool:
        """Data in flight and no ACK for ``after_ms`` milliseconds (a dead path); False if unknown."""
        if self.unacked is None or self.last_ack_recv_ms is None:
            return False
        return self.unacked > 0 and self.last_ack_recv_ms >= after_ms


UNKNOWN_TCP_INFO = TcpInfo()
"""The value returned when ``TCP_INFO`` could not be read at all."""


def parse_tcp_info(buf: bytes | bytearray | memoryview, offset: int = 0, size: int = -1) -> TcpInfo:
    """Parse a ``struct tcp_info`` of ``size`` bytes (default: the rest of ``buf``).

    A buffer shorter than the full layout gives ``None`` for the fields it does not cover.
    """
    avail = len(buf) - offset if size < 0 else min(size, len(buf) - offset)
    if avail >= _TCP_NEEDED:
        return TcpInfo(**dict(zip(_TCP_ORDER, _TCP_STRUCT.unpack_from(buf, offset), strict=True)))
    if avail <= 0:
        return UNKNOWN_TCP_INFO
    values: dict[str, int] = {}
    for name, (off, code) in _TCP_FIELDS.items():
        if off + struct.calcsize(code) <= avail:
            (values[name],) = struct.unpack_from("<" + code, buf, offset + off)
    return TcpInfo(**values)


def _fd(sock: socket.socket | int) -> int:
    return sock if isinstance(sock, int) else sock.fileno()


def tcp_info(sock: socket.socket | int) -> TcpInfo:
    """``TCP_INFO`` of a socket (or fd); all fields ``None`` if it cannot be read.

    On an MPTCP socket this describes only the first subflow: use ``mptcp_info`` or
    ``mptcp_subflows`` there.
    """
    if isinstance(sock, int):
        buf = ctypes.create_string_buffer(TCP_INFO_SIZE)
        n = _getsockopt(sock, socket.IPPROTO_TCP, socket.TCP_INFO, buf, TCP_INFO_SIZE)
        return UNKNOWN_TCP_INFO if n < 0 else parse_tcp_info(buf.raw, 0, n)
    try:
        raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_SIZE)
    except OSError:
        return UNKNOWN_TCP_INFO
    return parse_tcp_info(raw)


def sum_tcp_info(infos: list[TcpInfo]) -> TcpInfo:
    """Counters summed and RTTs averaged over several subflows (one MPTCP connection).

    A field is ``None`` if any subflow lacks it; ``min_rtt_us`` and ``last_ack_recv_ms`` are
    the minimum, ``rto_us`` the maximum.
    """
    if not infos:
        return UNKNOWN_TCP_INFO
    out: dict[str, int | None] = {}
    for f in fields(TcpInfo):
        vals = [getattr(i, f.name) for i in infos]
        if any(v is None for v in vals):
            out[f.name] = None
        elif f.name in ("rtt_us", "rttvar_us"):
            out[f.name] = sum(vals) // len(vals)
        elif f.name in ("min_rtt_us", "last_ack_recv_ms"):
            out[f.name] = min(vals)
        elif f.name == "rto_us":
            out[f.name] = max(vals)
        else:
            out[f.name] = sum(vals)
    return TcpInfo(**out)


# --- MPTCP ---------------------------------------------------------------------------------

# struct mptcp_info: field -> (offset, code); fields past the buffer the kernel returns are None.
_MPTCP_FIELDS: dict[str, tuple[int, str]] = {
    "subflows": (0, "B"),
    "subflows_max": (3, "B"),
    "flags": (8, "I"),
    "token": (12, "I"),
    "local_addr_used": (40, "B"),
    "retransmits": (44, "I"),
    "bytes_retrans": (48, "Q"),
    "bytes_sent": (56, "Q"),
    "bytes_received": (64, "Q"),
    "bytes_acked": (72, "Q"),
    "subflows_total": (80, "B"),
}


@dataclass(frozen=True, slots=True)
class MptcpInfo:
    """Connection-level counters of one MPTCP socket (``struct mptcp_info``)."""

    subflows: int | None = None
    """Subflows besides the initial one (the kernel's ``mptcpi_subflows``)."""
    subflows_max: int | None = None
    """The path manager's limit on extra subflows."""
    flags: int | None = None
    """``MPTCP_INFO_FLAG_*`` bits (bit 0: fallback to TCP, bit 1: remote key received)."""
    token: int | None = None
    """The connection's local token."""
    local_addr_used: int | None = None
    """Local addresses used by subflows."""
    retransmits: int | None = None
    """MPTCP-level retransmissions (data re-injected on another subflow), Linux >= 6.5."""
    bytes_retrans: int | None = None
    """Bytes re-injected at the MPTCP level, Linux >= 6.5."""
    bytes_sent: int | None = None
    """Data bytes sent at the MPTCP level (cumulative), Linux >= 6.5."""
    bytes_received: int | None = None
    """Data bytes received at the MPTCP level (cumulative), Linux >= 6.5."""
    bytes_acked: int | None = None
    """Data bytes acknowledged at the MPTCP level (cumulative), Linux >= 6.5."""
    subflows_total: int | None = None
    """All subflows including the initial one, Linux >= 6.10."""

    @property
    def fallback(self) -> bool:
        """True when the kernel reports that the connection fell back to plain TCP."""
        return bool((self.flags or 0) & MPTCP_INFO_FLAG_FALLBACK)


def parse_mptcp_info(buf: bytes | bytearray | memoryview, size: int = -1) -> MptcpInfo:
    """Parse a ``struct mptcp_info`` of ``size`` bytes; uncovered fields are ``None``."""
    avail = len(buf) if size < 0 else min(size, len(buf))
    values: dict[str, int] = {}
    for name, (off, code) in _MPTCP_FIELDS.items():
        if off + struct.calcsize(code) <= avail:
            (values[name],) = struct.unpack_from("<" + code, buf, off)
    return MptcpInfo(**values)


def mptcp_info(sock: socket.socket | int) -> MptcpInfo | None:
    """``MPTCP_INFO`` of a socket, or ``None`` if it is not (or no longer) MPTCP.

    The kernel answers EOPNOTSUPP for a plain TCP socket and for an MPTCP socket whose
    connection fell back to TCP; a fallback can also show as the flag ``fallback``.
    """
    buf = ctypes.create_string_buffer(MPTCP_INFO_SIZE)
    n = _getsockopt(_fd(sock), SOL_MPTCP, MPTCP_INFO, buf, MPTCP_INFO_SIZE)
    return None if n < 0 else parse_mptcp_info(buf.raw, n)


@dataclass(frozen=True, slots=True)
class SubflowInfo:
    """One subflow of an MPTCP connection at one instant."""

    id: int | None
    """The kernel's subflow id (unique within the connection), ``None`` if not reported."""
    local: tuple[str, int] | None
    """Local (address, port), ``None`` if unknown."""
    remote: tuple[str, int] | None
    """Remote (address, port), ``None`` if unknown."""
    tcp: TcpInfo
    """The subflow's own ``tcp_info``."""

    @property
    def path_id(self) -> str:
        """The network path this subflow uses: ``local_addr->remote_addr`` (ports dropped)."""
        loc = self.local[0] if self.local else "?"
        rem = self.remote[0] if self.remote else "?"
        return f"{loc}->{rem}"


def parse_sockaddr(buf: bytes | bytearray | memoryview, offset: int) -> tuple[str, int] | None:
    """(address, port) of a ``sockaddr_in``/``sockaddr_in6`` at ``offset``, else ``None``."""
    if offset + 2 > len(buf):
        return None
    (family,) = struct.unpack_from("=H", buf, offset)
    if family == socket.AF_INET and offset + 8 <= len(buf):
        (port,) = struct.unpack_from("!H", buf, offset + 2)
        return socket.inet_ntop(socket.AF_INET, bytes(buf[offset + 4 : offset + 8])), port
    if family == socket.AF_INET6 and offset + 24 <= len(buf):
        (port,) = struct.unpack_from("!H", buf, offset + 2)
        return socket.inet_ntop(socket.AF_INET6, bytes(buf[offset + 8 : offset + 24])), port
    return None


def parse_subflow_addrs(
    buf: bytes | bytearray | memoryview, offset: int, size: int
) -> tuple[tuple[str, int] | None, tuple[str, int] | None]:
    """Local and remote address of a ``struct mptcp_subflow_addrs`` (``size`` bytes)."""
    if size < _ADDRS_SIZE:
        return None, None
    return parse_sockaddr(buf, offset), parse_sockaddr(buf, offset + _ADDRS_SIZE // 2)


def mptcp_subflows(sock: socket.socket | int) -> list[SubflowInfo]:
    """Every subflow of an MPTCP socket with its ``tcp_info`` and addresses.

    Empty if the socket is not MPTCP, fell back to TCP, or the kernel has neither
    ``MPTCP_FULL_INFO`` (Linux >= 6.5) nor ``MPTCP_TCPINFO`` (Linux >= 5.16).
    """
    return mptcp_full_info(sock)[1]


def mptcp_full_info(sock: socket.socket | int) -> tuple[MptcpInfo | None, list[SubflowInfo]]:
    """``mptcp_info`` and ``mptcp_subflows`` together, from one system call where possible.

    ``(None, [])`` if the socket is not MPTCP or fell back to TCP.
    """
    fd = _fd(sock)
    result = _full_info(fd, _MAX_SUBFLOWS)
    if result is None:  # a kernel before 6.5: three calls
        return mptcp_info(fd), _tcpinfo_and_addrs(fd, _MAX_SUBFLOWS)
    return result


def stream_info(sock: socket.socket) -> TcpInfo:
    """The counters of one data stream, TCP or MPTCP, as one ``TcpInfo``.

    For plain TCP (and MPTCP fallen back to TCP) this is ``tcp_info``. For MPTCP it is
    ``sum_tcp_info`` over the subflows (``TCP_INFO`` would show only the first one), with
    ``bytes_acked``/``bytes_sent`` taken from the MPTCP level when the kernel gives them:
    data bytes, monotonic even when a subflow closes, and without re-injected copies.
    """
    if sock.proto != IPPROTO_MPTCP:
        return tcp_info(sock)
    info, subflows = mptcp_full_info(sock)
    if not subflows:
        return tcp_info(sock)
    total = sum_tcp_info([sf.tcp for sf in subflows])
    if info is not None and info.bytes_acked is not None and info.bytes_sent is not None:
        total = replace(total, bytes_acked=info.bytes_acked, bytes_sent=info.bytes_sent)
    return total


def parse_full_info(header: bytes, sfinfo: bytes, tcpinfo: bytes) -> list[SubflowInfo]:
    """Decode the answer of ``MPTCP_FULL_INFO``: the 40-byte header plus the two arrays."""
    _, tcp_user, _, sf_user, count, cap = struct.unpack_from("<6I", header, 0)
    out = []
    for i in range(min(count, cap)):
        sf_off, tcp_off = i * sf_user, i * tcp_user
        sf_id = struct.unpack_from("<I", sfinfo, sf_off)[0] if sf_user >= 4 else None
        local, remote = parse_subflow_addrs(sfinfo, sf_off + 8, sf_user - 8)
        tcp = parse_tcp_info(tcpinfo, tcp_off, tcp_user) if tcp_user else UNKNOWN_TCP_INFO
        out.append(SubflowInfo(sf_id, local, remote, tcp))
    return out


def _full_info(fd: int, cap: int) -> tuple[MptcpInfo | None, list[SubflowInfo]] | None:
    """``MPTCP_FULL_INFO``; ``None`` if the option is unknown to this kernel."""
    sfbuf = ctypes.create_string_buffer(cap * SUBFLOW_INFO_SIZE)
    tcpbuf = ctypes.create_string_buffer(cap * TCP_INFO_SIZE)
    hdr = ctypes.create_string_buffer(_FULL_INFO_HEADER + MPTCP_INFO_SIZE)
    struct.pack_into(
        "<6IQQ", hdr, 0, 0, TCP_INFO_SIZE, 0, SUBFLOW_INFO_SIZE, 0, cap,
        ctypes.addressof(sfbuf), ctypes.addressof(tcpbuf),
    )  # fmt: skip
    n = _getsockopt(fd, SOL_MPTCP, MPTCP_FULL_INFO, hdr, len(hdr))
    if n == -errno.EOPNOTSUPP and mptcp_info(fd) is not None:
        return None  # an MPTCP socket, but this kernel predates MPTCP_FULL_INFO
    if n < _FULL_INFO_HEADER:
        return None, []
    count = struct.unpack_from("<I", hdr, 16)[0]
    if count > cap and cap < 256:
        return _full_info(fd, count)  # more subflows than expected: ask again, big enough
    raw = hdr.raw
    info = parse_mptcp_info(raw[_FULL_INFO_HEADER:n]) if n > _FULL_INFO_HEADER else None
    return info, parse_full_info(raw, sfbuf.raw, tcpbuf.raw)


def _subflow_array(fd: int, optname: int, elem: int, cap: int) -> tuple[bytes, int, int]:
    """One ``struct mptcp_subflow_data``-headed array: (raw, element size, count)."""
    buf = ctypes.create_string_buffer(_SUBFLOW_DATA_HEADER + cap * elem)
    struct.pack_into("<4I", buf, 0, _SUBFLOW_DATA_HEADER, 0, 0, elem)
    n = _getsockopt(fd, SOL_MPTCP, optname, buf, len(buf))
    if n < _SUBFLOW_DATA_HEADER:
        return b"", 0, 0
    _, count, _, size_user = struct.unpack_from("<4I", buf, 0)
    return buf.raw[_SUBFLOW_DATA_HEADER:n], size_user, min(count, cap)


def _tcpinfo_and_addrs(fd: int, cap: int) -> list[SubflowInfo]:
    """Kernels 5.16 to 6.4: ``MPTCP_TCPINFO`` and ``MPTCP_SUBFLOW_ADDRS`` (matched by order)."""
    tbuf, tsize, tcount = _subflow_array(fd, MPTCP_TCPINFO, TCP_INFO_SIZE, cap)
    abuf, asize, acount = _subflow_array(fd, MPTCP_SUBFLOW_ADDRS, _ADDRS_SIZE, cap)
    out = []
    for i in range(tcount):
        local, remote = parse_subflow_addrs(abuf, i * asize, asize) if i < acount else (None, None)
        out.append(SubflowInfo(None, local, remote, parse_tcp_info(tbuf, i * tsize, tsize)))
    return out


# --- libc getsockopt ------------------------------------------------------------------------

_libc: ctypes.CDLL | None = None


def _getsockopt(
    fd: int, level: int, optname: int, buf: ctypes.Array[ctypes.c_char], size: int
) -> int:
    """libc ``getsockopt`` with ``buf`` as input and output: bytes returned, or ``-errno``."""
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.getsockopt.argtypes = [
            ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
        ]  # fmt: skip
        _libc.getsockopt.restype = ctypes.c_int
    optlen = ctypes.c_uint32(size)
    if _libc.getsockopt(fd, level, optname, buf, ctypes.byref(optlen)) != 0:
        return -(ctypes.get_errno() or errno.EIO)
    return int(optlen.value)
