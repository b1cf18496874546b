"""MPTCP for real: two namespaces joined by two veth pairs (two paths, tbf-shaped).

The client (``xmp-<pid>-c``) and server (``xmp-<pid>-s``) namespaces are created by the
fixture below and deleted afterwards, also on failure. Sockets are created inside a namespace
by switching the calling thread into it with ``setns`` (a socket keeps the namespace it was
created in), so the whole test runs in this one process.

    path a: 10.231.1.1 (c, dev a0) <-> 10.231.1.2 (s, dev a1)   tbf 200 Mbit/s c->s
    path b: 10.231.2.1 (c, dev b0) <-> 10.231.2.2 (s, dev b1)   tbf 100 Mbit/s c->s

The server announces 10.231.2.2 (``ip mptcp endpoint ... signal``); the client accepts it and
opens the second subflow over path b.
"""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from xfer.observe.tcpinfo import (
    _full_info,
    _tcpinfo_and_addrs,
    mptcp_info,
    mptcp_subflows,
    stream_info,
)
from xfer.transport import MptcpTransport, PathAggregator, describe, listen_any

pytestmark = [pytest.mark.netns, pytest.mark.timeout(120)]

PREFIX = "xmp-"
CLONE_NEWNET = 0x40000000
RATE_A, RATE_B = 200e6, 100e6  # bit/s, client->server
PATH_A, PATH_B = "10.231.1.1->10.231.1.2", "10.231.2.1->10.231.2.2"
TOTAL = 100 * 1024 * 1024


def sh(*args: str) -> None:
    res = subprocess.run(args, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed: {res.stderr.strip()}")


def sysctl(ns: str, key: str, value: str) -> None:
    sh("ip", "netns", "exec", ns, "sysctl", "-qw", f"{key}={value}")


def _remove_stale() -> None:
    """Delete namespaces left by an earlier run of this file that was killed."""
    for line in subprocess.run(
        ["ip", "netns", "list"], capture_output=True, text=True
    ).stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        parts = name.split("-")
        stale = len(parts) == 3 and parts[1].isdigit() and not os.path.exists(f"/proc/{parts[1]}")
        if name.startswith(PREFIX) and stale:
            subprocess.run(["ip", "netns", "del", name], capture_output=True)


def _build(c: str, s: str) -> None:
    sh("ip", "netns", "add", c)
    sh("ip", "netns", "add", s)
    for ns in (c, s):
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        sysctl(ns, "net.mptcp.enabled", "1")
        sysctl(ns, "net.ipv4.tcp_no_metrics_save", "1")
        sh("ip", "-n", ns, "mptcp", "limits", "set", "subflows", "2", "add_addr_accepted", "2")
    for path, rate in (("a", RATE_A), ("b", RATE_B)):
        net = "1" if path == "a" else "2"
        sh(
            "ip",
            "-n",
            c,
            "link",
            "add",
            f"{path}0",
            "type",
            "veth",
            "peer",
            "name",
            f"{path}1",
            "netns",
            s,
        )
        sh("ip", "-n", c, "addr", "add", f"10.231.{net}.1/24", "dev", f"{path}0")
        sh("ip", "-n", s, "addr", "add", f"10.231.{net}.2/24", "dev", f"{path}1")
        sh("ip", "-n", c, "link", "set", f"{path}0", "up")
        sh("ip", "-n", s, "link", "set", f"{path}1", "up")
        sh("tc", "-n", c, "qdisc", "add", "dev", f"{path}0", "root", "tbf",
           "rate", f"{int(rate)}bit", "burst", "256k", "limit", "1m")  # fmt: skip
    sh("ip", "-n", s, "mptcp", "endpoint", "add", "10.231.2.2", "dev", "b1", "signal")


@pytest.fixture(scope="module")
def twopath() -> Iterator[tuple[str, str]]:
    try:
        socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262).close()
    except OSError as exc:
        if exc.errno == errno.EPROTONOSUPPORT:
            pytest.skip("this kernel has no MPTCP")
    _remove_stale()
    c, s = f"{PREFIX}{os.getpid()}-c", f"{PREFIX}{os.getpid()}-s"
    try:
        _build(c, s)
        yield c, s
    finally:
        for ns in (c, s):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


_libc = ctypes.CDLL(None, use_errno=True)


@contextmanager
def in_netns(name: str) -> Iterator[None]:
    """Run the calling thread in namespace ``name`` (sockets made here stay there)."""
    with open("/proc/thread-self/ns/net") as home, open(f"/run/netns/{name}") as target:
        if _libc.setns(target.fileno(), CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns into {name} failed")
        try:
            yield
        finally:
            if _libc.setns(home.fileno(), CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns back home failed")


def _sink(listener: socket.socket, result: dict[str, object]) -> None:
    conn, _ = listener.accept()
    result["desc"] = describe(conn)
    buf, n = bytearray(1 << 20), 0
    while True:
        k = conn.recv_into(buf)
        if not k:
            break
        n += k
    result["bytes"] = n
    conn.close()


def _transfer(
    c: str, s: str, total: int, sample_every: float = 0.0, transport: MptcpTransport | None = None
) -> dict[str, object]:
    """Move ``total`` bytes c->s over one MPTCP-transport connection, sampling subflows."""
    with in_netns(s):
        listener = listen_any("0.0.0.0", 0)
    port = listener.getsockname()[1]
    result: dict[str, object] = {}
    rx = threading.Thread(target=_sink, args=(listener, result))
    rx.start()
    transport = transport or MptcpTransport()
    try:
        with in_netns(c):
            sock = transport.connect("10.231.1.2", port, timeout=5)
        result["client_desc"] = transport.describe(sock)
        samples = _send_sampled(sock, total, sample_every)
        result["samples"] = samples
        result["final_subflows"] = mptcp_subflows(sock)
        result["mptcp_info"] = mptcp_info(sock)
        result["stream_info"] = stream_info(sock)
        result["small_cap"] = _full_info(sock.fileno(), 1)  # must re-ask with room for all
        result["legacy"] = _tcpinfo_and_addrs(sock.fileno(), 16)  # the Linux < 6.5 path
        sock.close()
    finally:
        rx.join(timeout=30)
        listener.close()
    result["transport"] = transport
    return result


def _send_sampled(sock: socket.socket, total: int, every: float) -> list[tuple[float, list]]:
    samples: list[tuple[float, list]] = [(time.monotonic(), mptcp_subflows(sock))]
    done = threading.Event()

    def send() -> None:
        chunk = memoryview(bytes(4 << 20))
        left = total
        while left:
            left -= sock.send(chunk[: min(left, len(chunk))])
        done.set()

    tx = threading.Thread(target=send)
    tx.start()
    while not done.wait(every or 0.25):
        if every:
            samples.append((time.monotonic(), mptcp_subflows(sock)))
    tx.join()
    # wait until everything sent is acknowledged, then take the last sample
    for _ in range(200):
        if (stream_info(sock).bytes_acked or 0) >= total:
            break
        time.sleep(0.02)
    samples.append((time.monotonic(), mptcp_subflows(sock)))
    return samples


def test_two_subflows_carry_data_and_paths_aggregate(twopath: tuple[str, str]) -> None:
    c, s = twopath
    res = _transfer(c, s, TOTAL, sample_every=0.25)
    assert res["bytes"] == TOTAL
    assert res["client_desc"].kind == "mptcp"
    assert res["desc"].kind == "mptcp"  # the receiver's accepted socket
    subflows = res["final_subflows"]
    assert len(subflows) >= 2, f"expected 2 subflows, got {subflows}"
    by_path = {sf.path_id: sf for sf in subflows}
    assert set(by_path) == {PATH_A, PATH_B}
    small_info, small = res["small_cap"]
    assert [sf.local for sf in small] == [sf.local for sf in subflows]
    assert small_info is not None and small_info.token == res["mptcp_info"].token
    legacy = {sf.path_id: sf for sf in res["legacy"]}  # MPTCP_TCPINFO + MPTCP_SUBFLOW_ADDRS
    assert set(legacy) == set(by_path)
    for path, sf in legacy.items():
        assert sf.local == by_path[path].local and sf.remote == by_path[path].remote
        assert sf.tcp.bytes_acked == by_path[path].tcp.bytes_acked  # idle: counters settled
    for sf in subflows:
        assert sf.tcp.bytes_acked and sf.tcp.bytes_acked > 0.1 * TOTAL, sf
        assert sf.tcp.rtt_us is not None and 0 < sf.tcp.rtt_us < 1_000_000, sf
        assert sf.tcp.min_rtt_us is not None and 0 < sf.tcp.min_rtt_us <= sf.tcp.rtt_us * 10
        assert sf.tcp.data_segs_out and sf.tcp.snd_cwnd
    # the kernel's own counter: everything the app wrote was acknowledged at MPTCP level
    info = res["mptcp_info"]
    if info.bytes_acked is not None:
        assert info.bytes_acked == TOTAL
        assert res["stream_info"].bytes_acked == TOTAL  # what the engine's monitor reads
    # ... and the subflow counters summed for the rest (first subflow alone would be less)
    assert res["stream_info"].data_segs_out == sum(sf.tcp.data_segs_out for sf in subflows)

    agg = PathAggregator()
    per_path: dict[str, float] = {PATH_A: 0.0, PATH_B: 0.0}
    samples = res["samples"]
    for t, sfs in samples:
        for p in agg.update(t, {"conn0": sfs}):
            assert p.path_id in per_path
            assert p.subflows >= 1
            per_path[p.path_id] += p.throughput_bps * p_dt(samples, t) / 8
            if p.throughput_bps > 0:
                assert p.rtt_ms is not None and 0 < p.rtt_ms < 1000
                assert p.loss_rate is not None and 0 <= p.loss_rate <= 1
    # deltas telescope: the per-path bytes add up to what the subflows acknowledged
    acked = sum(sf.tcp.bytes_acked for sf in samples[-1][1]) - sum(
        sf.tcp.bytes_acked or 0 for sf in samples[0][1]
    )
    assert abs(sum(per_path.values()) - acked) < 1e-6 * acked + 1
    assert TOTAL <= acked < 1.1 * TOTAL
    # attribution is right: the faster path carried more, neither beat its shaper
    seconds = samples[-1][0] - samples[0][0]
    assert per_path[PATH_A] > per_path[PATH_B] > 0.1 * TOTAL
    assert per_path[PATH_A] * 8 / seconds < RATE_A * 1.05
    assert per_path[PATH_B] * 8 / seconds < RATE_B * 1.05
    print(
        f"\nmptcp 2-path: {TOTAL / 2**20:.0f} MiB in {seconds:.2f} s, "
        f"path a {per_path[PATH_A] * 8 / seconds / 1e6:.1f} Mbit/s (tbf 200), "
        f"path b {per_path[PATH_B] * 8 / seconds / 1e6:.1f} Mbit/s (tbf 100)"
    )


def p_dt(samples: list[tuple[float, list]], t: float) -> float:
    """Interval ending at sample time ``t``."""
    times = [x[0] for x in samples]
    i = times.index(t)
    return t - times[i - 1]


@contextmanager
def mptcp_disabled(ns: str) -> Iterator[None]:
    sysctl(ns, "net.mptcp.enabled", "0")
    try:
        yield
    finally:
        sysctl(ns, "net.mptcp.enabled", "1")


def test_fallback_when_client_kernel_disables_mptcp(
    twopath: tuple[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    c, s = twopath
    caplog.set_level(logging.INFO, logger="xfer.transport")
    with mptcp_disabled(c):
        res = _transfer(c, s, 4 << 20)
        again = _transfer(c, s, 1 << 20, transport=res["transport"])  # warns only once
    assert res["bytes"] == 4 << 20 and again["bytes"] == 1 << 20
    desc = res["client_desc"]
    assert desc.kind == "tcp" and desc.requested == "tcp"  # the kernel refused IPPROTO_MPTCP
    assert res["desc"].kind == "tcp"
    assert res["final_subflows"] == [] and res["mptcp_info"] is None
    assert res["stream_info"].bytes_acked >= 4 << 20  # plain TCP_INFO
    assert "net.mptcp.enabled=0" in (res["transport"].fallback_reason or "")
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    assert "net.mptcp.enabled=0" in warnings[0].getMessage()
    assert "plain TCP" in warnings[0].getMessage()


def test_fallback_when_peer_does_not_do_mptcp(
    twopath: tuple[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    c, s = twopath
    caplog.set_level(logging.INFO, logger="xfer.transport")
    with mptcp_disabled(s):
        res = _transfer(c, s, 4 << 20)
    assert res["bytes"] == 4 << 20
    desc = res["client_desc"]
    assert desc.requested == "mptcp" and desc.kind == "tcp" and desc.fell_back
    assert res["final_subflows"] == [] and res["mptcp_info"] is None
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "fell back to TCP" in warnings[0], warnings
    # the receiver's own fallback (MPTCP listener refused) is reported quietly, at INFO
    infos = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert any("net.mptcp.enabled=0" in m for m in infos), infos


def test_two_streams_share_paths_and_a_dead_path_shows(twopath: tuple[str, str]) -> None:
    """Two MPTCP connections: per-path subflow counts add up; blackholing path b mid-transfer
    makes its subflows stall (throughput 0, no ACKs) while path a carries the rest."""
    c, s = twopath
    with in_netns(s):
        listener = listen_any("0.0.0.0", 0)
    port, per_stream = listener.getsockname()[1], 40 << 20
    results: list[dict[str, object]] = [{}, {}]
    rxs = [threading.Thread(target=_sink, args=(listener, r)) for r in results]
    for t in rxs:
        t.start()
    transport, socks = MptcpTransport(), []
    drop = ("ip", "netns", "exec", s, "iptables", "{}", "INPUT", "-i", "b1", "-j", "DROP")
    history: list[tuple[float, dict[str, object], dict[int, list]]] = []
    dead_at = None
    try:
        with in_netns(c):
            socks = [transport.connect("10.231.1.2", port, timeout=5) for _ in range(2)]
        txs = [threading.Thread(target=x.sendall, args=(bytes(per_stream),)) for x in socks]
        for t in txs:
            t.start()
        agg, t0 = PathAggregator(), time.monotonic()
        while any(t.is_alive() for t in txs):
            now = time.monotonic()
            sample = {i: mptcp_subflows(x) for i, x in enumerate(socks)}
            history.append((now - t0, {p.path_id: p for p in agg.update(now, sample)}, sample))
            if dead_at is None and now - t0 > 1.0:
                sh(*(a.replace("{}", "-A") for a in drop))
                dead_at = now - t0
            time.sleep(0.25)
    finally:
        subprocess.run([a.replace("{}", "-D") for a in drop], capture_output=True)
        for x in socks:
            x.close()
        for t in rxs:
            t.join(timeout=30)
        listener.close()
    assert [r.get("bytes") for r in results] == [per_stream, per_stream]
    assert dead_at is not None, "transfer ended before the path could be cut"
    before = [paths for t, paths, _ in history if t < dead_at and len(paths) == 2]
    assert before, "no interval with both paths before the cut"
    assert all(p.subflows == 2 for paths in before for p in paths.values())  # one per stream
    assert any(paths[PATH_B].throughput_bps > 0 for paths in before)
    after = [(paths, sample) for t, paths, sample in history if t > dead_at + 1.0]
    assert after, "transfer ended too soon after the cut to observe it"
    delivered: dict[tuple[int, int], set[int | None]] = {}
    for paths, sample in after:
        assert paths[PATH_B].throughput_bps == 0.0  # nothing acknowledged on the dead path
        assert paths[PATH_B].subflows == 2  # the kernel keeps retrying its subflows
        dead = [(i, sf) for i, sfs in sample.items() for sf in sfs if sf.path_id == PATH_B]
        assert dead
        for i, sf in dead:
            delivered.setdefault((i, sf.id), set()).add(sf.tcp.delivered)
    # No dead subflow delivers anything after the cut. (Its last_ack_recv may still be
    # fresh: the peer can send MPTCP DATA_ACKs for path A's data on the path-B subflow, which
    # the cut in one direction lets through; seen once in CI at 232 ms.)
    assert all(len(v) == 1 for v in delivered.values()), delivered
    assert any(
        sf.tcp.stalled(500) for _, sample in after for sfs in sample.values() for sf in sfs
    ), "no subflow of the dead path reported as stalled"
    assert any(paths[PATH_A].throughput_bps > 0 for paths, _ in after)
