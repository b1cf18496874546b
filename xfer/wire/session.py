"""Session state, sans-IO: the control state machines of both roles (as tables), the
sender's block scheduler and the receiver's book of verified blocks.

Nothing here touches a socket, a file or the clock; the adapters in ``xfer/tx/sender.py`` and
``xfer/rx/receiver.py`` feed events in and carry the results out, and the tests drive both ends in
memory.
"""

from __future__ import annotations

import bisect
import enum
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from xfer.manifest import FILE, Entry
from xfer.wire.protocol import Msg, ProtocolError


class State(enum.Enum):
    """States of a control connection: where the conversation is, the same on both sides."""

    HELLO = "hello"  # nothing said yet: the sender's HELLO is next
    CHALLENGE = "challenge"  # the receiver's CHALLENGE is next
    AUTH = "auth"  # the sender's AUTH is next
    WELCOME = "welcome"  # the receiver's WELCOME is next
    OPEN = "open"  # the sender's OPEN is next
    MANIFEST = "manifest"  # MANIFEST batches until MANIFEST_END
    READY = "ready"  # the receiver's READY is next
    KEEP = "keep"  # the sender's KEEP is next (files mode; memory mode has nothing to resume)
    ACTIVE = "active"  # blocks flow; ACK / FILE_DONE go back
    CLOSING = "closing"  # BYE said, SUMMARY pending (the last ACK / FILE_DONE may come first)
    CLOSED = "closed"  # terminal: finished cleanly
    FAILED = "failed"  # terminal: an ERROR was sent or received


SENT_BY_SENDER = frozenset(
    {Msg.HELLO, Msg.AUTH, Msg.OPEN, Msg.MANIFEST, Msg.MANIFEST_END, Msg.KEEP, Msg.BYE}
)
"""Control messages only the sender sends; the others (but ERROR, either side's) are the
receiver's."""

TABLE: dict[tuple[State, Msg], State] = {
    (State.HELLO, Msg.HELLO): State.CHALLENGE,
    (State.CHALLENGE, Msg.CHALLENGE): State.AUTH,
    (State.AUTH, Msg.AUTH): State.WELCOME,
    (State.WELCOME, Msg.WELCOME): State.OPEN,
    (State.OPEN, Msg.OPEN): State.MANIFEST,
    (State.MANIFEST, Msg.MANIFEST): State.MANIFEST,
    (State.MANIFEST, Msg.MANIFEST_END): State.READY,
    (State.READY, Msg.READY): State.KEEP,
    (State.KEEP, Msg.KEEP): State.ACTIVE,
    (State.ACTIVE, Msg.ACK): State.ACTIVE,
    (State.ACTIVE, Msg.FILE_DONE): State.ACTIVE,
    (State.ACTIVE, Msg.BYE): State.CLOSING,
    (State.CLOSING, Msg.ACK): State.CLOSING,
    (State.CLOSING, Msg.FILE_DONE): State.CLOSING,
    (State.CLOSING, Msg.SUMMARY): State.CLOSED,
}
"""The conversation of a files session: (state, message) -> next state, for the messages of
both sides (each message has one sender, :data:`SENT_BY_SENDER`). Both ends run it, each
checking the peer's messages and its own. An ERROR, sent or received, moves any state but a
terminal one to FAILED; anything else not listed is out of order."""

MEM_TABLE: dict[tuple[State, Msg], State] = {
    **{k: v for k, v in TABLE.items() if k[1] is not Msg.KEEP},
    (State.READY, Msg.READY): State.ACTIVE,
}
"""The conversation of a memory session: no KEEP (nothing is journaled, nothing resumes).
Both ends switch to it when OPEN says ``mode: mem``."""

TERMINAL = frozenset({State.CLOSED, State.FAILED})


class LocalProtocolError(Exception):
    """We tried to send a message the table does not allow now: a bug in xfer, not the peer's
    fault."""


@dataclass
class Machine:
    """One side's view of a control connection, driven by :data:`TABLE` in both directions:
    :meth:`on` for what the peer sent, :meth:`send` for what we are about to send."""

    sender: bool
    """True on the sending side (it may send :data:`SENT_BY_SENDER`), False on the receiver."""
    table: dict[tuple[State, Msg], State] = field(default_factory=lambda: TABLE)
    state: State = State.HELLO

    def ours(self, msg: Msg) -> bool:
        return msg is Msg.ERROR or (msg in SENT_BY_SENDER) == self.sender

    def on(self, msg: Msg) -> State:
        """Advance on a message from the peer; ProtocolError if it is out of order or one only
        we may send."""
        return self._step(msg, peer=True)

    def send(self, msg: Msg) -> State:
        """Advance on a message we send; LocalProtocolError (our bug) if the table does not
        allow it now."""
        return self._step(msg, peer=False)

    def _step(self, msg: Msg, peer: bool) -> State:
        if msg is Msg.ERROR and self.state not in TERMINAL:
            self.state = State.FAILED
            return self.state
        nxt = self.table.get((self.state, msg))
        if nxt is None or self.ours(msg) == peer:
            if peer:
                raise ProtocolError(f"{msg.name} not allowed in state {self.state.value}")
            raise LocalProtocolError(f"cannot send {msg.name} in state {self.state.value}")
        self.state = nxt
        return nxt

    def memory_mode(self) -> None:
        """OPEN said ``mode: mem``: no KEEP in this conversation."""
        self.table = MEM_TABLE


# ------------------------------------------------------------------------ sender: blocks


@dataclass(slots=True)
class Block:
    """One block of one file (file id 0 in memory mode). The source yields *extents* in this
    shape too (a whole gap of a file, any length), which the scheduler cuts into blocks."""

    file_id: int
    offset: int
    length: int
    resend: bool = False
    """True once the block has been sent before (counted in ``bytes_resent``)."""
    redundant: bool = False
    """A copy of a block still in flight elsewhere (hedge or endgame; counted in
    ``bytes_redundant``)."""


@dataclass(frozen=True, slots=True)
class BlockSizing:
    """How large a stream's next block is: about what the stream moves in one MI, within
    bounds, and never more than a small share of what is left, so the last blocks of a
    transfer are small and no single block can hold the end for long."""

    min_block: int = 128 << 10
    max_block: int = 4 << 20
    mi_s: float = 1.0
    first_block: int = 1 << 20
    """Size before the stream has a delivery-rate estimate."""
    tail_share: int = 2
    """Near the end a block is at most ``remaining / (tail_share x streams)``."""

    def size(self, rate_bps: float | None, remaining: int | None, streams: int) -> int:
        """Bytes for the next block of a stream delivering ``rate_bps`` (bytes/s; None:
        unknown), with ``remaining`` bytes not yet handed out (None: unknown)."""
        want = rate_bps * self.mi_s if rate_bps else float(self.first_block)
        if remaining is not None:
            want = min(want, remaining / (self.tail_share * max(1, streams)))
        n = int(min(self.max_block, max(self.min_block, want)))
        return max(4096, n - n % 4096)


@dataclass(slots=True)
class _InFlight:
    block: Block
    streams: set[int]
    """Streams that carry (a copy of) the block."""
    since: float = 0.0
    """When the block was (last) handed out."""
    hedged: bool = False
    copies_pending: int = 0
    """Redundant copies queued but not yet handed to a stream."""


COPY_AGE_S = 0.2
"""The endgame copies a block only once it has been unconfirmed for this long (or 2 RTTs if
longer): healthy streams confirm within a few RTTs plus the receiver's 10 ms ack cycle, so on
a clean path nothing is sent twice."""


@dataclass
class BlockScheduler:
    """Hands the next block to whichever stream asks; remembers which streams hold which
    unconfirmed block; re-queues the blocks of a stream that dies or a block that failed
    verification; re-sends on another stream a copy of the blocks of a stalled stream
    (EdAR-style hedging); and, once nothing is left to hand out (the **endgame**, as in
    BitTorrent), gives an idle stream a copy of the oldest unconfirmed block held elsewhere,
    so one slow stream cannot hold the end of a transfer. Any block may go on any stream;
    the receiver keeps the first verified copy and drops the others by offset.

    ``source`` yields extents (any length); a stream asks for a block of a given size (see
    :class:`BlockSizing`) or of ``block_size`` bytes."""

    source: Iterator[Block]
    block_size: int = 4 << 20
    endgame: bool = False
    max_copies: int = 2
    """Streams that may carry one block at once in the endgame (the original included)."""
    min_age: float = COPY_AGE_S
    """Seconds a block must have been in flight before the endgame copies it (the sender
    keeps it at the larger of this and two RTTs, so blocks about to be confirmed are not
    copied). Never 0 by default: a scheduler born with 0 copied every block of a transfer
    that ended before the sender's first poll set it (an 11 MB loopback tree over 8 streams
    went out twice)."""
    remaining: int | None = None
    """Bytes not yet cut from the source (None: unknown, e.g. memory mode until a deadline).
    The sender keeps it current; block sizing shrinks blocks near the end from it."""
    rates: dict[int, float] = field(default_factory=dict)
    """Each stream's latest delivery rate, bytes/s (kept by the sender's streams)."""
    pending: deque[Block] = field(default_factory=deque)
    inflight: dict[tuple[int, int], _InFlight] = field(default_factory=dict)
    bytes_sent: int = 0
    bytes_resent: int = 0
    bytes_redundant: int = 0
    bytes_acked: int = 0
    exhausted: bool = False
    drain_since: float | None = None
    """The ``now`` of the first :meth:`next` that left the scheduler draining (everything
    handed out, blocks still in flight): when the transfer's drain began, recorded where it
    begins, so a drain shorter than the sender's poll is still seen."""
    _extent: Block | None = None

    def next(self, stream: int, size: int | None = None, now: float = 0.0) -> Block | None:
        """The next block for ``stream`` (about ``size`` bytes, default ``block_size``), or
        None when nothing is left to send right now."""
        blk = self._hand_out(stream, size, now)
        if self.drain_since is None and self.draining:
            self.drain_since = now
        return blk

    def _hand_out(self, stream: int, size: int | None, now: float) -> Block | None:
        blk = self._pop_pending(stream) or self._cut(size or self.block_size)
        if blk is None and self.endgame:
            blk = self._copy(stream, now)
        if blk is None:
            return None
        key = (blk.file_id, blk.offset)
        fl = self.inflight.get(key)
        if fl is None:
            self.inflight[key] = _InFlight(blk, {stream}, now)
        else:
            fl.streams.add(stream)
        self.bytes_sent += blk.length
        if blk.redundant:
            self.bytes_redundant += blk.length
        elif blk.resend:
            self.bytes_resent += blk.length
        return blk

    def _cut(self, size: int) -> Block | None:
        """The next ``size`` bytes (or less, at the end of an extent) from the source."""
        if self.exhausted:
            return None
        ext = self._extent or self._advance()
        if ext is None:
            return None
        n = min(size, ext.length)
        if ext.length > n:
            self._extent = Block(ext.file_id, ext.offset + n, ext.length - n)
        else:
            self._advance()  # look ahead: the last cut makes the scheduler exhausted at once
        if self.remaining is not None:
            self.remaining = max(0, self.remaining - n)
        return Block(ext.file_id, ext.offset, n)

    def _advance(self) -> Block | None:
        """The next non-empty extent of the source (None, and exhausted, at its end)."""
        ext = next(self.source, None)
        while ext is not None and ext.length <= 0:
            ext = next(self.source, None)
        self._extent = ext
        self.exhausted = ext is None
        return ext

    def _copy(self, stream: int, now: float) -> Block | None:
        """Endgame: a copy of the oldest unconfirmed block, out for at least ``min_age``, that
        ``stream`` does not carry, that has one carrier, and that is worth copying: its
        carrier is *overdue* (out for more than twice what the carrier needs, at its last
        rate, for it and the blocks handed to it before), or *slower* (what the carrier still
        needs is more than twice what ``stream`` needs at its own rate). A block of unknown
        rate is copied after ``min_age``."""
        if self.max_copies < 2:
            return None
        queued: dict[int, int] = {}
        for fl in self.inflight.values():  # insertion order: oldest hand-out first
            age = now - fl.since
            if age < self.min_age:
                return None  # every later block is younger still
            b = fl.block
            if len(fl.streams) != 1:
                continue  # copied already (or its stream died and a copy is queued)
            (holder,) = fl.streams
            ahead = queued[holder] = queued.get(holder, 0) + b.length
            if holder == stream or fl.copies_pending:
                continue
            if not self._worth_copying(holder, stream, ahead, b.length, age):
                continue
            return Block(b.file_id, b.offset, b.length, redundant=True)
        return None

    def _worth_copying(self, holder: int, stream: int, ahead: int, length: int, age: float) -> bool:
        rate_h = self.rates.get(holder)
        if not rate_h:
            return True
        expected = ahead / rate_h
        if age > self.min_age + 2 * expected:
            return True  # overdue: the carrier's rate collapsed after it was measured
        rate_c = self.rates.get(stream)
        return rate_c is not None and rate_c > 0 and expected - age > 2 * length / rate_c

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

    def wanted(self, blk: Block) -> bool:
        """False once the block is confirmed (or re-queued): a stream still sending it may
        abandon it."""
        return (blk.file_id, blk.offset) in self.inflight

    @property
    def draining(self) -> bool:
        """Everything has been handed out at least once: only blocks in flight (and their
        endgame copies) remain. The stream count is not changed while draining."""
        return self.idle and bool(self.inflight)

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
        self._extent = None
        self.remaining = 0

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


def file_extents(
    entries: Iterable[Entry], have: dict[int, list[tuple[int, int]]]
) -> Iterator[Block]:
    """The ranges of every file still needed (gaps between verified ranges), in manifest
    order, as extents for :class:`BlockScheduler` to cut."""
    for e in entries:
        if e.kind == FILE and e.size:
            pos = 0
            for off, ln in [*sorted(have.get(e.id, ())), (e.size, 0)]:
                if pos < off:
                    yield Block(e.id, pos, off - pos)
                pos = max(pos, off + ln)


def needed_bytes(entries: Iterable[Entry], have: dict[int, list[tuple[int, int]]]) -> int:
    """Bytes :func:`file_extents` will yield."""
    return sum(b.length for b in file_extents(entries, have))


MEM_EXTENT = 1 << 30
"""Memory mode without a size: the source yields extents of this many bytes, forever."""


def mem_extents(total: int | None) -> Iterator[Block]:
    """Extents of a memory-to-memory transfer of ``total`` bytes (None: until stopped)."""
    if total is not None:
        if total > 0:
            yield Block(0, 0, total)
        return
    off = 0
    while True:
        yield Block(0, off, MEM_EXTENT)
        off += MEM_EXTENT


# ------------------------------------------------------------------- receiver: the book


@dataclass
class FileBook:
    """What the receiver holds of one file: verified ranges (non-overlapping) and their sum."""

    entry: Entry
    starts: list[int] = field(default_factory=list)
    lengths: dict[int, int] = field(default_factory=dict)
    verified: int = 0
    done: bool = False
    version: int = 0
    """Odd while :meth:`add` changes the ranges: readers on other threads (``admit``) retry
    when it was odd or moved under them (a seqlock; one writer, no lock)."""

    @property
    def complete(self) -> bool:
        return self.verified >= self.entry.size

    def _place(self, offset: int, length: int) -> int | None:
        """Where a new range goes in ``starts``; None if exactly this range is there (a
        duplicate). A range that partly overlaps another is a protocol error."""
        if self.lengths.get(offset) == length:
            return None
        i = bisect.bisect_right(self.starts, offset)
        before = i and self.starts[i - 1] + self.lengths.get(self.starts[i - 1], 0) > offset
        after = i < len(self.starts) and self.starts[i] < offset + length
        if before or after:
            raise ProtocolError(
                f"block at {offset} overlaps a verified block of {self.entry.path!r}"
            )
        return i

    def add(self, offset: int, length: int) -> bool:
        """Add a verified range; False if exactly this range is already there (a duplicate).
        A range that partly overlaps another is a protocol error."""
        i = self._place(offset, length)
        if i is None:
            return False
        self.version += 1
        self.lengths[offset] = length
        self.starts.insert(i, offset)
        self.verified += length
        self.version += 1
        return True

    def admits(self, offset: int, length: int) -> bool:
        """:meth:`_place` from another thread than the writer's: an answer (or error) read
        while :meth:`add` moved ``starts`` under it is read again (an insert before the
        reader's index shifts the neighbours it compares with)."""
        while True:
            v = self.version
            try:
                ok = not self.done and self._place(offset, length) is not None
            except ProtocolError:
                if v & 1 or v != self.version:
                    continue
                raise
            if not v & 1 and v == self.version:
                return ok

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

    def admit(self, file_id: int, offset: int, length: int) -> bool:
        """Should a block that arrived intact be written? False for a duplicate (this range
        is verified already, or its file is done); ProtocolError if it lies outside the
        manifest or overlaps a verified range. Only reads, from the data path while the
        control side records blocks: see :meth:`FileBook.admits` (a stale "yes" costs one
        harmless rewrite; a "no" or an overlap is always true)."""
        return self.check(file_id, offset, length).admits(offset, length)

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
        """Record a verified block. Returns ``(new, file_now_complete)``; a duplicate (a range
        already verified, or any block of a finished file) returns ``(False, False)`` and is
        counted in dup_bytes. Only the control side calls it (one writer of the book)."""
        fb = self.files[file_id]
        if fb.done or not fb.add(offset, length):
            self.dup_bytes += length
            return False, False
        self.bytes_verified += length
        return True, fb.complete and not fb.done

    def unfinished(self) -> list[Entry]:
        """Files not yet complete and renamed into place."""
        return [fb.entry for fb in self.files.values() if fb.entry.kind == FILE and not fb.done]
