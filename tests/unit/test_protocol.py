"""Layer 1: the sans-IO protocol, state machines, scheduler and book, all in memory."""

from __future__ import annotations

import random

import pytest
import xxhash

from xfer.manifest import Entry, check_relpath, entry_from_wire
from xfer.wire.protocol import (
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
from xfer.wire.session import (
    COPY_AGE_S,
    MEM_TABLE,
    TABLE,
    BlockScheduler,
    BlockSizing,
    Book,
    LocalProtocolError,
    Machine,
    State,
    file_extents,
    mem_extents,
    needed_bytes,
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
    rx = Machine(sender=False)
    with pytest.raises(ProtocolError, match="MANIFEST not allowed in state hello"):
        rx.on(Msg.MANIFEST)
    rx.on(Msg.HELLO)
    with pytest.raises(LocalProtocolError, match="cannot send WELCOME in state challenge"):
        rx.send(Msg.WELCOME)  # our own moves go through the table too
    with pytest.raises(ProtocolError, match="CHALLENGE not allowed"):
        rx.on(Msg.CHALLENGE)  # the peer sending one of our messages
    rx.send(Msg.CHALLENGE)
    rx.on(Msg.AUTH)
    rx.send(Msg.WELCOME)
    for msg in (Msg.OPEN, Msg.MANIFEST, Msg.MANIFEST, Msg.MANIFEST_END):
        rx.on(msg)
    assert rx.state is State.READY
    rx.send(Msg.READY)
    assert rx.on(Msg.KEEP) is State.ACTIVE
    assert rx.send(Msg.ACK) is State.ACTIVE
    assert rx.on(Msg.BYE) is State.CLOSING
    assert rx.send(Msg.SUMMARY) is State.CLOSED
    tx = Machine(sender=True)
    assert tx.on(Msg.ERROR) is State.FAILED
    with pytest.raises(ProtocolError):
        tx.on(Msg.ERROR)  # terminal


def test_every_state_is_reachable_and_used() -> None:
    for table in (TABLE, MEM_TABLE):
        used = {s for s, _ in table} | set(table.values())
        assert used | {State.FAILED} <= set(State)
    assert ({s for s, _ in TABLE} | set(TABLE.values()) | {State.FAILED}) == set(State)
    assert (State.KEEP, Msg.KEEP) not in MEM_TABLE


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


def test_extents_skip_verified_ranges_and_the_scheduler_cuts_them() -> None:
    e = Entry(0, "f", "x", 10, 0, 0o644)

    def cut(have: list[tuple[int, int]]) -> list[tuple[int, int]]:
        sched = BlockScheduler(file_extents([e], {0: have}), block_size=4)
        out = []
        while (b := sched.next(0)) is not None:
            out.append((b.offset, b.length))
        return out

    assert cut([]) == [(0, 4), (4, 4), (8, 2)]
    assert cut([(4, 4)]) == [(0, 4), (8, 2)]
    assert cut([(0, 10)]) == []
    assert cut([(1, 2), (6, 1)]) == [(0, 1), (3, 3), (7, 3)]
    assert needed_bytes([e], {0: [(1, 2), (6, 1)]}) == 7
    assert list(file_extents([Entry(0, "f", "x", 0, 0, 0o644)], {})) == []


def test_scheduler_requeues_blocks_of_a_dead_stream() -> None:
    sched = BlockScheduler(mem_extents(10 * 4), block_size=4)
    a, b, c = sched.next(1), sched.next(2), sched.next(1)
    assert a and b and c
    sched.ack(a.file_id, a.offset)
    assert sched.stream_lost(1) == 1  # c was unconfirmed
    again = sched.next(2)
    assert again is not None and again.offset == c.offset and again.resend
    assert sched.bytes_resent == 4


def test_scheduler_records_when_its_drain_began() -> None:
    # the drain begins with the call that cuts the last block, not at the sender's next poll
    sched = BlockScheduler(mem_extents(3 * 4), block_size=4)
    a, b = sched.next(1, now=1.0), sched.next(2, now=2.0)
    assert a and b and sched.drain_since is None and not sched.draining
    c = sched.next(1, now=3.0)
    assert c and sched.draining and sched.drain_since == 3.0
    sched.ack(c.file_id, c.offset)
    assert sched.next(1, now=4.0) is None and sched.drain_since == 3.0  # the first, kept


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


def test_book_admit_reads_safely_while_the_control_side_records() -> None:
    """Stream threads ask ``admit`` while the control side records blocks (no lock): a free
    range must never be read as overlapping one that is being inserted before it."""
    import sys
    import threading

    n = 20000
    book = Book([Entry(0, "f", "x", 2 * n * 4096, 0, 0o644)])
    slots = list(range(0, 2 * n, 2))
    random.Random(5).shuffle(slots)
    errors: list[Exception] = []
    stop = threading.Event()

    def reader() -> None:
        rng = random.Random(6)
        try:
            while not stop.is_set():
                odd = 2 * rng.randrange(n) + 1  # never recorded: always admitted
                assert book.admit(0, odd * 4096, 4096)
        except Exception as exc:  # reported below
            errors.append(exc)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    t = threading.Thread(target=reader)
    t.start()
    try:
        for s in slots:
            book.verified(0, s * 4096, 4096)
    finally:
        stop.set()
        t.join()
        sys.setswitchinterval(old)
    assert not errors, errors[0]


def test_in_memory_transfer_with_stream_deaths_loses_and_duplicates_nothing() -> None:
    """Both ends joined in memory: random streams die, their blocks are re-sent, the receiver
    discards duplicates by offset, and every byte of every file is verified exactly once."""
    rng = random.Random(3)
    data = {i: rng.randbytes(rng.choice([0, 1, 100, 5000, 12345])) for i in range(20)}
    entries = [Entry(i, "f", f"f{i}", len(d), 0, 0o644) for i, d in data.items()]
    sched = BlockScheduler(file_extents(entries, {}), block_size=1000)
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
    sched = BlockScheduler(mem_extents(3 * 4), block_size=4)
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
    sched = BlockScheduler(mem_extents(4), block_size=4)
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


def test_block_sizing_follows_the_stream_and_shrinks_near_the_end() -> None:
    z = BlockSizing(min_block=256 << 10, max_block=16 << 20, mi_s=1.0, first_block=1 << 20)
    assert z.size(None, None, 4) == 1 << 20  # no rate yet
    assert z.size(125_000, None, 4) == 256 << 10  # 1 Mbit/s: one MI is below the floor
    assert z.size(5e6, None, 4) == 5_000_000 - 5_000_000 % 4096  # about one MI of 40 Mbit/s
    assert z.size(1e9, None, 4) == 16 << 20  # capped
    assert z.size(1e9, 80 << 20, 4) == 10 << 20  # at most remaining / (2 x streams)
    assert z.size(1e9, 1 << 20, 4) == 256 << 10  # the last blocks are small


def test_endgame_copies_only_late_blocks_of_other_streams() -> None:
    sched = BlockScheduler(mem_extents(3 * 4), block_size=4, endgame=True, min_age=1.0)
    a, b, c = sched.next(1, now=0.0), sched.next(2, now=1.5), sched.next(3, now=5.0)
    assert a and b and c and sched.exhausted and sched.draining
    assert sched.next(3, now=0.5) is None  # nothing is old enough yet
    sched.rates.update({1: 0.1, 2: 100.0, 3: 100.0, 4: 100.0})  # stream 1 crawls
    copy = sched.next(3, now=1.2)  # a's stream needs 40 s more, stream 3 0.08 s: copy
    assert copy is not None and copy.redundant and copy.offset == a.offset
    assert sched.next(4, now=1.2) is None  # a has two carriers; b and c are young
    late = sched.next(4, now=2.6)  # b was due at 1.5 + 0.04 s: overdue
    assert late is not None and late.offset == b.offset
    assert sched.wanted(a)
    sched.ack(0, a.offset)  # the copy arrived first: stream 1 may abandon the original
    assert not sched.wanted(a)
    for blk in (b, c):
        sched.ack(0, blk.offset)
    assert sched.done and sched.bytes_acked == 12 and sched.bytes_redundant == 8


def test_endgame_leaves_a_block_on_time_alone() -> None:
    sched = BlockScheduler(mem_extents(4), block_size=4, endgame=True, min_age=1.0)
    assert sched.next(1, now=0.0) is not None
    sched.rates.update({1: 4.0, 2: 4.0})  # one second per block on either stream
    assert sched.next(2, now=1.5) is None  # due at 1 s, overdue only after 1 + 2 s
    assert sched.next(2, now=3.5) is not None


def test_a_new_endgame_scheduler_does_not_copy_fresh_blocks() -> None:
    """Born with the copy age, not 0: before the sender's first poll sets min_age, a block
    handed out a moment ago is not copied (with 0, a transfer that ended before that poll
    sent every block twice)."""
    sched = BlockScheduler(mem_extents(2 * 4), block_size=4, endgame=True)
    assert sched.min_age == COPY_AGE_S > 0
    a, b = sched.next(1, now=0.0), sched.next(2, now=0.0)
    assert a and b and sched.draining
    assert sched.next(3, now=0.01) is None and sched.bytes_redundant == 0
    assert sched.next(3, now=COPY_AGE_S + 0.01) is not None  # unknown rate: copied when old


def test_without_endgame_an_idle_stream_waits() -> None:
    sched = BlockScheduler(mem_extents(4), block_size=4, endgame=False)
    assert sched.next(1, now=0.0) is not None
    assert sched.next(2, now=100.0) is None and sched.bytes_redundant == 0


def test_in_memory_endgame_with_variable_blocks_writes_every_byte_once() -> None:
    """Both ends in memory, blocks of random sizes, slow streams, endgame copies, stream
    deaths: every byte is verified exactly once and no block is written twice."""
    rng = random.Random(14)
    data = {i: rng.randbytes(rng.choice([1, 3000, 70000, 200000])) for i in range(12)}
    entries = [Entry(i, "f", f"f{i}", len(d), 0, 0o644) for i, d in data.items()]
    total = sum(len(d) for d in data.values())
    sched = BlockScheduler(file_extents(entries, {}), 4096, endgame=True, remaining=total)
    book = Book(entries)
    writes: dict[tuple[int, int], int] = {}
    wire: list[tuple[int, object]] = []
    now = 0.0
    while not sched.done:
        now += 0.01
        stream = rng.randrange(5)
        blk = sched.next(stream, rng.choice([512, 4096, 30000]), now)
        if blk is not None:
            wire.append((stream, blk))
        if rng.random() < 0.02:
            dead = rng.randrange(5)
            wire = [x for x in wire if x[0] != dead or rng.random() < 0.5]
            sched.stream_lost(dead)
        # stream 0 is slow: its blocks are delivered only rarely
        ready = [x for x in wire if x[0] != 0 or rng.random() < 0.02]
        if ready and (blk is None or rng.random() < 0.5):
            item = ready[rng.randrange(len(ready))]
            wire.remove(item)
            b = item[1]
            assert isinstance(b, type(blk or b))
            book.check(b.file_id, b.offset, b.length)
            new, _ = book.verified(b.file_id, b.offset, b.length)
            if new:
                writes[(b.file_id, b.offset)] = writes.get((b.file_id, b.offset), 0) + 1
            sched.ack(b.file_id, b.offset)
    assert set(writes.values()) == {1}
    assert book.bytes_verified == total and sched.remaining == 0
    assert sched.bytes_redundant > 0  # the slow stream's blocks were copied
