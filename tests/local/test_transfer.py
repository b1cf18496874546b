"""Layer 2: real transfers over loopback sockets."""

from __future__ import annotations

import os
import socket
import struct

import pytest

import xfer
from xfer.config import SenderConfig
from xfer.dataset import trees_equal
from xfer.tx.sender import Sender

from .conftest import make_tree


def _meta(path: str) -> dict[str, tuple[int, int]]:
    out = {}
    for d, dirs, files in os.walk(path):
        for n in files + dirs:
            p = os.path.join(d, n)
            st = os.stat(p)
            out[os.path.relpath(p, path)] = (
                st.st_mode & 0o7777,
                st.st_mtime_ns if n in files else 0,
            )
    return out


def test_tree_arrives_identical_with_modes_and_mtimes(tmp_path, receiver) -> None:
    src = make_tree(str(tmp_path / "src" / "tree"))
    s = xfer.send([src], receiver.address, streams=4, block_size=1 << 20)
    dst = tmp_path / "dst" / "tree"
    assert s["exit_code"] == 0 and s["verified"], s
    assert trees_equal(src, str(dst))
    assert (dst / "empty-dir").is_dir() and (dst / "empty").stat().st_size == 0
    assert _meta(src) == _meta(str(dst))
    assert s["files"] == s["files_verified"] == 156 and s["bytes_resent"] == 0
    assert not (tmp_path / "dst" / ".xfer" / "partial").exists() or not os.listdir(
        tmp_path / "dst" / ".xfer" / "partial"
    )


def test_schedule_changes_streams_mid_transfer(tmp_path, receiver) -> None:
    src = tmp_path / "big.bin"
    src.write_bytes(os.urandom(48 << 20))
    seen = []
    s = xfer.send(
        [str(src)],
        receiver.address,
        policy="schedule:1,8,2,16",
        mi=0.25,
        stream_rate_bps=40e6,
        block_size=256 << 10,
        max_streams=16,
        on_interval=lambda r: seen.append(r.signal.streams),
    )
    assert s["exit_code"] == 0 and s["verified"], s
    assert (tmp_path / "dst" / "big.bin").read_bytes() == src.read_bytes()
    assert seen[:4] == [1, 8, 2, 16], seen
    assert s["streams_max"] == 16


def test_stream_reset_mid_transfer_still_identical(tmp_path, receiver) -> None:
    src = tmp_path / "big.bin"
    src.write_bytes(os.urandom(40 << 20))
    cfg = SenderConfig(
        address=receiver.address,
        paths=(str(src),),
        streams=4,
        mi=0.25,
        stream_rate_bps=200e6,
        block_size=512 << 10,
    )
    killed = []

    def reset_one(rec: dict) -> None:
        if len(killed) < 2 and sender.pool is not None:
            with sender.pool.monitor._lock:
                socks = list(sender.pool.monitor.socks.values())
            if socks:  # RST, as a middlebox or a crashed peer would
                socks[0].setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                socks[0].shutdown(socket.SHUT_RDWR)
                killed.append(1)

    sender = Sender(cfg, reset_one)
    import asyncio

    s = asyncio.run(sender.run())
    assert killed and s["stream_failures"] >= 1
    assert s["exit_code"] == 0 and s["verified"], s
    assert (tmp_path / "dst" / "big.bin").read_bytes() == src.read_bytes()


def test_memory_mode_counts_bytes(receiver) -> None:
    s = xfer.send((), receiver.address, mem=True, mem_size=64 << 20, streams=3)
    assert s["exit_code"] == 0 and s["verified"] and s["bytes"] == 64 << 20
    assert s["bytes_sent"] == s["bytes"] + s["bytes_redundant"] + s["bytes_resent"]
    assert 64 << 20 <= s["receiver"]["bytes_received"] <= s["bytes_sent"]


def test_dest_subdirectory_and_rerun_sends_nothing(tmp_path, receiver) -> None:
    src = make_tree(str(tmp_path / "src" / "tree"), seed=5)
    first = xfer.send([src], receiver.address, dest="in/here")
    assert first["exit_code"] == 0
    again = xfer.send([src], receiver.address, dest="in/here")
    assert again["exit_code"] == 0 and again["bytes_sent"] == 0
    assert again["bytes_skipped"] == again["bytes"]
    assert trees_equal(src, str(tmp_path / "dst" / "in" / "here" / "tree"))


@pytest.mark.slow
def test_file_over_4_gib(tmp_path, receiver) -> None:
    src = tmp_path / "huge.bin"
    with open(src, "wb") as f:  # sparse, with data at both ends of the 4 GiB boundary
        f.write(b"head")
        f.seek((4 << 30) - 2)
        f.write(b"across")
        f.seek((4 << 30) + (3 << 20))
        f.write(b"tail")
    s = xfer.send([str(src)], receiver.address, streams=4, block_size=64 << 20)
    assert s["exit_code"] == 0 and s["verified"], s
    out = tmp_path / "dst" / "huge.bin"
    assert out.stat().st_size == src.stat().st_size
    with open(out, "rb") as f:
        f.seek((4 << 30) - 2)
        assert f.read(6) == b"across"


def test_sender_clamps_its_blocks_to_the_receivers_max_block(tmp_path) -> None:
    src = tmp_path / "f.bin"
    src.write_bytes(os.urandom(5 << 20))
    with xfer.Receiver(root=str(tmp_path / "dst"), fsync=False, max_block=1 << 20) as rx:
        s = xfer.send([str(src)], rx.address, streams=2, block_size=8 << 20)
    assert s["exit_code"] == 0 and s["verified"], s
    assert (tmp_path / "dst" / "f.bin").read_bytes() == src.read_bytes()
