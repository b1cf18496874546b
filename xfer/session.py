"""Session state, sans-IO: the control state machines of both roles (as tables), the
sender's block scheduler and the receiver's book of verified blocks.

Nothing here touches a socket, a file or the clock; the adapters in ``sender.py`` and
``receiver.py`` feed events in and carry the results out, and the tests drive both ends in
memory.
"""

from __future__ import annotations

import bisect
import enum
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from xfer.manifest import FILE, Entry
from xfer.protocol import Msg, ProtocolError


class State(enum.Enum):
    """States of a control connection (the same names on both sides)."""

    HELLO = "hello"  # waiting for HELLO (receiver) / CHALLENGE (sender)
    AUTH = "auth"  # waiting for AUTH (receiver) / WELCOME (sender)
    OPEN = "open"  # waiting for OPEN
    MANIFEST = "manifest"  # receiving MANIFEST batches until MANIFEST_END / waiting for READY
    ACTIVE = "active"  # blocks flow; ACK / FILE_DONE go back
    CLOSING = "closing"  # BYE sent / received, SUMMARY pending
    CLOSED = "closed"  # terminal: finished cleanly
    FAILED = "failed"  # terminal: an ERROR was sent or received


RECEIVER_TABLE: dict[tuple[State, Msg], State] = {
    (State.HELLO, Msg.HELLO): State.AUTH,
    (State.AUTH, Msg.AUTH): State.OPEN,
    (State.OPEN, Msg.OPEN): State.MANIFEST,
    (State.MANIFEST, Msg.MANIFEST): State.MANIFEST,
    (State.MANIFEST, Msg.MANIFEST_END): State.ACTIVE,
    (State.ACTIVE, Msg.KEEP): State.ACTIVE,
    (State.ACTIVE, Msg.BYE): State.CLOSED,
}
"""What the receiver accepts from the sender in each state, and the state that follows.
An ERROR from the peer moves any state to FAILED; anything else is out of order."""

SENDER_TABLE: dict[tuple[State, Msg], State] = {
    (State.HELLO, Msg.CHALLENGE): State.AUTH,
    (State.AUTH, Msg.WELCOME): State.MANIFEST,
    (State.MANIFEST, Msg.READY): State.ACTIVE,
    (State.ACTIVE, Msg.ACK): State.ACTIVE,
    (State.ACTIVE, Msg.FILE_DONE): State.ACTIVE,
    (State.CLOSING, Msg.ACK): State.CLOSING,
    (State.CLOSING, Msg.FILE_DONE): State.CLOSING,
    (State.CLOSING, Msg.SUMMARY): State.CLOSED,
}
"""What the sender accepts from the receiver in each state."""


@dataclass
class Machine:
    """A table-driven state machine for one side of a control connection."""

    table: dict[tuple[State, Msg], State]
    state: State = State.HELLO

    def on(self, msg: Msg) -> State:
        """Advance on a message from the peer; raise ProtocolError if it is out of order."""
        if msg is Msg.ERROR:
            self.state = State.FAILED
            return self.state
        nxt = self.table.get((self.state, msg))
        if nxt is None:
            raise ProtocolError(f"{msg.name} not allowed in state {self.state.value}")
        self.state = nxt
        return nxt

    def to(self, state: State) -> None:
        """Move on our own initiative (after sending BYE, or on a local error)."""
        self.state = state


# ------------------------------------------------------------------------ sender: blocks


@dataclass(slots=True)
class Block:
    """One block of one file (file id 0 in memory mode)."""

    file_id: int
    offset: int
    length: int
    resend: bool = False
    """True once the block has been sent before (counted in ``bytes_resent``)."""
    redundant: bool = False
    """A hedged copy of a block still in flight elsewhere (counted in ``bytes_redundant``)."""


@dataclass(slots=True)
class _InFlight:
    block: Block
    streams: set[int]
    """Streams that carry (a copy of) the block."""
    hedged: bool = False
    copies_pending: int = 0
    """Redundant copies queued but not yet handed to a stream."""


@dataclass
class BlockScheduler:
    """Hands the next block to whichever stream asks; remembers which streams hold which
    unconfirmed block; re-queues the blocks of a stream that dies or a block that failed
    verification; and (EdAR-style hedging) re-sends on another stream a copy of the blocks of
    a stalled stream. Any block may go on any stream; the receiver discards duplicates by
    offset."""

    source: Iterator[Block]
    pending: deque[Block] = field(default_factory=deque)
    inflight: dict[tuple[int, int], _InFlight] = field(default_factory=dict)
    bytes_sent: int = 0
    bytes_resent: int = 0
    bytes_redundant: int = 0
    bytes_acked: int = 0
    exhausted: bool = False

    def next(self, stream: int) -> Block | None:
        """The next block for ``stream``, or None when nothing is left to send right now."""
        blk = self._pop_pending(stream)
        if blk is None:
            if self.exhausted:
                return None
            blk = next(self.source, None)
            if blk is None:
                self.exhausted = True
                return None
        key = (blk.file_id, blk.offset)
        fl = self.inflight.get(key)
        if fl is None:
            self.inflight[key] = _InFlight(blk, {stream})
        else:
            fl.streams.add(stream)
        self.bytes_sent += blk.length
        if blk.redundant:
            self.bytes_redundant += blk.length
        elif blk.resend:
            self.bytes_resent += blk.length
        return blk

    def _pop_pending(self, stream: int) -> Block | None:
        for _ in range(len(self.pending)):
            blk = self.pending.popleft()
            if not blk.redundant:
                return blk
            fl = self.inflight.get((blk.file_id, blk.offset))
            if fl is None:
                continue  # confirmed meanwhile: the copy is not needed any more
            if stream in fl.streams:
                self.pending.append(blk)  # a copy must go on another stream
                continue
            fl.copies_pending -= 1
            return blk
        return None

    def ack(self, file_id: int, offset: int) -> Block | None:
        """The receiver verified this block; forget it. Unknown keys (duplicates) are fine."""
        fl = self.inflight.pop((file_id, offset), None)
        if fl is None:
            return None
        self.bytes_acked += fl.block.length
        return fl.block

    def requeue(self, file_id: int, offset: int, length: int) -> None:
        """Send this range again (it failed verification, or the receiver asked for it)."""
        self.inflight.pop((file_id, offset), None)
        self.pending.append(Block(file_id, offset, length, resend=True))

    def stream_lost(self, stream: int) -> int:
        """A stream died: re-queue (first) every block only it held unconfirmed."""
        lost = 0
        for key, fl in list(self.inflight.items()):
            if stream not in fl.streams:
                continue
            fl.streams.discard(stream)
            if not fl.streams and not fl.copies_pending:
                del self.inflight[key]
                b = fl.block
                self.pending.appendleft(Block(b.file_id, b.offset, b.length, resend=True))
                lost += 1
        return lost

    def hedge(self, streams: set[int]) -> int:
        """Queue, ahead of everything, one redundant copy of each block held only by the given
        (stalled) streams, to go on other streams. Returns how many were queued."""
        n = 0
        for fl in self.inflight.values():
            if not fl.hedged and fl.streams <= streams:
                fl.hedged = True
                fl.copies_pending += 1
                b = fl.block
                self.pending.appendleft(Block(b.file_id, b.offset, b.length, redundant=True))
                n += 1
        return n

    def stop_source(self) -> None:
        """No new blocks from the source (memory mode deadline reached)."""
        self.exhausted = True

    @property
    def idle(self) -> bool:
        """Nothing pending and nothing left in the source (blocks may still be in flight)."""
        return self.exhausted and not any(
            not b.redundant or (b.file_id, b.offset) in self.inflight for b in self.pending
        )

    @property
    def done(self) -> bool:
        """Every block sent and confirmed."""
        return self.exhausted and not self.inflight and self.idle


def file_blocks(
    entries: Iterable[Entry], block_size: int, have: dict[int, list[tuple[int, int]]]
) -> Iterator[Block]:
    """Blocks of every file still needed, in manifest order, skipping verified ranges."""
    from xfer.manifest import blocks_of

    for e in entries:
        if e.kind == FILE and e.size:
            for off, ln in blocks_of(e.size, block_size, have.get(e.id, ())):
                yield Block(e.id, off, ln)


def mem_blocks(total: int | None, block_size: int) -> Iterator[Block]:
    """Blocks of a memory-to-memory transfer of ``total`` bytes (None: until stopped)."""
    off = 0
    while total is None or off < total:
        n = block_size if total is None else min(block_size, total - off)
        yield Block(0, off, n)
        off += n


# ------------------------------------------------------------------- receiver: the book


@dataclass
class FileBook:
    """What the receiver holds of one file: verified ranges (non-overlapping) and their sum."""

    entry: Entry
    starts: list[int] = field(default_factory=list)
    lengths: dict[int, int] = field(default_factory=dict)
    verified: int = 0
    done: bool = False

    @property
    def complete(self) -> bool:
        return self.verified >= self.entry.size

    def add(self, offset: int, length: int) -> bool:
        """Add a verified range; False if exactly this range is already there (a duplicate).
        A range that partly overlaps another is a protocol error."""
        if self.lengths.get(offset) == length:
            return False
        i = bisect.bisect_right(self.starts, offset)
        if i and self.starts[i - 1] + self.lengths[self.starts[i - 1]] > offset:
            raise ProtocolError(
                f"block at {offset} overlaps a verified block of {self.entry.path!r}"
            )
        if i < len(self.starts) and self.starts[i] < offset + length:
            raise ProtocolError(
                f"block at {offset} overlaps a verified block of {self.entry.path!r}"
            )
        self.starts.insert(i, offset)
        self.lengths[offset] = length
        self.verified += length
        return True

    def ranges(self) -> list[tuple[int, int]]:
        return [(o, self.lengths[o]) for o in self.starts]


class Book:
    """The receiver's record of verified blocks for every file of a session."""

    def __init__(self, entries: Iterable[Entry]) -> None:
        self.files: dict[int, FileBook] = {e.id: FileBook(e) for e in entries}
        self.dup_bytes = 0
        self.bytes_verified = 0

    def check(self, file_id: int, offset: int, length: int) -> FileBook:
        """Validate a block header against the manifest (before any byte is written)."""
        fb = self.files.get(file_id)
        if fb is None or fb.entry.kind != FILE:
            raise ProtocolError(f"block for unknown file id {file_id}")
        if offset + length > fb.entry.size:
            raise ProtocolError(
                f"block [{offset}, +{length}) beyond the end of {fb.entry.path!r} "
                f"({fb.entry.size} bytes)"
            )
        return fb

    def preload(self, file_id: int, offset: int, length: int) -> None:
        """Mark a range verified by an earlier session (from the journal)."""
        self.files[file_id].add(offset, length)

    def keep(self, file_id: int, ranges: Iterable[tuple[int, int]]) -> None:
        """The sender confirmed only ``ranges`` of the preloaded ones (its file changed since
        the others were written): forget the rest, so they are received again and can never
        complete the file with stale bytes."""
        fb = self.files[file_id]
        fb.starts, fb.lengths, fb.verified = [], {}, 0
        for off, ln in sorted(ranges):
            fb.add(off, ln)

    def verified(self, file_id: int, offset: int, length: int) -> tuple[bool, bool]:
        """Record a verified block. Returns ``(new, file_now_complete)``; a duplicate (an
        offset already verified) returns ``(False, False)`` and is counted in dup_bytes."""
        fb = self.files[file_id]
        if not fb.add(offset, length):
            self.dup_bytes += length
            return False, False
        self.bytes_verified += length
        return True, fb.complete and not fb.done

    def unfinished(self) -> list[Entry]:
        """Files not yet complete and renamed into place."""
        return [fb.entry for fb in self.files.values() if fb.entry.kind == FILE and not fb.done]
