"""Encrypted sessions over loopback: AES-256-GCM end to end, what each side accepts, and an
on-path attacker (a tampering proxy) who flips bits in block headers, payloads and control
frames: nothing wrong is ever written; data tampering is re-sent, control tampering ends the
session with a clear error."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import xfer
from xfer.config import SenderConfig
from xfer.dataset import trees_equal
from xfer.wire.connection import ReceiverConnection

from ..hostile import Proxy, Tamper
from .conftest import make_tree


@pytest.fixture
def rx(tmp_path) -> Iterator[xfer.Receiver]:
    r = xfer.Receiver(root=str(tmp_path / "dst"), fsync=False, stall_timeout=5)
    r.start()
    yield r
    r.stop()


def _written_files_are_right(src: str, dst: Path) -> int:
    """Every file present under its final name in ``dst`` equals its source; returns how many."""
    n = 0
    for d, _dirs, files in os.walk(dst):
        if ".xfer" in Path(d).parts:
            continue
        for name in files:
            p = Path(d) / name
            rel = p.relative_to(dst)
            assert (Path(src).parent / rel).read_bytes() == p.read_bytes(), rel
            n += 1
    return n


def test_encrypted_tree_arrives_identical(tmp_path, rx) -> None:
    src = make_tree(str(tmp_path / "src" / "tree"), seed=5)
    s = xfer.send([src], rx.address, streams=4, block_size=1 << 20, encryption="on")
    assert s["exit_code"] == 0 and s["verified"], s
    assert s["encryption"] == s["receiver"]["encryption"] == "aes-256-gcm"
    assert s["receiver"]["auth_failures"] == 0 and s["bytes_resent"] == 0
    assert trees_equal(src, str(tmp_path / "dst" / "tree"))


def test_encrypted_memory_mode(rx) -> None:
    s = xfer.send([], rx.address, mem=True, mem_size=30_000_000, streams=3, encryption="on")
    assert s["exit_code"] == 0 and s["bytes"] == 30_000_000, s
    assert s["receiver"]["encryption"] == "aes-256-gcm"


def test_auto_means_on_unless_the_peer_is_loopback(tmp_path) -> None:
    f = tmp_path / "f"
    f.write_bytes(b"x")
    enc = {
        addr: SenderConfig(address=addr, paths=(str(f),)).encrypt
        for addr in ("127.0.0.1:1", "localhost:1", "[::1]:1", "10.0.0.1:1", "[2001:db8::1]:1")
    }
    assert enc == {
        "127.0.0.1:1": False,
        "localhost:1": False,
        "[::1]:1": False,
        "10.0.0.1:1": True,
        "[2001:db8::1]:1": True,
    }
    assert SenderConfig(address="127.0.0.1:1", paths=(str(f),), encryption="on").encrypt
    assert not SenderConfig(address="10.0.0.1:1", paths=(str(f),), encryption="off").encrypt
    with pytest.raises(ValueError, match="--encryption"):
        SenderConfig(address="10.0.0.1:1", paths=(str(f),), encryption="maybe")


@pytest.mark.parametrize(
    "rx_mode, tx_mode, message",
    [
        ("on", "off", "requires encryption"),
        ("off", "on", "has encryption off"),
    ],
)
def test_a_mismatch_is_a_clear_error(tmp_path, rx_mode: str, tx_mode: str, message: str) -> None:
    src = tmp_path / "f.bin"
    src.write_bytes(os.urandom(1000))
    with xfer.Receiver(root=str(tmp_path / "dst"), encryption=rx_mode) as r:
        s = xfer.send([str(src)], r.address, encryption=tx_mode)
    assert s["exit_code"] == 5 and message in s["error"], s
    assert not (tmp_path / "dst" / "f.bin").exists()


def test_a_receiver_that_does_not_offer_encryption(tmp_path, monkeypatch) -> None:
    """An older receiver ignores HELLO's ``enc``: the sender refuses to go on in clear."""
    monkeypatch.setattr(ReceiverConnection, "_negotiate", lambda self, hello: (None, None))
    src = tmp_path / "f.bin"
    src.write_bytes(os.urandom(1000))
    with xfer.Receiver(root=str(tmp_path / "dst")) as r:
        s = xfer.send([str(src)], r.address, encryption="on")
    assert s["exit_code"] == 5 and "does not offer encryption" in s["error"], s
    assert not (tmp_path / "dst" / "f.bin").exists()


@pytest.mark.parametrize("what", ["headers", "payloads"])
def test_a_tampered_block_is_rejected_counted_and_sent_again(tmp_path, rx, what: str) -> None:
    """The first block's offset, or its first payload byte, changed on the way: refused
    (auth_failures == 1), its connection dropped, the block re-sent; identical tree."""
    src = make_tree(str(tmp_path / "src" / "tree"), seed=7)
    tamper = Tamper(**{what: (0,)})
    with Proxy(rx.address) as proxy:
        proxy.tamper = tamper
        s = xfer.send([src], proxy.address, streams=1, block_size=256 << 10, encryption="on")
    assert tamper.events == [f"{what[:-1]} 0"], tamper.events
    assert s["exit_code"] == 0 and s["verified"], s
    assert s["receiver"]["auth_failures"] == 1 and s["bytes_resent"] > 0, s
    assert trees_equal(src, str(tmp_path / "dst" / "tree"))


def test_many_tampered_blocks_never_reach_the_disk(tmp_path, rx) -> None:
    """Two headers (an offset, a length) and two payloads changed on the way, over two
    streams: every tampered block the receiver reads is refused (a later one may sit on a
    connection already dropped, and is never read), none is taken for good, and the tree
    arrives identical."""
    src = make_tree(str(tmp_path / "src" / "tree"), seed=8)
    tamper = Tamper(headers=(0, 3), payloads=(1, 6))
    with Proxy(rx.address) as proxy:
        proxy.tamper = tamper
        s = xfer.send([src], proxy.address, streams=2, block_size=256 << 10, encryption="on")
    assert len(tamper.events) == 4, tamper.events
    assert s["exit_code"] == 0 and s["verified"], s
    assert 1 <= s["receiver"]["auth_failures"] <= 4, s
    assert s["bytes_resent"] > 0, s
    assert trees_equal(src, str(tmp_path / "dst" / "tree"))


@pytest.mark.parametrize(
    "where, frames, side",
    [
        ("up", (2,), "receiver: protocol error"),  # OPEN, the sender's first sealed frame
        ("down", (2,), "receiver broke the protocol"),  # READY
        ("down", (4,), "receiver broke the protocol"),  # an ACK or FILE_DONE mid-transfer
    ],
)
def test_a_tampered_control_frame_ends_the_session(
    tmp_path, rx, where: str, frames: tuple[int, ...], side: str
) -> None:
    src = make_tree(str(tmp_path / "src" / "tree"), seed=9)
    tamper = Tamper(**{f"{where}_frames": frames})
    with Proxy(rx.address) as proxy:
        proxy.tamper = tamper
        s = xfer.send([src], proxy.address, streams=2, block_size=256 << 10, encryption="on")
    assert tamper.events == [f"{where} {frames[0]}"], tamper.events
    assert s["exit_code"] == 5 and not s["verified"], s
    assert side in s["error"] and "failed authentication" in s["error"], s
    _written_files_are_right(src, tmp_path / "dst")
