"""The receiver's data path alone: a stream thread over a socket pair reads, hashes and writes
blocks and reports each outcome; the book is only read (the control side updates it)."""

from __future__ import annotations

import socket
from collections import deque

import pytest
import xxhash

from xfer.manifest import FILE, Entry
from xfer.rx.rxstream import Outcome, Report, Stream
from xfer.rx.store import Store
from xfer.wire.protocol import END_HEADER, ProtocolError, block_header
from xfer.wire.session import Book


def _block(file_id: int, offset: int, data: bytes, digest: int | None = None) -> bytes:
    d = xxhash.xxh3_64_intdigest(data) if digest is None else digest
    return block_header(file_id, offset, len(data), d) + data


def _serve(tmp_path, wire: bytes, book: Book, writing: dict | None = None) -> deque[Report]:
    store = Store(str(tmp_path / "root"), fsync=False)
    for e in book.files.values():
        store.prepare(e.entry)
    a, b = socket.socketpair()
    inbox: deque[Report] = deque()
    stream = Stream(
        b, inbox, {} if writing is None else writing, book=book, store=store, checksum=True,
        max_block=1 << 20,
    )  # fmt: skip
    try:
        a.sendall(wire)
        a.shutdown(socket.SHUT_WR)
        stream.run()
    finally:
        store.sync()
        store.close()
        a.close()
        b.close()
    return inbox


def test_blocks_are_written_and_reported_and_the_book_is_not_touched(tmp_path) -> None:
    entry = Entry(0, FILE, "f", 8, 1, 0o644)
    book = Book([entry])
    wire = _block(0, 0, b"abcd") + _block(0, 4, b"efgh", digest=1) + END_HEADER
    inbox = _serve(tmp_path, wire, book)
    assert list(inbox) == [(Outcome.OK, 0, 0, 4), (Outcome.BAD, 0, 4, 4)]
    assert book.files[0].verified == 0  # only the control side records blocks
    part = next((tmp_path / "root" / ".xfer" / "partial").glob("*.part"))
    assert part.read_bytes()[:4] == b"abcd"


def test_a_verified_range_is_not_written_again_and_a_twin_is_not_written_twice(tmp_path) -> None:
    entry = Entry(0, FILE, "g", 8, 1, 0o644)
    book = Book([entry])
    book.verified(0, 0, 4)  # the control side recorded this one already
    writing = {(0, 4): 12345}  # another stream is writing this one now
    wire = _block(0, 0, b"XXXX") + _block(0, 4, b"efgh") + END_HEADER
    inbox = _serve(tmp_path, wire, book, writing)
    assert list(inbox) == [(Outcome.OK, 0, 0, 4), (Outcome.TWIN, 0, 4, 4)]
    part = next((tmp_path / "root" / ".xfer" / "partial").glob("*.part"))
    assert part.read_bytes() == b"\0" * 8  # neither was written


def test_an_overlapping_block_is_refused_before_it_is_read(tmp_path) -> None:
    entry = Entry(0, FILE, "h", 8, 1, 0o644)
    book = Book([entry])
    book.verified(0, 0, 6)
    with pytest.raises(ProtocolError, match="overlaps"):
        _serve(tmp_path, _block(0, 4, b"efgh") + END_HEADER, book)
