"""TCP_INFO / MPTCP info parsing (synthetic buffers), per-path aggregation, and the readers
and transports on real loopback connections."""

from __future__ import annotations

import asyncio
import logging
import socket
import struct
import threading
import time

import pytest

from policy.signals import PathSignal
from xfer.observe.tcpinfo import (
    UNKNOWN_TCP_INFO,
    MptcpInfo,
    SubflowInfo,
    TcpInfo,
    mptcp_full_info,
    mptcp_info,
    mptcp_subflows,
    parse_full_info,
    parse_mptcp_info,
    parse_tcp_info,
    stream_info,
    sum_tcp_info,
    tcp_info,
)
from xfer.transport import (
    IPPROTO_MPTCP,
    SO_MAX_PACING_RATE,
    PathAggregator,
    SocketOptions,
    TransportError,
    aggregate_paths,
    describe,
    listen_any,
    make_transport,
    subflow_sample,
)

# Offsets written down independently from include/uapi/linux/tcp.h (struct tcp_info).
UAPI = {
    "rto_us": (8, "I", 204_000),
    "unacked": (24, "I", 44),
    "lost": (32, "I", 3),
    "last_ack_recv_ms": (56, "I", 12),
    "rtt_us": (68, "I", 25_000),
    "rttvar_us": (72, "I", 1_200),
    "snd_cwnd": (80, "I", 321),
    "total_retrans": (100, "I", 17),
    "pacing_rate": (104, "Q", 12_500_000_000),
    "bytes_acked": (120, "Q", 2**40 + 5),
    "min_rtt_us": (148, "I", 20_100),
    "data_segs_out": (156, "I", 99_999),
    "delivery_rate": (160, "Q", 117_000_000),
    "delivered": (192, "I", 99_000),
    "bytes_sent": (200, "Q", 2**40 + 999),
    "bytes_retrans": (208, "Q", 12_345),
}


def tcp_info_bytes(size: int = 280, **override: int) -> bytes:
    buf = bytearray(size)
    for name, (off, code, value) in UAPI.items():
        if off + struct.calcsize(code) <= size:
            struct.pack_into("<" + code, buf, off, override.get(name, value))
    return bytes(buf)


def test_full_tcp_info_every_field() -> None:
    info = parse_tcp_info(tcp_info_bytes())
    for name, (_, _, value) in UAPI.items():
        assert getattr(info, name) == value, name
    assert info.known


@pytest.mark.parametrize(
    "size", [0, 1, 11, 12, 60, 67, 72, 100, 112, 127, 128, 152, 200, 215, 216, 280]
)
def test_short_tcp_info_gives_unknown_fields(size: int) -> None:
    info = parse_tcp_info(tcp_info_bytes(size))
    for name, (off, code, value) in UAPI.items():
        expect = value if off + struct.calcsize(code) <= size else None
        assert getattr(info, name) == expect, (name, size)
    assert info.known == (size >= 128)


def test_stalled() -> None:
    assert TcpInfo(unacked=3, last_ack_recv_ms=900).stalled(500)
    assert not TcpInfo(unacked=0, last_ack_recv_ms=9000).stalled(500)  # idle, not stalled
    assert not TcpInfo(unacked=3, last_ack_recv_ms=100).stalled(500)
    assert not UNKNOWN_TCP_INFO.stalled(0)


def test_tcp_info_in_an_array_with_offset_and_size() -> None:
    two = tcp_info_bytes(rtt_us=1) + tcp_info_bytes(rtt_us=2, bytes_acked=7)
    assert parse_tcp_info(two, 0, 280).rtt_us == 1
    second = parse_tcp_info(two, 280, 280)
    assert (second.rtt_us, second.bytes_acked) == (2, 7)
    assert parse_tcp_info(two, 280, 100).bytes_acked is None  # size caps what is read
    assert parse_tcp_info(two, 560, 280) == UNKNOWN_TCP_INFO


def test_sum_tcp_info() -> None:
    a = TcpInfo(rtt_us=10, rttvar_us=2, min_rtt_us=8, bytes_acked=100, lost=0)
    b = TcpInfo(rtt_us=30, rttvar_us=4, min_rtt_us=5, bytes_acked=50, lost=2)
    s = sum_tcp_info([a, b])
    assert (s.rtt_us, s.rttvar_us, s.min_rtt_us, s.bytes_acked, s.lost) == (20, 3, 5, 150, 2)
    assert s.snd_cwnd is None  # unknown in both
    assert sum_tcp_info([]) == UNKNOWN_TCP_INFO


def mptcp_info_bytes() -> bytes:
    buf = bytearray(96)
    struct.pack_into("<6B", buf, 0, 1, 0, 1, 2, 0, 2)
    struct.pack_into("<II", buf, 8, 0b10, 0xDEADBEEF)
    struct.pack_into("<B", buf, 40, 2)
    struct.pack_into("<IQQQQ", buf, 44, 4, 1000, 10**9, 5, 10**9 - 10)
    struct.pack_into("<B", buf, 80, 2)
    return bytes(buf)


def test_mptcp_info_full_and_old_kernel() -> None:
    full = parse_mptcp_info(mptcp_info_bytes())
    assert full == MptcpInfo(
        subflows=1, subflows_max=2, flags=2, token=0xDEADBEEF, local_addr_used=2,
        retransmits=4, bytes_retrans=1000, bytes_sent=10**9, bytes_received=5,
        bytes_acked=10**9 - 10, subflows_total=2,
    )  # fmt: skip
    assert not full.fallback
    old = parse_mptcp_info(mptcp_info_bytes()[:48])  # Linux < 6.5: no byte counters
    assert old.token == 0xDEADBEEF and old.bytes_acked is None and old.subflows_total is None
    fb = parse_mptcp_info(struct.pack("<8xI", 1))
    assert fb.fallback and fb.token is None
    assert parse_mptcp_info(b"") == MptcpInfo()


def sockaddr_in(ip: str, port: int) -> bytes:
    return struct.pack("=H", socket.AF_INET) + struct.pack("!H", port) + socket.inet_aton(ip)


def sockaddr_in6(ip: str, port: int) -> bytes:
    return (
        struct.pack("=H", socket.AF_INET6)
        + struct.pack("!HI", port, 0)
        + socket.inet_pton(socket.AF_INET6, ip)
    )


def subflow_info_bytes(sf_id: int, local: bytes, remote: bytes) -> bytes:
    buf = bytearray(264)
    struct.pack_into("<I", buf, 0, sf_id)
    buf[8 : 8 + len(local)] = local
    buf[136 : 136 + len(remote)] = remote
    return bytes(buf)


def test_full_info_two_subflows_v4_and_v6() -> None:
    header = struct.pack("<6I", 280, 280, 264, 264, 2, 8) + bytes(16)
    sfinfo = subflow_info_bytes(
        1, sockaddr_in("10.1.0.1", 40000), sockaddr_in("10.2.0.2", 5000)
    ) + subflow_info_bytes(3, sockaddr_in6("fd00::1", 40001), sockaddr_in6("fd00::2", 5000))
    tcp = tcp_info_bytes(rtt_us=10) + tcp_info_bytes(rtt_us=20)
    sfs = parse_full_info(header, sfinfo, tcp)
    assert [sf.id for sf in sfs] == [1, 3]
    assert sfs[0].local == ("10.1.0.1", 40000) and sfs[0].remote == ("10.2.0.2", 5000)
    assert sfs[0].path_id == "10.1.0.1->10.2.0.2"
    assert sfs[1].path_id == "fd00::1->fd00::2"
    assert [sf.tcp.rtt_us for sf in sfs] == [10, 20]


def test_full_info_short_element_sizes_degrade() -> None:
    # an old kernel that knows a smaller tcp_info, and only the subflow id (no addresses)
    header = struct.pack("<6I", 104, 104, 4, 4, 2, 8) + bytes(16)
    sfs = parse_full_info(header, struct.pack("<II", 1, 2), tcp_info_bytes(104) * 2)
    assert [sf.id for sf in sfs] == [1, 2]
    assert sfs[0].local is None and sfs[0].path_id == "?->?"
    assert sfs[0].tcp.rtt_us == UAPI["rtt_us"][2] and sfs[0].tcp.pacing_rate is None
    # more subflows than the arrays hold: only the first `cap` are parsed
    header = struct.pack("<6I", 280, 0, 264, 264, 5, 1) + bytes(16)
    sfs = parse_full_info(header, subflow_info_bytes(9, b"", b""), b"")
    assert len(sfs) == 1 and sfs[0].tcp == UNKNOWN_TCP_INFO and sfs[0].local is None


# --- per-path aggregation -----------------------------------------------------------------


def sf(
    sf_id: int, local: str, remote: str, acked: int, retrans: int, segs: int, rtt: int
) -> SubflowInfo:
    return SubflowInfo(
        sf_id, (local, 1000 + sf_id), (remote, 5000),
        TcpInfo(rtt_us=rtt, bytes_acked=acked, total_retrans=retrans, data_segs_out=segs),
    )  # fmt: skip


def test_aggregate_paths_deltas_loss_rtt_and_counts() -> None:
    prev = subflow_sample(
        {
            "s0": [sf(1, "10.1.0.1", "10.2.0.2", 1000, 0, 10, 10_000)],
            "s1": [sf(1, "10.1.0.1", "10.2.0.2", 0, 0, 0, 20_000)],
        }
    )
    cur = subflow_sample(
        {
            "s0": [
                sf(1, "10.1.0.1", "10.2.0.2", 126_000, 2, 110, 30_000),
                sf(2, "10.3.0.1", "10.4.0.2", 50_000, 1, 40, 50_000),  # new subflow
            ],
            "s1": [sf(1, "10.1.0.1", "10.2.0.2", 250_000, 3, 190, 10_000)],
        }
    )
    paths = {p.path_id: p for p in aggregate_paths(prev, cur, 0.5)}
    a, b = paths["10.1.0.1->10.2.0.2"], paths["10.3.0.1->10.4.0.2"]
    assert a == PathSignal("10.1.0.1->10.2.0.2", 2, (125_000 + 250_000) * 8 / 0.5, 5 / 290, 20.0)
    assert b == PathSignal("10.3.0.1->10.4.0.2", 1, 50_000 * 8 / 0.5, 1 / 40, 50.0)
    assert list(paths) == sorted(paths)


def test_aggregate_paths_idle_unknown_and_reset() -> None:
    prev = subflow_sample({"s": [sf(1, "a", "b", 500, 5, 50, 1000)]})
    idle = aggregate_paths(prev, prev, 1.0)
    assert idle == (PathSignal("a->b", 1, 0.0, None, 1.0),)  # no segments: loss unknown
    reset = subflow_sample({"s": [sf(1, "a", "b", 100, 0, 10, 1000)]})  # counters went back
    assert aggregate_paths(prev, reset, 1.0)[0].throughput_bps == 0.0
    blind = subflow_sample({"s": [SubflowInfo(None, None, None, UNKNOWN_TCP_INFO)]})
    assert aggregate_paths({}, blind, 1.0) == (PathSignal("?->?", 1, 0.0, None, None),)


def test_path_aggregator_baseline_then_intervals() -> None:
    agg = PathAggregator()
    assert agg.update(10.0, {"s": [sf(1, "a", "b", 1000, 0, 10, 1000)]}) == ()
    (p,) = agg.update(11.0, {"s": [sf(1, "a", "b", 2000, 0, 20, 1000)]})
    assert p.throughput_bps == 8000.0 and p.loss_rate == 0.0
    (p,) = agg.update(13.0, {"s": [sf(1, "a", "b", 6000, 1, 30, 1000)]})
    assert p.throughput_bps == 16000.0 and p.loss_rate == pytest.approx(0.1)
    assert agg.update(14.0, {}) == ()  # all streams closed: no paths


# --- real loopback sockets ----------------------------------------------------------------


def connected_pair(proto: int = socket.IPPROTO_TCP) -> tuple[socket.socket, socket.socket]:
    try:
        ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM, proto)
    except OSError as exc:
        pytest.skip(f"cannot create socket with proto {proto}: {exc}")
    with ls:
        ls.bind(("127.0.0.1", 0))
        ls.listen()
        c = socket.socket(socket.AF_INET, socket.SOCK_STREAM, proto)
        c.connect(ls.getsockname())
        s, _ = ls.accept()
    return c, s


def pump(c: socket.socket, s: socket.socket, n: int) -> None:
    def drain() -> None:
        got, buf = 0, bytearray(1 << 20)
        while got < n:
            got += s.recv_into(buf)

    t = threading.Thread(target=drain)
    t.start()
    c.sendall(bytes(n))
    t.join()


def test_tcp_info_of_real_loopback_connection() -> None:
    c, s = connected_pair()
    with c, s:
        before = tcp_info(c)
        pump(c, s, 8 << 20)
        after = tcp_info(c)
        via_fd = tcp_info(c.fileno())
        assert after.known and via_fd.known
        acked = after.bytes_acked - before.bytes_acked
        assert 8 << 20 <= acked <= (8 << 20) + 2, acked
        assert via_fd.bytes_acked == after.bytes_acked
        assert after.bytes_sent >= 8 << 20 and after.data_segs_out > 0
        assert after.rtt_us is not None and 0 < after.rtt_us < 1_000_000
        assert after.snd_cwnd and after.snd_cwnd > 0
        assert mptcp_info(c) is None and mptcp_subflows(c) == []  # plain TCP
        assert mptcp_full_info(c) == (None, [])
        assert stream_info(c).bytes_acked == tcp_info(c).bytes_acked
    assert tcp_info(c) == UNKNOWN_TCP_INFO  # closed: unknown, no exception
    assert tcp_info(-1) == UNKNOWN_TCP_INFO


def test_mptcp_info_and_subflows_of_real_loopback_connection() -> None:
    c, s = connected_pair(IPPROTO_MPTCP)
    with c, s:
        pump(c, s, 8 << 20)
        for _ in range(100):  # the MPTCP-level DATA_ACK may trail the receiver's read
            info = mptcp_info(c)
            if info is None or info.bytes_acked is None or info.bytes_acked == 8 << 20:
                break
            time.sleep(0.01)
        assert info is not None and not info.fallback
        if info.bytes_acked is not None:
            assert info.bytes_acked == 8 << 20
        sfs = mptcp_subflows(c)
        assert len(sfs) >= 1
        assert sfs[0].local == c.getsockname() and sfs[0].remote == c.getpeername()
        assert sfs[0].tcp.bytes_acked is not None and sfs[0].tcp.bytes_acked >= 8 << 20
        assert describe(c).kind == "mptcp" and describe(s).kind == "mptcp"
        both = mptcp_full_info(c)
        assert both[0] is not None and both[0].token == info.token
        assert [x.id for x in both[1]] == [x.id for x in sfs]
        total = stream_info(c)
        assert total.rtt_us is not None and total.data_segs_out
        if info.bytes_acked is not None:  # MPTCP-level data bytes, not subflow bytes
            assert total.bytes_acked == 8 << 20


# --- transports on loopback ---------------------------------------------------------------


def test_tcp_transport_options_and_describe() -> None:
    opts = SocketOptions(congestion="reno", max_pacing_rate=6_250_000)
    tr = make_transport("tcp", opts)
    with listen_any("127.0.0.1", 0, mptcp=False) as ls:
        c = tr.connect("127.0.0.1", ls.getsockname()[1], timeout=5)
        s, _ = ls.accept()
    with c, s:
        assert c.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0") == b"reno"
        assert c.getsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE) == 6_250_000
        assert c.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 0
        d = describe(c)
        assert (d.kind, d.requested, d.subflows, d.fell_back) == ("tcp", "tcp", 1, False)


def test_mptcp_transport_on_loopback(caplog: pytest.LogCaptureFixture) -> None:
    tr = make_transport("mptcp", SocketOptions(congestion="cubic", max_pacing_rate=10**6))
    with listen_any("127.0.0.1", 0) as ls:
        c = tr.connect("127.0.0.1", ls.getsockname()[1], timeout=5)
        c2 = tr.connect("127.0.0.1", ls.getsockname()[1], timeout=5)
        s, _ = ls.accept()
        s2, _ = ls.accept()
    with c, s, c2, s2:
        if not tr.kernel_has_mptcp:
            pytest.skip(f"no MPTCP here: {tr.fallback_reason}")
        assert c.proto == IPPROTO_MPTCP and describe(c).kind == "mptcp"
        assert c.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0") == b"cubic"
        # the kernel refuses SO_MAX_PACING_RATE on MPTCP sockets: said once, not per socket
        refused = [r for r in caplog.records if "SO_MAX_PACING_RATE" in r.getMessage()]
        assert len(refused) == 1 and "not supported on MPTCP" in refused[0].getMessage()


def test_tcp_client_into_mptcp_listener() -> None:
    with listen_any("127.0.0.1", 0) as ls:
        c = make_transport("tcp").connect("127.0.0.1", ls.getsockname()[1], timeout=5)
        s, _ = ls.accept()
    with c, s:
        pump(c, s, 1 << 20)
        assert describe(s).kind == "tcp"  # accepted by an MPTCP listener, but plain TCP


def test_connect_async() -> None:
    async def main() -> tuple[str, int]:
        with listen_any("127.0.0.1", 0, mptcp=False) as ls:
            ls.setblocking(False)
            loop = asyncio.get_running_loop()
            accept = asyncio.ensure_future(loop.sock_accept(ls))
            c = await make_transport("tcp").connect_async("127.0.0.1", ls.getsockname()[1])
            s, _ = await accept
            with c, s:
                await loop.sock_sendall(c, b"hello")
                data = await loop.sock_recv(s, 16)
                return data.decode(), c.gettimeout() == 0.0

    assert asyncio.run(main()) == ("hello", True)


def test_bad_names_say_what_is_wrong() -> None:
    with pytest.raises(ValueError, match="unknown transport 'quic'.*tcp, mptcp"):
        make_transport("quic")
    tr = make_transport("tcp", SocketOptions(congestion="no-such-cc"))
    with pytest.raises(TransportError, match="'no-such-cc' is not available"):
        tr.new_socket(socket.AF_INET)


def test_fallback_warning_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    tr = make_transport("mptcp")
    with caplog.at_level(logging.INFO, logger="xfer.transport"):
        tr.warn_once("mptcp: x")
        tr.warn_once("mptcp: x")
        quiet = make_transport("mptcp")
        quiet.quiet = True
        quiet.warn_once("mptcp: y")
    levels = [(r.levelno, r.getMessage()) for r in caplog.records]
    assert levels == [(logging.WARNING, "xfer: mptcp: x"), (logging.INFO, "xfer: mptcp: y")]
