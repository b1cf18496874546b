"""The sender's control side, on the event loop: carries a
:class:`~xfer.wire.connection.SenderConnection`'s frames, checks the receiver's journaled ranges
against our files (what to send again), and turns acks and FILE_DONE into the scheduler's and
the catalog's state. The MI loop (``xfer/tx/sender.py``) and the stream pool do the rest.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from xfer.addr import split_hostport
from xfer.channel import Link
from xfer.config import SenderConfig
from xfer.errors import Exit, RemoteError, XferError
from xfer.manifest import Entry
from xfer.tx.sources import mmap_digest
from xfer.wire.connection import (
    Acked,
    FilesDone,
    PeerError,
    Ready,
    SenderConnection,
    Summary,
    Welcomed,
)
from xfer.wire.session import BlockScheduler, file_extents, mem_extents, needed_bytes

E = TypeVar("E")


async def connect(address: str, timeout: float) -> socket.socket:
    """A TCP connection to the receiver's control port (non-blocking, no Nagle)."""
    host, port = split_hostport(address)
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    sock = socket.socket(infos[0][0], socket.SOCK_STREAM)
    sock.setblocking(False)
    try:
        async with asyncio.timeout(timeout):
            await loop.sock_connect(sock, infos[0][4])
    except BaseException:
        sock.close()
        raise
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


class Control:
    """The control connection of one transfer, from HELLO to the receiver's SUMMARY."""

    def __init__(self, cfg: SenderConfig) -> None:
        self.cfg = cfg
        self.entries: list[Entry] = []
        self.conn = SenderConnection([])
        """The protocol (sans-IO); replaced by :meth:`open`."""
        self.link: Link | None = None
        self.files_done: set[int] = set()
        self.changed: set[int] = set()
        """Ids of files the receiver verified whose source changed during the run: settled
        (reported, not verified), so the run can end. Disjoint from ``files_done``."""
        self.bytes_skipped = 0
        self.verify_failures: dict[tuple[int, int], int] = {}
        self.max_block = cfg.block_size
        self.remote: dict[str, Any] = {}
        """The receiver's summary."""

    @property
    def settled(self) -> int:
        """Entries verified by the receiver or found changed (each is counted once)."""
        return len(self.files_done) + len(self.changed)

    async def open(self, sock: socket.socket, entries: list[Entry]) -> BlockScheduler:
        """Handshake, manifest, READY and KEEP: a scheduler of what is left to send."""
        cfg = self.cfg
        self.entries = entries
        conn = SenderConnection(entries, token=cfg.token, encrypt=cfg.encrypt, mem=cfg.mem)
        link = self.link = Link(sock, conn)
        self.conn = conn
        conn.start()
        await link.flush()
        await self._expect(Welcomed, cfg.connect_timeout)
        conn.send_open(cfg.checksum, cfg.block_size)
        while conn.send_manifest():
            await link.flush()
        await link.flush()
        ready = await self._expect(Ready, max(60.0, cfg.stall_timeout))
        sched, kept = await asyncio.to_thread(self._scheduler, ready)
        if not cfg.mem:  # which journaled ranges still match our files (the rest is stale)
            conn.send_keep(kept)
            await link.flush()
        return sched

    async def _expect(self, kind: type[E], timeout: float | None = None) -> E:
        assert self.link is not None
        event = await self.link.next_event(timeout)
        if isinstance(event, PeerError):
            raise RemoteError(event.code, f"receiver: {event.message}")
        assert isinstance(event, kind), event  # the table allows nothing else here
        return event

    def _scheduler(self, ready: Ready) -> tuple[BlockScheduler, dict[int, list[tuple[int, int]]]]:
        """Skip what the receiver already has, after checking its hashes against ours."""
        cfg = self.cfg
        block = self.max_block = min(cfg.block_size, ready.max_block or cfg.block_size)
        if cfg.mem:
            extents = mem_extents(cfg.mem_size)
            return BlockScheduler(extents, block, cfg.endgame, remaining=cfg.mem_size), {}
        entries = self.entries
        for fid in ready.done:
            self.files_done.add(fid)
            self.bytes_skipped += entries[fid].size
        have = {fid: self._matching(entries[fid], rows) for fid, rows in ready.have.items()}
        todo = [e for e in entries if e.id not in self.files_done]
        left = needed_bytes(todo, have)
        return BlockScheduler(file_extents(todo, have), block, cfg.endgame, remaining=left), have

    def _matching(self, e: Entry, ranges: list[list[int]]) -> list[tuple[int, int]]:
        """Ranges whose hash matches our file now (a changed file is sent again, not spliced)."""
        ok = []
        try:
            fd = os.open(e.source, os.O_RDONLY)
        except OSError as exc:
            raise XferError(f"cannot read {e.source}: {exc.strerror}", Exit.LOCAL_IO) from None
        try:
            for off, ln, digest in ranges:
                if off + ln <= e.size and mmap_digest(fd, off, ln) == digest:
                    ok.append((off, ln))
                    self.bytes_skipped += ln
        finally:
            os.close(fd)
        return ok

    async def read_acks(
        self, sched: BlockScheduler, cond: threading.Condition, progress: Callable[[], None]
    ) -> None:
        """Acks and FILE_DONE into the scheduler (under the pool's ``cond``) and the catalog,
        calling ``progress`` after each, until the receiver's SUMMARY."""
        assert self.link is not None
        while True:
            event = await self.link.next_event()
            if isinstance(event, PeerError):
                raise RemoteError(event.code, f"receiver: {event.message}")
            if isinstance(event, Summary):
                self.remote = event.body
                return
            if isinstance(event, Acked):
                with cond:
                    for fid, off, _ln in event.ok:
                        sched.ack(fid, off)
                    for fid, off, ln in event.bad:
                        self._bad_block(sched, fid, off, ln)
                    cond.notify_all()
            elif isinstance(event, FilesDone):
                for fid in event.ids:
                    self._file_done(self.entries[fid])
            progress()

    def _file_done(self, e: Entry) -> None:
        """The receiver verified ``e`` against what we read; make sure we read one version of
        it: a source changed since the scan may have been sent as a mix of two versions."""
        if e.id in self.files_done or e.id in self.changed:
            return  # settled already (a repeated FILE_DONE)
        try:
            st = os.stat(e.source)
            same = st.st_size == e.size and st.st_mtime_ns == e.mtime_ns
        except OSError:
            same = False
        if same:
            self.files_done.add(e.id)
        else:
            self.changed.add(e.id)

    def _bad_block(self, sched: BlockScheduler, fid: int, off: int, ln: int) -> None:
        fl = sched.inflight.get((fid, off))
        if fl is None or fl.block.length != ln:
            return  # not in flight (re-queued already, or a forged header): nothing to redo
        n = self.verify_failures.get((fid, off), 0) + 1
        self.verify_failures[(fid, off)] = n
        if n > self.cfg.max_retries:
            name = self.entries[fid].path if fid < len(self.entries) else "memory"
            raise XferError(
                f"{name}: block at offset {off} failed verification {n} times", Exit.INCOMPLETE
            )
        sched.requeue(fid, off, ln)

    async def bye(self) -> None:
        """Every block is confirmed: BYE (the receiver answers with SUMMARY)."""
        assert self.link is not None
        self.conn.send_bye()
        await self.link.flush()
