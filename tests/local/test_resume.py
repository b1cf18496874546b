"""Resume: SIGKILL the sender or the receiver at several points, freeze a sender, lose the
control connection, stall a stream, change a file between runs; the re-run of the same
command completes, byte for byte, sending only what is missing."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest

import xfer
from xfer.dataset import trees_equal

from ..hostile import (
    Proxy,
    RecvProcess,
    final_bytes,
    free_port,
    journaled_bytes,
    result,
    start_send,
    wait_for,
)
from .conftest import make_tree

SLOW = ["--streams", "2", "--stream-rate", "16Mbit", "--block-size", "256KiB"]
"""About 4 MB/s: the 11 MB tree takes ~3 s, long enough to kill it where we want."""


@pytest.fixture
def rx(tmp_path) -> Iterator[xfer.Receiver]:
    r = xfer.Receiver(root=str(tmp_path / "dst"), stall_timeout=1.5, sync_interval=0.25)
    r.start()
    yield r
    r.stop()


def _progress(root: str, sub: str) -> int:
    """Bytes the receiver holds durably: journaled ranges plus files already in place."""
    return journaled_bytes(root) + final_bytes(root, sub)


def _tree(tmp_path) -> tuple[str, int]:
    src = make_tree(str(tmp_path / "src" / "tree"), seed=11)
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(src) for f in fs)
    return src, total


def _assert_resumed(summary: dict, total: int, *, some_skipped: bool) -> None:
    assert summary["exit_code"] == 0 and summary["verified"], summary
    assert summary["bytes"] == total
    if some_skipped:
        assert summary["bytes_skipped"] > 0, summary
        # copies of blocks in flight elsewhere (endgame, hedging) count in bytes_sent; the
        # resume must have sent fewer *distinct* bytes than the whole tree (CI 2026-11-27:
        # 3.7 MB of endgame copies put bytes_sent 18 kB above the total of a resumed run)
        assert summary["bytes_sent"] - summary["bytes_redundant"] < total, summary
    # nothing is skipped that was not verified, nothing missing is left unsent
    assert summary["bytes_sent"] + summary["bytes_skipped"] >= total, summary


@pytest.mark.parametrize("point", [0.0, 0.35, 0.8], ids=["early", "mid", "late"])
def test_sigkill_sender_then_rerun(tmp_path, rx, point) -> None:
    src, total = _tree(tmp_path)
    root = str(tmp_path / "dst")
    cmd = [src, rx.address, *SLOW]
    first = start_send(cmd)
    if point == 0.0:  # as soon as the receiver prepared the session (partials exist)
        assert wait_for(
            lambda: (
                os.path.isdir(os.path.join(root, ".xfer", "partial"))
                and os.listdir(os.path.join(root, ".xfer", "partial"))
            ),
            20,
            0.005,
        )
    else:
        assert wait_for(lambda: _progress(root, "tree") >= point * total, 30), first.poll()
    first.send_signal(signal.SIGKILL)
    assert first.wait(10) == -signal.SIGKILL
    assert wait_for(lambda: not rx._rx.sessions, 10)  # the receiver noticed and kept state
    assert not trees_equal(src, os.path.join(root, "tree")) or point > 0.7
    code, summary, err = result(start_send(cmd))
    assert code == 0, (summary, err)
    _assert_resumed(summary, total, some_skipped=point > 0)
    assert trees_equal(src, os.path.join(root, "tree"))
    assert not os.listdir(os.path.join(root, ".xfer", "partial"))


def test_sigkill_receiver_then_restart_and_rerun(tmp_path) -> None:
    src, total = _tree(tmp_path)
    root, port = str(tmp_path / "dst"), free_port()
    recv = RecvProcess(root, str(tmp_path / "recv.log"), port)
    try:
        cmd = [src, recv.address, *SLOW]
        first = start_send(cmd)
        assert wait_for(lambda: _progress(root, "tree") >= 0.4 * total, 30), recv.stderr()
        recv.kill(signal.SIGKILL)
        code, summary, err = result(first)
        assert code == 3, (summary, err)  # NETWORK: lost the receiver, resumable
        assert "lost" in summary["error"] and not summary["verified"], summary
        assert not trees_equal(src, os.path.join(root, "tree"))
        recv = RecvProcess(root, str(tmp_path / "recv2.log"), port)
        code, summary, err = result(start_send(cmd))
        assert code == 0, (summary, err, recv.stderr())
        _assert_resumed(summary, total, some_skipped=True)
    finally:
        recv.stop()
    assert trees_equal(src, os.path.join(root, "tree"))


def test_frozen_sender_does_not_hold_its_session_and_rerun_completes(tmp_path, rx) -> None:
    """SIGSTOP: no FIN, no RST, just silence. The receiver drops its streams after the stall
    timeout, ends the session (keeping what was verified) and accepts the re-run at once."""
    src, total = _tree(tmp_path)
    root = str(tmp_path / "dst")
    cmd = [src, rx.address, *SLOW]
    first = start_send(cmd)
    try:
        assert wait_for(lambda: _progress(root, "tree") >= 0.3 * total, 30)
        first.send_signal(signal.SIGSTOP)
        assert wait_for(lambda: not rx._rx.sessions, 10), "session of a frozen sender kept"
        code, summary, err = result(start_send(cmd))
        assert code == 0, (summary, err)
        _assert_resumed(summary, total, some_skipped=True)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(10)
    assert trees_equal(src, os.path.join(root, "tree"))


def test_dead_control_connection_ends_cleanly_and_resumes(tmp_path, rx) -> None:
    src, total = _tree(tmp_path)
    root = str(tmp_path / "dst")
    with Proxy(rx.address) as proxy:
        first = start_send([src, proxy.address, *SLOW])
        assert wait_for(lambda: _progress(root, "tree") >= 0.3 * total, 30)
        proxy.reset_control()
        code, summary, err = result(first)
    assert code == 3 and "lost" in summary["error"], (summary, err)
    assert wait_for(lambda: not rx._rx.sessions, 10)
    assert journaled_bytes(root) + final_bytes(root, "tree") > 0
    code, summary, err = result(start_send([src, rx.address, *SLOW]))
    assert code == 0, (summary, err)
    _assert_resumed(summary, total, some_skipped=True)
    assert trees_equal(src, os.path.join(root, "tree"))


def test_stalled_stream_is_dropped_and_its_blocks_requeued(tmp_path, rx) -> None:
    """A path that stops moving (the proxy stops reading one data connection after 2000
    bytes): the sender's stream times out and its blocks go on the other stream, the
    receiver drops its end after its stall timeout; the file still arrives whole."""
    src = tmp_path / "src" / "big.bin"
    src.parent.mkdir(parents=True)
    src.write_bytes(os.urandom(16 << 20))
    with Proxy(rx.address, rcvbuf=4096) as proxy:
        proxy.freeze_data = (0, 2000)
        s = xfer.send(
            [str(src)],
            proxy.address,
            streams=2,
            block_size=256 << 10,
            stream_rate_bps=40e6,
            stall_timeout=1.5,
        )
        assert s["exit_code"] == 0 and s["verified"], s
        assert "froze data connection 0 after 2000 bytes" in proxy.events
        assert s["stream_failures"] >= 1 and s["bytes_resent"] + s["bytes_redundant"] > 0, s
        assert wait_for(lambda: "receiver closed data connection 0" in proxy.events, 5), (
            proxy.events
        )
    assert (tmp_path / "dst" / "big.bin").read_bytes() == src.read_bytes()


@pytest.mark.parametrize("change", ["same size, mtime restored", "different size"])
def test_file_changed_between_runs_is_sent_whole_again(tmp_path, rx, change) -> None:
    src = tmp_path / "src" / "tree"
    src.mkdir(parents=True)
    big = src / "big.bin"
    big.write_bytes(os.urandom(8 << 20))
    (src / "small.txt").write_bytes(b"unchanged\n")
    root = str(tmp_path / "dst")
    cmd = [str(src), rx.address, *SLOW]
    first = start_send(cmd)
    assert wait_for(lambda: journaled_bytes(root) >= 2 << 20, 30)
    first.send_signal(signal.SIGKILL)
    first.wait(10)
    assert wait_for(lambda: not rx._rx.sessions, 10)
    st = big.stat()
    if change == "different size":
        big.write_bytes(os.urandom((8 << 20) + 4096))
    else:
        big.write_bytes(os.urandom(8 << 20))
        os.utime(big, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert big.stat().st_mtime_ns == st.st_mtime_ns and big.stat().st_size == st.st_size
    code, summary, err = result(start_send(cmd))
    assert code == 0 and summary["verified"], (summary, err)
    size = big.stat().st_size
    assert summary["bytes_sent"] >= size, summary  # all of it, no stale range kept
    assert summary["bytes_skipped"] <= len(b"unchanged\n"), summary
    assert trees_equal(str(src), os.path.join(root, "tree"))


def test_file_fully_journaled_but_not_renamed_is_finished_without_resending(tmp_path) -> None:
    """The receiver died after journaling the last block of a file but before renaming it
    (the journal even lists one block twice, as a hedged duplicate does). Before KEEP, the
    re-run waited forever for a FILE_DONE nobody would send."""
    import xxhash

    from xfer.manifest import scan
    from xfer.rx.store import Store

    src = tmp_path / "src" / "f.bin"
    src.parent.mkdir(parents=True)
    data = os.urandom(3 << 20)
    src.write_bytes(data)
    (entry,) = scan([str(src)]).entries
    root = str(tmp_path / "dst")
    store = Store(root, fsync=False)
    assert store.prepare(entry) == (False, [])
    for off in (0, 1 << 20, 2 << 20, 1 << 20):
        block = memoryview(data)[off : off + (1 << 20)]
        store.write(entry, off, block)
        store.record(entry, off, len(block), xxhash.xxh3_64_intdigest(block))
    store.sync()
    store.close()
    with xfer.Receiver(root=root, fsync=False) as r:
        s = xfer.send([str(src)], r.address, block_size=1 << 20, stall_timeout=5)
    assert s["exit_code"] == 0 and s["verified"], s
    assert s["bytes_sent"] == 0 and s["bytes_skipped"] == len(data), s
    assert (tmp_path / "dst" / "f.bin").read_bytes() == data
