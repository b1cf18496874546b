"""The receiver's data path: one thread per data connection that only moves, hashes and writes
bytes. It reads a 25-byte header, ``recv_into`` the payload, checks its xxh3 (or opens it, in
an encrypted session), ``pwrite`` s it, and hands the outcome to the session's control side
through a queue; the control side alone updates the book and sends the acks. No session lock
is taken per block.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import socket
from collections import deque
from collections.abc import Callable
from dataclasses import replace

import xxhash

from xfer.channel import PeerClosed, Stalled, recv_exact
from xfer.rx.store import Store, StoreError
from xfer.wire.crypto import TAG, BlockOpener, Tampered
from xfer.wire.protocol import BLOCK_HEADER, BlockHeader, BlockKind, ErrorCode, ProtocolError
from xfer.wire.protocol import decode_block_header as decode_header
from xfer.wire.session import Book

log = logging.getLogger("xfer.receiver")


class Outcome(enum.Enum):
    """What became of one block (handed to the control side with its file id, offset and
    length)."""

    OK = "ok"  # intact: written now, or a duplicate of a block written before
    TWIN = "twin"  # intact, but a copy of it is being written now: not written twice
    BAD = "bad"  # failed its checksum
    TAMPERED = "tampered"  # failed authentication (its connection is dropped)
    AUTH_FAILURE = "auth_failure"  # a connection dropped for a block or header that failed it


Report = tuple[Outcome, int, int, int]
"""One entry of a session's inbox: outcome, file id, offset, length."""


class Stream:
    """One data connection of a session, served by :meth:`run` in its own thread."""

    def __init__(
        self,
        sock: socket.socket,
        inbox: deque[Report],
        writing: dict[tuple[int, int], int],
        *,
        book: Book | None,
        store: Store | None,
        checksum: bool,
        max_block: int,
        opener: BlockOpener | None = None,
    ) -> None:
        self.sock = sock
        self.inbox = inbox
        """Thread-safe (``deque.append``); drained by the control side every few ms."""
        self.writing = writing
        """Blocks (file id, offset) being written now by the session's streams, each by one
        (claimed with the atomic ``dict.setdefault``: no lock)."""
        self.book = book
        """Read only (:meth:`Book.admit`); None in memory mode."""
        self.store = store
        self.checksum = checksum
        self.max_block = max_block
        self.opener = opener

    def run(self) -> None:
        """Serve blocks until END; raises ProtocolError, StoreError, Tampered, PeerClosed."""
        hdr = bytearray(BLOCK_HEADER.size)
        buf = bytearray(1 << 20)
        tag = TAG if self.opener else 0
        while True:
            if not recv_exact(self.sock, memoryview(hdr)):
                raise PeerClosed("data connection closed without END")
            h = decode_header(hdr)
            if h.kind is BlockKind.END:
                if self.opener is not None:
                    self._sealed_end()
                return
            if h.length > self.max_block:
                raise ProtocolError(
                    f"block of {h.length} bytes exceeds this receiver's max_block {self.max_block}"
                )
            if len(buf) < h.length + tag:
                buf = bytearray(min(self.max_block, max(h.length, 2 * len(buf))) + tag)
            if self.opener is None:
                self._block(h, memoryview(buf)[: h.length])
            else:
                self._sealed_block(hdr, h, memoryview(buf)[: h.length + tag])

    def _block(self, h: BlockHeader, view: memoryview, received: bool = False) -> None:
        """A block in clear (or one already opened): checked against the manifest before its
        bytes are read, then hashed and written unless it is a duplicate."""
        write = self.book is not None and self.book.admit(h.file_id, h.offset, h.length)
        if not received and not recv_exact(self.sock, view):
            raise PeerClosed("connection closed inside a block")
        if self.checksum and not received and xxhash.xxh3_64_intdigest(view) != h.digest:
            self.inbox.append((Outcome.BAD, h.file_id, h.offset, h.length))
            return
        report = (Outcome.OK, h.file_id, h.offset, h.length)
        if write:
            key, me = (h.file_id, h.offset), id(self)
            if self.writing.setdefault(key, me) != me:  # its twin's ack will cover it
                report = (Outcome.TWIN, h.file_id, h.offset, h.length)
            else:
                try:
                    self._write(h, view)
                finally:
                    del self.writing[key]
        self.inbox.append(report)

    def _write(self, h: BlockHeader, view: memoryview) -> None:
        assert self.book is not None and self.store is not None
        entry = self.book.files[h.file_id].entry
        try:
            self.store.write(entry, h.offset, view)
            self.store.record(entry, h.offset, h.length, h.digest)
        except FileNotFoundError:
            pass  # its file was finished meanwhile: this was a late duplicate

    def _sealed_block(self, hdr: bytearray, h: BlockHeader, sealed: memoryview) -> None:
        """An encrypted block: read and authenticate it before anything else looks at it.
        A block that fails is reported (the sender re-queues it), never written; its
        connection is dropped (its framing cannot be trusted any more)."""
        assert self.opener is not None
        if not recv_exact(self.sock, sealed):
            raise PeerClosed("connection closed inside a block")
        try:
            plain = self.opener.open(hdr, sealed)
        except Tampered:
            self.inbox.append((Outcome.TAMPERED, h.file_id, h.offset, h.length))
            raise
        journal = self.checksum and self.book is not None  # the tag verified it; the hash
        digest = xxhash.xxh3_64_intdigest(plain) if journal else 0  # is for resume
        try:
            self._block(replace(h, digest=digest), plain, received=True)
        except ProtocolError as exc:  # the authenticated sender broke the protocol
            raise Authenticated(str(exc)) from None

    def _sealed_end(self) -> None:
        assert self.opener is not None
        tag = bytearray(TAG)
        if not recv_exact(self.sock, memoryview(tag)):
            raise PeerClosed("connection closed inside END")
        self.opener.check_end(tag)


Fail = Callable[[str, str], None]
"""Ends a session from a stream thread: ``fail(code, message)``."""

Done = Callable[[socket.socket], None]
"""Tells the session one of its data connections ended."""


class Authenticated(ProtocolError):
    """A protocol error in an authenticated block: the sender's, so the session fails."""


def serve(stream: Stream, session: str, fail: Fail, done: Done) -> None:
    """A data connection's thread: run the stream, sort out how it ended, close it."""
    try:
        stream.run()
    except Tampered as exc:  # unauthenticated bytes: drop this connection, not the session
        stream.inbox.append((Outcome.AUTH_FAILURE, 0, 0, 0))
        log.warning("session %s: %s; data connection dropped", session[:8], exc)
    except ProtocolError as exc:
        if stream.opener is not None and not isinstance(exc, Authenticated):
            stream.inbox.append((Outcome.AUTH_FAILURE, 0, 0, 0))  # a header we could not yet
            log.warning(  # authenticate: treat it as tampering
                "session %s: bad data header (%s); connection dropped", session[:8], exc
            )
        else:
            fail(ErrorCode.PROTOCOL, f"protocol error on a data connection: {exc}")
    except StoreError as exc:
        fail(exc.code, str(exc))
    except (PeerClosed, Stalled, OSError) as exc:
        log.info("session %s: data connection ended: %s", session[:8], exc)
    finally:
        done(stream.sock)
        with contextlib.suppress(OSError):
            stream.sock.close()
