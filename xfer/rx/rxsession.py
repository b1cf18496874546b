"""The receiver's per-session control side, on the event loop: carries a
:class:`~xfer.wire.connection.ReceiverConnection`'s frames, prepares the files (paths, partials,
journals), applies KEEP, turns what the stream threads report into the book and the acks,
finishes files, and answers BYE with the summary. A session that fails ends alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field

from xfer.channel import Link, PeerClosed
from xfer.config import ReceiverConfig
from xfer.errors import RemoteError
from xfer.manifest import Entry
from xfer.rx.rxstream import Outcome, Report
from xfer.rx.store import Store, StoreError
from xfer.wire.connection import Bye, Kept, ManifestDone, PeerError, ReceiverConnection
from xfer.wire.protocol import ErrorCode, Frame, ProtocolError
from xfer.wire.session import State

log = logging.getLogger("xfer.receiver")

HANDSHAKE = frozenset({State.CHALLENGE, State.AUTH, State.WELCOME, State.OPEN})
"""States in which the sender has ``handshake_timeout`` to say its next word."""

ACK_EVERY_S = 0.01
"""How often the control side turns stream reports into acks."""


@dataclass
class Session:
    """One sender's session on this receiver: its connection and what the threads share."""

    conn: ReceiverConnection
    store: Store | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    """Guards ``error`` and ``data_socks`` (taken when a connection starts or ends, never per
    block)."""
    error: tuple[str, str] | None = None
    data_socks: set[socket.socket] = field(default_factory=set)
    inbox: deque[Report] = field(default_factory=deque)
    """What the stream threads report, block by block, for the control side."""
    writing: dict[tuple[int, int], int] = field(default_factory=dict)
    """Blocks being written now, and by which stream (see :class:`xfer.rx.rxstream.Stream`)."""
    ready: bool = False
    """READY was sent (and KEEP applied): data connections are accepted from now on."""
    ready_event: asyncio.Event = field(default_factory=asyncio.Event)
    """Set with ``ready``; a data connection that arrives a little early waits for it."""
    claimed: frozenset[str] = frozenset()
    """Paths this session holds against concurrent writers (released when it ends)."""
    finishing: set[asyncio.Task[None]] = field(default_factory=set)
    """Files being made durable and renamed into place."""

    @property
    def id(self) -> str:
        return self.conn.session

    def fail(self, code: str, message: str) -> None:
        with self.lock:
            if self.error is None:
                self.error = (code, message)

    def stream_ended(self, sock: socket.socket) -> None:
        with self.lock:
            self.data_socks.discard(sock)

    def shutdown_streams(self) -> None:
        with self.lock:
            socks = list(self.data_socks)
        for sock in socks:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


class Claims:
    """Paths being written by some session: two sessions never write one path."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._paths: set[str] = set()

    def claim(self, s: Session, paths: frozenset[str]) -> None:
        with self._lock:  # check and claim at once
            busy = paths & self._paths
            if busy:
                raise RemoteError(
                    ErrorCode.LIMIT,
                    f"{sorted(busy)[0]!r} is being written by "
                    "another session; re-run once it has ended",
                )
            self._paths |= paths
            s.claimed = paths

    def release(self, s: Session) -> None:
        with self._lock:
            self._paths -= s.claimed
            s.claimed = frozenset()


class Control:
    """Runs one session's control connection from HELLO to SUMMARY (or an ERROR)."""

    def __init__(self, cfg: ReceiverConfig, s: Session, link: Link, claims: Claims) -> None:
        self.cfg = cfg
        self.s = s
        self.conn = s.conn
        self.link = link
        self.claims = claims

    async def run(self, hello: Frame) -> None:
        """The session; errors are reported to the sender and end it."""
        try:
            await self._session(hello)
        except RemoteError as exc:
            log.warning("session %s ended (%s): %s", self.s.id[:8], exc.code, exc)
            await self._error(exc.code, str(exc))
        except ProtocolError as exc:
            log.warning("session %s: remote protocol error: %s", self.s.id[:8], exc)
            await self._error(ErrorCode.PROTOCOL, f"protocol error: {exc}")
        except StoreError as exc:
            log.warning("session %s: %s", self.s.id[:8], exc)
            await self._error(exc.code, str(exc))
        except (PeerClosed, ConnectionError, TimeoutError) as exc:
            log.info("session %s: sender gone: %s", self.s.id[:8], exc)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # our bug: say so to the sender, keep serving the others
            log.exception("session %s: internal error", self.s.id[:8])
            await self._error(ErrorCode.INTERNAL, f"receiver internal error: {exc!r}")

    async def _error(self, code: str, message: str) -> None:
        self.conn.fail(code, message)
        with contextlib.suppress(OSError):
            await self.link.flush()

    async def _session(self, hello: Frame) -> None:
        s, conn, link = self.s, self.conn, self.link
        conn.receive(hello, time.monotonic())
        await link.flush()
        while not s.ready:
            event = await link.next_event(self._timeout)
            if isinstance(event, PeerError):
                return
            if isinstance(event, ManifestDone) and event.mode == "mem":
                conn.send_ready()
                self._ready()
            elif isinstance(event, ManifestDone):
                await asyncio.to_thread(self._prepare, event.entries)
            elif isinstance(event, Kept):
                await asyncio.to_thread(self._keep, event)
                self._ready()
            await link.flush()
        await self._active()

    def _timeout(self) -> float:
        cfg = self.cfg
        return cfg.handshake_timeout if self.conn.state in HANDSHAKE else cfg.stall_timeout

    def _ready(self) -> None:
        self.s.ready = True
        self.s.ready_event.set()

    def _prepare(self, entries: list[Entry]) -> None:
        """Check and claim every path, open partials, read journals, send READY (a worker
        thread; the control task waits for it)."""
        s, cfg = self.s, self.cfg
        self.claims.claim(s, frozenset(e.path for e in entries))
        s.store = store = Store(cfg.root, fsync=cfg.fsync, max_open=cfg.max_open_files)
        store.check_paths(entries)
        done: list[int] = []
        ranges: dict[int, list[tuple[int, int, int]]] = {}
        for e in entries:
            complete, recs = store.prepare(e)
            if complete:
                done.append(e.id)
            elif recs:
                ranges[e.id] = recs
        self.conn.send_ready(done, ranges)

    def _keep(self, kept: Kept) -> None:
        """Bring the disk in line with KEEP: stale journal records go, files complete with
        what was kept are finished (a worker thread)."""
        store = self.s.store
        assert store is not None
        for fid, recs in kept.rewrite.items():
            store.rewrite_journal(self.conn.entries[fid], recs)
        for entry in kept.finished:
            store.finalize(entry)
            self.conn.file_finished(entry.id)

    async def _active(self) -> None:
        """Blocks flow: acks every 10 ms, the journal synced every second, until BYE."""
        s, cfg = self.s, self.cfg
        recv_task = asyncio.ensure_future(self.link.next_event())
        last_sync = idle_since = time.monotonic()
        try:
            while True:
                done, _ = await asyncio.wait({recv_task}, timeout=ACK_EVERY_S)
                await self._acks()
                now = time.monotonic()
                if s.data_socks:
                    idle_since = now
                elif now - idle_since > cfg.stall_timeout and not done:
                    raise RemoteError(
                        ErrorCode.TIMEOUT,
                        f"no data connection and no control message for "
                        f"{cfg.stall_timeout:g} s: the sender is gone; session ended, "
                        "verified data kept (re-run to resume)",
                    )
                if now - last_sync >= cfg.sync_interval and s.store:
                    await asyncio.to_thread(s.store.sync)
                    last_sync = time.monotonic()
                if done:
                    event = recv_task.result()
                    if isinstance(event, Bye):
                        await self._finish()
                    return  # Bye, or the sender's ERROR (the table allows nothing else)
        finally:
            recv_task.cancel()

    async def _acks(self) -> None:
        """Turn the streams' reports into the book and acks; send them."""
        s, conn = self.s, self.conn
        while s.inbox:
            outcome, fid, off, ln = s.inbox.popleft()
            if outcome is Outcome.OK:
                entry = conn.block_ok(fid, off, ln)
                if entry is not None:
                    task = asyncio.ensure_future(self._finish_file(entry))
                    s.finishing.add(task)
                    task.add_done_callback(s.finishing.discard)
            elif outcome is Outcome.TWIN:
                conn.block_twin(fid, off, ln)
            elif outcome is Outcome.BAD:
                conn.block_bad(fid, off, ln)
            elif outcome is Outcome.TAMPERED:
                conn.block_tampered(fid, off, ln)
            else:
                conn.auth_failure()
        conn.send_acks()
        await self.link.flush()
        if s.error is not None:
            raise RemoteError(*s.error)

    async def _finish_file(self, entry: Entry) -> None:
        """Make a complete file durable and rename it into place (a worker thread), then
        FILE_DONE goes with the next acks."""
        assert self.s.store is not None
        try:
            await asyncio.to_thread(self.s.store.finalize, entry)
        except StoreError as exc:
            self.s.fail(exc.code, str(exc))
            return
        self.conn.file_finished(entry.id)

    async def _finish(self) -> None:
        """BYE: the streams end, files and directories are finished, SUMMARY goes out."""
        s = self.s
        s.shutdown_streams()  # all blocks arrived: let stream threads end
        await self._acks()
        await self.settle()
        if s.store is not None:
            await asyncio.to_thread(s.store.sync)
            await asyncio.to_thread(s.store.finish_dirs, self.conn.entries)
        await self._acks()
        self.conn.send_summary(time.monotonic())
        await self.link.flush()

    async def settle(self) -> None:
        """Wait until no file is being finished (finishing one may complete no other)."""
        while self.s.finishing:
            await asyncio.gather(*self.s.finishing, return_exceptions=True)
