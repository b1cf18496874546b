"""Layer 1: xfer.wire.crypto in memory: keys, nonces, tamper detection of blocks and frames."""

from __future__ import annotations

import os

import pytest

from xfer.wire.crypto import (
    TAG,
    BlockOpener,
    BlockSealer,
    FrameOpener,
    FrameSealer,
    KeyExchange,
    Tampered,
    session_keys,
)
from xfer.wire.protocol import BLOCK_HEADER, END_HEADER, FrameDecoder, Msg, ProtocolError, encode
from xfer.wire.protocol import block_header as header_of


def _pair(stream: int = 3, nonce: str = "ab12") -> tuple[BlockSealer, BlockOpener]:
    keys = session_keys(b"s" * 32, b"x" * 32, "snonce", "cnonce")
    return BlockSealer(keys.data, stream, nonce), BlockOpener(keys.data, stream, nonce)


def test_key_exchange_agrees_and_keys_differ() -> None:
    a, b = KeyExchange(), KeyExchange()
    shared = a.shared(b.public_hex)
    assert shared == b.shared(a.public_hex) and len(shared) == 32
    k1 = session_keys(b"secret", shared, "n1", "n2")
    assert len({k1.data, k1.to_receiver, k1.to_sender}) == 3
    assert session_keys(b"secret", shared, "n1", "n3").data != k1.data  # nonces bind the keys
    assert session_keys(b"other", shared, "n1", "n2").data != k1.data
    for bad in ("zz", "00" * 31, 42, None):
        with pytest.raises(ProtocolError, match="X25519"):
            a.shared(bad)


def test_blocks_round_trip_in_place_with_varying_lengths() -> None:
    sealer, opener = _pair()
    for n in (1, 4096, 100_003, 1 << 20, 17):
        plain = os.urandom(n)
        hdr = header_of(1, 5 * n, n, 0)
        buf = sealer.buffer(n)
        buf[:] = plain
        wire = bytearray(sealer.seal(hdr, buf))  # in place in the sealer's buffer
        assert len(wire) == n + TAG and bytes(wire[:n]) != plain
        got = opener.open(hdr, memoryview(wire))
        assert bytes(got) == plain
    opener.check_end(bytearray(sealer.end()[BLOCK_HEADER.size :]))


def test_nonces_never_repeat() -> None:
    """The same plaintext sealed twice on one connection, or on two connections (another
    stream id, or the same id with another DATA_HELLO nonce), never gives the same bytes."""
    plain = b"\0" * 64
    hdr = header_of(0, 0, 64, 0)
    sealer, _ = _pair(stream=1, nonce="n")
    outs = [bytes(sealer.seal(hdr, plain)) for _ in range(100)]
    outs.append(bytes(_pair(stream=2, nonce="n")[0].seal(hdr, plain)))
    outs.append(bytes(_pair(stream=1, nonce="m")[0].seal(hdr, plain)))
    assert len(set(outs)) == len(outs)
    assert sealer.counter == 100


@pytest.mark.parametrize("where", ["header", "payload", "tag"])
def test_a_flipped_bit_anywhere_is_rejected(where: str) -> None:
    sealer, opener = _pair()
    plain = os.urandom(5000)
    hdr = bytearray(header_of(2, 8192, 5000, 0))
    wire = bytearray(sealer.seal(bytes(hdr), plain))
    if where == "header":
        hdr[9] ^= 0x04  # the offset
    elif where == "payload":
        wire[1234] ^= 0x80
    else:
        wire[-1] ^= 0x01
    with pytest.raises(Tampered, match="failed authentication"):
        opener.open(hdr, memoryview(wire))


def test_wrong_key_replay_and_reorder_are_rejected() -> None:
    sealer, opener = _pair()
    hdr = header_of(0, 0, 10, 0)
    first = bytearray(sealer.seal(hdr, b"0123456789"))
    second = bytearray(sealer.seal(hdr, b"abcdefghij"))
    with pytest.raises(Tampered):  # reordered: the opener expects block 0
        opener.open(hdr, memoryview(bytearray(second)))
    _, fresh = _pair()
    assert bytes(fresh.open(hdr, memoryview(bytearray(first)))) == b"0123456789"
    with pytest.raises(Tampered):  # replayed: block 0 again where block 1 is due
        fresh.open(hdr, memoryview(bytearray(first)))
    other_keys = session_keys(b"t" * 32, b"x" * 32, "snonce", "cnonce")
    wrong = BlockOpener(other_keys.data, 3, "ab12")
    with pytest.raises(Tampered):
        wrong.open(hdr, memoryview(bytearray(second)))
    _, end_opener = _pair()
    with pytest.raises(Tampered, match="END"):
        end_opener.check_end(b"\0" * TAG)  # a forged END


def test_control_frames_sealed_through_the_decoder() -> None:
    keys = session_keys(b"k" * 32, b"x" * 32, "a", "b")
    tx, dec = FrameSealer(keys.to_receiver), FrameDecoder()
    dec.opener = FrameOpener(keys.to_receiver)
    wire = tx.seal(encode(Msg.ACK, {"ok": [[1, 2, 3]]})) + tx.seal(encode(Msg.BYE))
    assert b"ok" not in wire  # the JSON is not visible
    for b in wire:  # one byte at a time
        dec.feed(bytes([b]))
    got = [(f.msg, f.body) for f in dec.frames()]
    assert got == [(Msg.ACK, {"ok": [[1, 2, 3]]}), (Msg.BYE, {})]


@pytest.mark.parametrize("index", [0, 4, 10, -1])
def test_a_tampered_control_frame_is_rejected(index: int) -> None:
    keys = session_keys(b"k" * 32, b"x" * 32, "a", "b")
    wire = bytearray(FrameSealer(keys.to_sender).seal(encode(Msg.READY, {"have": {}})))
    wire[index] ^= 0x03 if index == 0 else 0x01  # byte 0: the type (READY -> ERROR), 4: length
    dec = FrameDecoder()
    dec.opener = FrameOpener(keys.to_sender)
    dec.feed(bytes(wire) + bytes(64))  # more bytes, so that a shorter length still frames
    with pytest.raises(Tampered):
        list(dec.frames())


def test_a_longer_control_length_never_yields_a_frame() -> None:
    keys = session_keys(b"k" * 32, b"x" * 32, "a", "b")
    wire = bytearray(FrameSealer(keys.to_sender).seal(encode(Msg.READY, {"have": {}})))
    wire[3] ^= 0x01  # length + 256: the decoder waits for bytes that never come
    dec = FrameDecoder()
    dec.opener = FrameOpener(keys.to_sender)
    dec.feed(bytes(wire))
    assert list(dec.frames()) == []


def test_control_frames_of_the_other_direction_do_not_open() -> None:
    keys = session_keys(b"k" * 32, b"x" * 32, "a", "b")
    wire = FrameSealer(keys.to_sender).seal(encode(Msg.BYE))
    dec = FrameDecoder()
    dec.opener = FrameOpener(keys.to_receiver)
    dec.feed(wire)
    with pytest.raises(Tampered):
        list(dec.frames())


def test_end_header_layout() -> None:
    sealer, _ = _pair()
    end = sealer.end()
    assert end[: BLOCK_HEADER.size] == END_HEADER and len(end) == BLOCK_HEADER.size + TAG
