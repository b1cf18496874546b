"""Layer 1: a SenderConnection and a ReceiverConnection joined in memory, no sockets.

Whole sessions: the handshake with and without a token (and a wrong one), the encrypted
handshake (every frame after WELCOME sealed), the manifest, resume with KEEP, a data stream
that dies with a block on it, acks, FILE_DONE, BYE and the summary.
"""

from __future__ import annotations

from typing import Any

import pytest

from xfer.errors import ErrorCode, Exit, RemoteError, XferError
from xfer.manifest import DIR, FILE, Entry
from xfer.wire.connection import (
    Acked,
    Bye,
    FilesDone,
    Kept,
    ManifestDone,
    PeerError,
    Ready,
    ReceiverConnection,
    SenderConnection,
    Summary,
    Welcomed,
)
from xfer.wire.crypto import Tampered
from xfer.wire.protocol import FrameDecoder, Msg, ProtocolError, block_header, proof
from xfer.wire.session import BlockScheduler, LocalProtocolError, State, file_extents

TOKEN = b"s3cret"
KiB = 1 << 10


def deliver(a: Any, b: Any, now: float = 0.0) -> list[Any]:
    """Move what ``a`` queued to ``b``; the events ``b`` makes of it."""
    b.receive_data(a.data_to_send())
    events = []
    while (event := b.next_event(now)) is not None:
        events.append(event)
    return events


def entries() -> list[Entry]:
    return [
        Entry(0, DIR, "tree", 0, 1, 0o755),
        Entry(1, FILE, "tree/a", 40 * KiB, 2, 0o644),
        Entry(2, FILE, "tree/b", 8 * KiB, 3, 0o644),
    ]


def handshake(
    tx_token: bytes | None = TOKEN, rx_token: bytes | None = TOKEN, encrypt: bool = False
) -> tuple[SenderConnection, ReceiverConnection, Welcomed]:
    tx = SenderConnection(entries(), token=tx_token, encrypt=encrypt)
    rx = ReceiverConnection(token=rx_token, now=100.0)
    tx.start()
    assert deliver(tx, rx) == []  # HELLO -> CHALLENGE
    assert deliver(rx, tx) == []  # CHALLENGE -> AUTH
    assert deliver(tx, rx) == []  # AUTH -> WELCOME
    [welcome] = deliver(rx, tx)
    assert isinstance(welcome, Welcomed)
    return tx, rx, welcome


def manifest(tx: SenderConnection, rx: ReceiverConnection) -> ManifestDone:
    tx.send_open()
    while tx.send_manifest():
        pass
    [done] = deliver(tx, rx)
    assert isinstance(done, ManifestDone)
    return done


def test_handshake_proves_the_token_both_ways_and_binds_the_streams() -> None:
    tx, rx, welcome = handshake()
    assert welcome.session == rx.session and welcome.secret == rx.secret
    assert tx.state is rx.state is State.OPEN
    nonce = "n1"
    hello = {
        "stream": 3,
        "nonce": nonce,
        "proof": proof(tx.secret, b"xfer-stream", tx.session, "3", nonce),
    }
    assert rx.stream_hello(hello) == (3, nonce)
    with pytest.raises(RemoteError, match="not bound"):
        rx.stream_hello({**hello, "stream": 4})  # a proof for another stream


def test_a_wrong_token_is_refused_by_the_receiver() -> None:
    tx = SenderConnection(entries(), token=b"guess")
    rx = ReceiverConnection(token=TOKEN)
    tx.start()
    deliver(tx, rx)
    deliver(rx, tx)
    with pytest.raises(RemoteError, match="authentication failed") as err:
        deliver(tx, rx)
    assert err.value.code == ErrorCode.AUTH
    rx.fail(err.value.code, str(err.value))  # what the adapter does with it
    [error] = deliver(rx, tx)
    assert isinstance(error, PeerError) and error.code == "auth"
    assert tx.state is rx.state is State.FAILED
    assert rx.data_to_send() == b""
    rx.fail("internal", "again")  # nothing more is said once it is over
    assert rx.data_to_send() == b""


def test_a_missing_token_and_a_receiver_without_the_token() -> None:
    tx = SenderConnection(entries(), token=None)
    rx = ReceiverConnection(token=TOKEN)
    tx.start()
    deliver(tx, rx)
    with pytest.raises(XferError, match="requires a token") as err:
        deliver(rx, tx)
    assert err.value.exit == Exit.AUTH
    # a receiver that does not know the token cannot prove it: the sender stops
    tx = SenderConnection(entries(), token=TOKEN)
    rx = ReceiverConnection(token=b"other")
    tx.start()
    deliver(tx, rx)
    deliver(rx, tx)
    with pytest.raises(RemoteError):
        deliver(tx, rx)
    tx2 = SenderConnection(entries(), token=TOKEN)
    rx2 = ReceiverConnection(token=None)  # hands the secret over; no proof in WELCOME
    tx2.start()
    deliver(tx2, rx2)
    deliver(rx2, tx2)
    deliver(tx2, rx2)
    with pytest.raises(XferError, match="failed to prove") as err:
        deliver(rx2, tx2)
    assert err.value.exit == Exit.AUTH


def test_without_a_token_the_secret_travels_in_welcome() -> None:
    tx, rx, welcome = handshake(tx_token=None, rx_token=None)
    assert welcome.secret == rx.secret and len(welcome.secret) == 32


def test_encrypted_handshake_seals_every_frame_after_welcome() -> None:
    tx, rx, welcome = handshake(encrypt=True)
    assert welcome.keys is not None and welcome.keys == rx.keys
    tx.send_open()
    wire = tx.data_to_send()
    assert b"files" not in wire  # OPEN is sealed
    plain = FrameDecoder()
    plain.feed(wire)
    with pytest.raises(ProtocolError):
        list(plain.frames())  # not JSON without the key
    rx.receive_data(wire)
    assert rx.next_event(0.0) is None and rx.mode == "files"
    tampered = SenderConnection(entries(), token=TOKEN)
    tampered._sealer = tx._sealer
    tampered.machine.state = State.MANIFEST
    tampered.send_manifest()
    data = bytearray(tampered.data_to_send())
    data[-1] ^= 1
    rx.receive_data(bytes(data))
    with pytest.raises(Tampered):
        rx.next_event(0.0)


def test_a_receiver_that_does_not_offer_encryption_is_refused() -> None:
    tx = SenderConnection(entries(), token=TOKEN, encrypt=True)
    rx = ReceiverConnection(token=TOKEN)
    rx._negotiate = lambda hello: (None, None)  # type: ignore[method-assign]  # an older xfer
    tx.start()
    deliver(tx, rx)
    with pytest.raises(XferError, match="does not offer encryption"):
        deliver(rx, tx)
    refusing = ReceiverConnection(encryption="off")
    tx = SenderConnection(entries(), encrypt=True)
    tx.start()
    with pytest.raises(RemoteError, match="encryption off"):
        deliver(tx, refusing)


def test_out_of_order_messages_both_ways() -> None:
    tx, rx, _ = handshake()
    with pytest.raises(LocalProtocolError):
        tx.send_bye()  # our own move, out of order: our bug
    tx.send_open()
    tx.send_manifest()
    deliver(tx, rx)
    tx.machine.state = State.ACTIVE  # a sender that skips MANIFEST_END
    tx.send_bye()
    with pytest.raises(ProtocolError, match="BYE not allowed in state manifest"):
        deliver(tx, rx)


def _stream(tx: SenderConnection, rx: ReceiverConnection, sid: int) -> None:
    """Open data connection ``sid`` as the pool and the receiver do (DATA_HELLO, its proof)."""
    wire, _sealer = tx.data_hello(sid)
    dec = FrameDecoder()
    dec.feed(wire)
    [hello] = dec.frames()
    assert hello.msg is Msg.DATA_HELLO and hello.body["session"] == rx.session
    stream, nonce = rx.stream_hello(hello.body)
    rx.accept_stream(stream, nonce, open_now=0, limit=4)


def test_a_whole_session_with_resume_keep_a_dead_stream_acks_and_summary() -> None:
    """A rerun: file 2 was done before; of file 1 the receiver journaled two ranges, one of
    which no longer matches the sender's file (its hash differs). KEEP drops it; the rest is
    sent on two streams, one of which dies holding a block (re-queued, sent on the other);
    one block fails its checksum (sent again); then BYE and SUMMARY."""
    tx, rx, _ = handshake()
    done = manifest(tx, rx)
    assert [e.path for e in done.entries] == ["tree", "tree/a", "tree/b"]
    with pytest.raises(RemoteError, match="not active"):
        _stream(tx, rx, 0)  # no data connection before READY and KEEP
    rx.send_ready(done=[2], ranges={1: [(0, 8 * KiB, 11), (8 * KiB, 8 * KiB, 22)]})
    [ready] = deliver(rx, tx)
    assert isinstance(ready, Ready) and ready.done == [2] and ready.max_block == 16 << 20
    assert ready.have == {1: [[0, 8 * KiB, 11], [8 * KiB, 8 * KiB, 22]]}
    kept = {1: [(0, 8 * KiB)]}  # the second range's hash no longer matches
    tx.send_keep(kept)
    [keep] = deliver(tx, rx)
    assert isinstance(keep, Kept) and keep.rewrite == {1: [(0, 8 * KiB, 11)]}
    assert keep.finished == [] and tx.state is rx.state is State.ACTIVE
    assert rx.book is not None and rx.book.files[1].ranges() == [(0, 8 * KiB)]

    todo = [e for e in entries() if e.id not in ready.done]
    sched = BlockScheduler(file_extents(todo, kept), block_size=16 * KiB)
    _stream(tx, rx, 0)
    _stream(tx, rx, 1)
    on_0, on_1 = sched.next(0), sched.next(1)
    assert on_0 and on_1 and (on_0.offset, on_1.offset) == (8 * KiB, 24 * KiB)
    assert rx.book.admit(1, on_1.offset, on_1.length)  # intact: written, then reported
    rx.block_ok(1, on_1.offset, on_1.length)
    assert sched.stream_lost(0) == 1  # stream 0 dies with its block
    again = sched.next(1)
    assert again is not None and again.offset == on_0.offset and again.resend
    rx.block_bad(1, again.offset, again.length)  # failed its checksum
    rx.send_acks()
    [acked] = deliver(rx, tx)
    assert isinstance(acked, Acked)
    assert acked.ok == [[1, on_1.offset, on_1.length]] and acked.bad == [
        [1, again.offset, again.length]
    ]
    for fid, off, _ln in acked.ok:
        sched.ack(fid, off)
    for fid, off, ln in acked.bad:
        sched.requeue(fid, off, ln)
    last = sched.next(1)
    assert last is not None and last.offset == on_0.offset
    assert rx.block_ok(1, last.offset, last.length) is not None  # file 1 complete: finish it
    assert not rx.book.admit(1, last.offset, last.length)  # a late copy is not written again
    rx.block_ok(1, last.offset, last.length)  # ... but acked, and counted as a duplicate
    rx.file_finished(1)
    rx.send_acks()
    acked, files = deliver(rx, tx)
    assert isinstance(acked, Acked) and isinstance(files, FilesDone) and files.ids == [1]
    for fid, off, _ln in acked.ok:
        sched.ack(fid, off)
    assert sched.done and sched.bytes_resent == 2 * 16 * KiB

    tx.send_bye()
    [bye] = deliver(tx, rx)
    assert isinstance(bye, Bye) and rx.state is State.CLOSING
    rx.send_summary(now=102.5)
    [summary] = deliver(rx, tx)
    assert isinstance(summary, Summary) and tx.state is rx.state is State.CLOSED
    assert summary.body == {
        "bytes_received": 4 * 16 * KiB,
        "bytes_verified": 2 * 16 * KiB,
        "dup_bytes": 16 * KiB,
        "blocks_bad": 1,
        "auth_failures": 0,
        "encryption": "off",
        "streams_seen": 2,
        "files_missing": [],
        "files_missing_count": 0,
        "seconds": 2.5,
    }


def test_keep_may_only_confirm_what_ready_offered() -> None:
    tx, rx, _ = handshake()
    manifest(tx, rx)
    rx.send_ready(done=[], ranges={1: [(0, 8 * KiB, 11)]})
    deliver(rx, tx)
    tx.send_keep({1: [(8 * KiB, 8 * KiB)]})
    with pytest.raises(ProtocolError, match="did not offer"):
        deliver(tx, rx)


def test_a_file_complete_with_what_was_kept_is_finished_at_keep() -> None:
    tx, rx, _ = handshake()
    manifest(tx, rx)
    rx.send_ready(done=[1], ranges={2: [(0, 8 * KiB, 5)]})
    deliver(rx, tx)
    tx.send_keep({2: [(0, 8 * KiB)]})
    [keep] = deliver(tx, rx)
    assert isinstance(keep, Kept) and [e.path for e in keep.finished] == ["tree/b"]
    assert keep.rewrite == {}


def test_encrypted_session_data_connections_seal_with_their_own_key() -> None:
    tx, rx, welcome = handshake(encrypt=True)
    manifest(tx, rx)
    rx.send_ready()
    deliver(rx, tx)
    tx.send_keep({})
    [keep] = deliver(tx, rx)
    assert isinstance(keep, Kept)
    wire, sealer = tx.data_hello(5)
    dec = FrameDecoder()
    dec.feed(wire)
    [hello] = dec.frames()
    stream, nonce = rx.stream_hello(hello.body)
    opener = rx.accept_stream(stream, nonce, open_now=0, limit=4)
    assert opener is not None and sealer is not None and welcome.keys is not None
    with pytest.raises(RemoteError, match="used before"):
        rx.accept_stream(stream, nonce, open_now=1, limit=4)  # a replayed DATA_HELLO
    data = b"x" * 100
    hdr = block_header(2, 0, len(data), 0)
    sealed = bytearray(sealer.seal(hdr, data))
    assert bytes(opener.open(hdr, memoryview(sealed))) == data
    rx.block_ok(2, 0, 100)
    rx.send_acks()
    [acked] = deliver(rx, tx)  # the acks are sealed too
    assert isinstance(acked, Acked) and acked.ok == [[2, 0, 100]]


def test_memory_mode_has_no_keep() -> None:
    tx = SenderConnection([], mem=True)
    rx = ReceiverConnection()
    tx.start()
    deliver(tx, rx)
    deliver(rx, tx)
    deliver(tx, rx)
    deliver(rx, tx)
    done = manifest(tx, rx)
    assert done.mode == "mem" and done.entries == []
    rx.send_ready()
    [ready] = deliver(rx, tx)
    assert isinstance(ready, Ready) and tx.state is rx.state is State.ACTIVE
    with pytest.raises(LocalProtocolError):
        tx.send_keep({})
    rx.accept_stream(0, "n", open_now=0, limit=1)
    assert rx.block_ok(0, 0, 1 << 20) is None
    tx.send_bye()
    deliver(tx, rx)
    rx.send_summary(now=101.0)
    acked, summary = deliver(rx, tx)
    assert isinstance(acked, Acked) and isinstance(summary, Summary)
    assert summary.body["bytes_verified"] == summary.body["bytes_received"] == 1 << 20


def test_manifest_limits_and_ids() -> None:
    tx, _, _ = handshake()
    rx = ReceiverConnection(token=TOKEN, max_files=2)
    rx.machine.state = State.OPEN
    tx.send_open()
    while tx.send_manifest():
        pass
    with pytest.raises(RemoteError, match="exceeds 2 entries") as err:
        deliver(tx, rx)
    assert err.value.code == ErrorCode.LIMIT


def test_the_peer_s_error_is_an_event() -> None:
    tx, rx, _ = handshake()
    rx.fail(ErrorCode.IO, "disk full")
    [error] = deliver(rx, tx)
    assert error == PeerError("io", "disk full") and tx.state is State.FAILED


def test_a_copy_arriving_while_its_twin_is_written_is_counted_not_acked() -> None:
    tx, rx, _ = handshake()
    manifest(tx, rx)
    rx.send_ready()
    deliver(rx, tx)
    tx.send_keep({})
    deliver(tx, rx)
    rx.block_twin(2, 0, 8 * KiB)  # the endgame copy: its twin is being written
    rx.send_acks()
    assert rx.data_to_send() == b""  # nothing to ack yet: the twin's ack covers both
    assert rx.block_ok(2, 0, 8 * KiB) is not None  # the twin: file 2 complete
    rx.send_acks()
    [acked] = deliver(rx, tx)
    assert isinstance(acked, Acked) and acked.ok == [[2, 0, 8 * KiB]]
    assert rx.book is not None and rx.book.dup_bytes == 8 * KiB
    assert rx.counters.bytes_received == 16 * KiB
