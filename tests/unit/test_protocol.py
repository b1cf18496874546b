"""Layer 1: the sans-IO protocol, state machines, scheduler and book, all in memory."""

from __future__ import annotations

import random

import pytest
import xxhash

from xfer.manifest import Entry, blocks_of, check_relpath, entry_from_wire
from xfer.protocol import (
    BLOCK_HEADER,
    END_HEADER,
    MAX_BLOCK,
    BlockKind,
    FrameDecoder,
    Msg,
    ProtocolError,
    block_header,
    decode_block_header,
    encode,
)
from xfer.session import (
    RECEIVER_TABLE,
    SENDER_TABLE,
    BlockScheduler,
    Book,
    Machine,
    State,
    file_blocks,
    mem_blocks,
)


def test_frames_round_trip_byte_by_byte() -> None:
    wire = encode(Msg.HELLO, {"version": 1, "nonce": "ab"}) + encode(Msg.BYE)
    dec = FrameDecoder()
    got = []
    for b in wire:  # worst case: one byte at a time
        dec.feed(bytes([b]))
        got.extend(dec.frames())
    assert [(f.msg, f.body) for f in got] == [
        (Msg.HELLO, {"version": 1, "nonce": "ab"}),
        (Msg.BYE, {}),
    ]
    assert dec.pending == 0


@pytest.mark.parametrize(
    "wire, message",
    [
        (bytes([99, 0, 0, 0, 2]) + b"{}", "unknown control message type 99"),
        (bytes([1, 0xFF, 0, 0, 0]), "exceeds limit"),
        (bytes([1, 0, 0, 0, 3]) + b"{x}", "not valid JSON"),
        (bytes([1, 0, 0, 0, 2]) + b"[]", "must be a JSON object"),
    ],
)
def test_bad_frames_are_protocol_errors(wire: bytes, message: str) -> None:
    dec = FrameDecoder()
    dec.feed(wire)
    with pytest.raises(ProtocolError, match=message):
        list(dec.frames())


def test_block_headers() -> None:
    h = decode_block_header(block_header(7, 5 << 32, 4096, 123))
    assert (h.kind, h.file_id, h.offset, h.length, h.digest) == (
        BlockKind.BLOCK,
        7,
        5 << 32,
        4096,
        123,
    )
    assert decode_block_header(END_HEADER).kind is BlockKind.END
    with pytest.raises(ProtocolError, match="outside"):
        decode_block_header(BLOCK_HEADER.pack(1, 0, 0, MAX_BLOCK + 1, 0))
    with pytest.raises(ProtocolError, match="kind"):
        decode_block_header(BLOCK_HEADER.pack(9, 0, 0, 1, 0))


def test_machines_refuse_out_of_order_messages() -> None:
    rx = Machine(RECEIVER_TABLE)
    with pytest.raises(ProtocolError, match="MANIFEST not allowed in state hello"):
        rx.on(Msg.MANIFEST)
    for msg in (Msg.HELLO, Msg.AUTH, Msg.OPEN, Msg.MANIFEST, Msg.MANIFEST_END):
        rx.on(msg)
    assert rx.state is State.ACTIVE
    assert rx.on(Msg.BYE) is State.CLOSED
    tx = Machine(SENDER_TABLE)
    assert tx.on(Msg.ERROR) is State.FAILED


def test_every_state_is_reachable_and_used() -> None:
    for table in (RECEIVER_TABLE, SENDER_TABLE):
        used = {s for s, _ in table} | set(table.values())
        assert used <= set(State)


@pytest.mark.parametrize(
    "path", ["/etc/passwd", "../x", "a/../../x", "a//b", "./a", ".xfer/p", "", "a\x00b"]
)
def test_unsafe_paths_are_refused(path: str) -> None:
    with pytest.raises(ProtocolError):
        check_relpath(path)


def test_manifest_rows_are_validated() -> None:
    assert entry_from_wire([0, "f", "a/ü.txt", 5, 1, 0o644]).path == "a/ü.txt"
    for row in (
        [0, "f", "a", -1, 1, 0],
        [0, "x", "a", 1, 1, 0],
        [0, "d", "a", 3, 1, 0],
        "x",
        [True, "f", "a", 1, 1, 0],
    ):
        with pytest.raises(ProtocolError):
            entry_from_wire(row)


def test_blocks_skip_verified_ranges() -> None:
    assert list(blocks_of(10, 4)) == [(0, 4), (4, 4), (8, 2)]
    assert list(blocks_of(10, 4, [(4, 4)])) == [(0, 4), (8, 2)]
    assert list(blocks_of(10, 4, [(0, 10)])) == []
    assert list(blocks_of(0, 4)) == []


def test_scheduler_requeues_blocks_of_a_dead_stream() -> None:
    sched = BlockScheduler(mem_blocks(10 * 4, 4))
    a, b, c = sched.next(1), sched.next(2), sched.next(1)
    assert a and b and c
    sched.ack(a.file_id, a.offset)
    assert sched.stream_lost(1) == 1  # c was unconfirmed
    again = sched.next(2)
    assert again is not None and again.offset == c.offset and again.resend
    assert sched.bytes_resent == 4


def test_book_rejects_overlaps_and_counts_duplicates() -> None:
    e = Entry(0, "f", "x", 10, 0, 0o644)
    book = Book([e])
    assert book.verified(0, 0, 4) == (True, False)
    assert book.verified(0, 0, 4) == (False, False) and book.dup_bytes == 4
    with pytest.raises(ProtocolError, match="overlaps"):
        book.verified(0, 2, 4)
    with pytest.raises(ProtocolError, match="beyond the end"):
        book.check(0, 8, 4)
    assert book.verified(0, 4, 6) == (True, True)


def test_in_memory_transfer_with_stream_deaths_loses_and_duplicates_nothing() -> None:
    """Both ends joined in memory: random streams die, their blocks are re-sent, the receiver
    discards duplicates by offset, and every byte of every file is verified exactly once."""
    rng = random.Random(3)
    data = {i: rng.randbytes(rng.choice([0, 1, 100, 5000, 12345])) for i in range(20)}
    entries = [Entry(i, "f", f"f{i}", len(d), 0, 0o644) for i, d in data.items()]
    sched = BlockScheduler(file_blocks(entries, 1000, {}))
    book = Book(entries)
    out = {i: bytearray(len(d)) for i, d in data.items()}
    inflight: list[tuple[int, object]] = []
    while not sched.done:
        stream = rng.randrange(4)
        blk = sched.next(stream)
        if blk is not None:
            payload = data[blk.file_id][blk.offset : blk.offset + blk.length]
            inflight.append((stream, (blk, payload, xxhash.xxh3_64_intdigest(payload))))
        if rng.random() < 0.05:
            dead = rng.randrange(4)
            inflight = [x for x in inflight if x[0] != dead or rng.random() < 0.5]  # some arrived
            sched.stream_lost(dead)
        if inflight and (blk is None or rng.random() < 0.5):
            _, (b, payload, digest) = inflight.pop(rng.randrange(len(inflight)))  # type: ignore[misc]
            assert xxhash.xxh3_64_intdigest(payload) == digest
            book.check(b.file_id, b.offset, b.length)
            new, _ = book.verified(b.file_id, b.offset, b.length)
            if new:
                out[b.file_id][b.offset : b.offset + b.length] = payload
            sched.ack(b.file_id, b.offset)
    assert all(bytes(out[i]) == data[i] for i in data)
    assert all(book.files[e.id].complete for e in entries)
    assert book.bytes_verified == sum(len(d) for d in data.values())


def test_hedged_copies_go_to_other_streams_and_vanish_once_acked() -> None:
    sched = BlockScheduler(mem_blocks(3 * 4, 4))
    a, b = sched.next(1), sched.next(1)
    assert a and b
    assert sched.hedge({1}) == 2 and sched.hedge({1}) == 0  # once per block
    assert sched.next(1) is not None and sched.next(1) is None  # stream 1 gets only new data
    copy = sched.next(2)
    assert copy is not None and copy.redundant and (copy.file_id, copy.offset) in {(0, 0), (0, 4)}
    sched.ack(a.file_id, a.offset)
    sched.ack(b.file_id, b.offset)
    assert sched.next(2) is None  # the remaining copy was confirmed meanwhile: dropped
    assert sched.bytes_redundant == 4
    sched.ack(0, 8)
    assert sched.done


def test_a_hedged_block_survives_the_death_of_its_stream_until_its_copy_is_confirmed() -> None:
    sched = BlockScheduler(mem_blocks(4, 4))
    blk = sched.next(1)
    assert blk is not None and sched.hedge({1}) == 1
    assert sched.stream_lost(1) == 0  # its copy is queued: nothing to re-queue
    copy = sched.next(2)
    assert copy is not None and copy.redundant
    assert sched.stream_lost(2) == 1  # the copy's stream died too: now it is re-queued
    again = sched.next(3)
    assert again is not None and again.resend and not again.redundant
    sched.ack(0, 0)
    assert sched.next(3) is None and sched.done
