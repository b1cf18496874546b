"""The sender: control connection on asyncio, data streams as threads in a :class:`StreamPool`.

Each MI the loop asks the monitor for the signal vector, gives it to the controller, and sets
the pool's target. Streams only move blocks: take the next block from the scheduler, send a
25-byte header and the payload (``sendfile`` for large file blocks, one ``sendall`` for small
ones and for memory mode), repeat. A stream that dies has its unconfirmed blocks re-queued.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import socket
import time
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

from policy.base import ControllerConfig, make_controller
from policy.ccauto import CcChooser
from policy.utility import RewardConfig, UtilityConfig, reward, utility_of
from xfer.addr import split_hostport
from xfer.channel import Link, PeerClosed
from xfer.config import SenderConfig
from xfer.connection import (
    Acked,
    FilesDone,
    PeerError,
    Ready,
    SenderConnection,
    Summary,
    Welcomed,
)
from xfer.crypto import CIPHER, SessionKeys
from xfer.decider import Decider
from xfer.errors import Exit, RemoteError, XferError
from xfer.interval import Interval
from xfer.manifest import FILE, Entry, ScanResult, scan
from xfer.monitor import Monitor
from xfer.pool import COPY_AGE_S, StreamPool
from xfer.protocol import ProtocolError
from xfer.session import (
    BlockScheduler,
    BlockSizing,
    State,
    file_extents,
    mem_extents,
    needed_bytes,
)
from xfer.sources import FileSource, MemSource, mmap_digest

log = logging.getLogger("xfer.sender")

Callback = Callable[[Interval], None]
E = TypeVar("E")


class Sender:
    """One transfer from this host to a receiver."""

    def __init__(self, cfg: SenderConfig, on_interval: Callback | None = None) -> None:
        self.cfg = cfg
        self.on_interval = on_interval
        self.catalog: ScanResult = ScanResult([], [])
        self.files_done: set[int] = set()
        self.bytes_skipped = 0
        self.changed: set[int] = set()
        """Ids of files the receiver verified whose source changed during the run: settled
        (reported, not verified), so the run can end. Disjoint from ``files_done``."""
        self.verify_failures: dict[tuple[int, int], int] = {}
        self.error: XferError | None = None
        self.started = time.monotonic()
        self.conn = SenderConnection([])
        """The control connection's protocol (sans-IO); replaced when the transfer starts."""
        self.pool: StreamPool | None = None
        self.remote: dict[str, Any] = {}
        self.intervals = 0
        self._all_confirmed = asyncio.Event()
        self.cc_auto: CcChooser | None = None
        self.max_block = cfg.block_size
        self.rate_Bps: float | None = None
        """Goodput of the last MI, bytes/s (sizes the tail of a --duration run)."""
        self._records: deque[Interval] = deque()
        """Interval records not yet reported: the one waiting for its MI's decision and any
        after it."""
        self._deciding = False
        """The first of ``_records`` waits for its MI's decision."""
        self.drain_since: float | None = None
        """When all data was first in flight (the drain began)."""
        self.keys: SessionKeys | None = None
        """The session's keys once an encrypted handshake is done."""

    async def run(self) -> dict[str, Any]:
        """Run the transfer; always returns the summary (``exit_code`` says how it went)."""
        sock: socket.socket | None = None
        try:
            if not self.cfg.mem:
                self.catalog = await asyncio.to_thread(scan, self.cfg.paths, self.cfg.dest)
                gc.freeze()  # the catalog lives until the end: keep the collector off it
            sock = await self._connect()
            await self._transfer(sock)
        except XferError as exc:
            self.error = exc
        except ProtocolError as exc:
            self.error = XferError(f"receiver broke the protocol: {exc}", Exit.PROTOCOL)
        except (PeerClosed, ConnectionError, TimeoutError, OSError) as exc:
            self.error = XferError(f"connection to {self.cfg.address} lost: {exc}", Exit.NETWORK)
        except asyncio.CancelledError:
            self.error = XferError("interrupted", Exit.INTERRUPTED)
            raise
        finally:
            if self.pool is not None:
                self.pool.stop()
                await asyncio.to_thread(self.pool.join, 5.0)
            if sock is not None:
                sock.close()
            gc.unfreeze()
        return self.summary()

    async def _connect(self) -> socket.socket:
        host, port = split_hostport(self.cfg.address)
        loop = asyncio.get_running_loop()
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        sock = socket.socket(infos[0][0], socket.SOCK_STREAM)
        sock.setblocking(False)
        try:
            async with asyncio.timeout(self.cfg.connect_timeout):
                await loop.sock_connect(sock, infos[0][4])
        except BaseException:
            sock.close()
            raise
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock

    async def _expect(self, link: Link, kind: type[E], timeout: float | None = None) -> E:
        event = await link.next_event(timeout)
        if isinstance(event, PeerError):
            raise RemoteError(event.code, f"receiver: {event.message}")
        assert isinstance(event, kind), event  # the table allows nothing else here
        return event

    async def _transfer(self, sock: socket.socket) -> None:
        cfg = self.cfg
        conn = self.conn = SenderConnection(
            self.catalog.entries,
            token=cfg.token,
            encrypt=cfg.encrypt,
            mem=cfg.mem,
            checksum=cfg.checksum,
            block_size=cfg.block_size,
        )
        link = Link(sock, conn)
        conn.start()
        await link.flush()
        welcome = await self._expect(link, Welcomed, cfg.connect_timeout)
        self.keys = welcome.keys
        conn.send_open()
        while conn.send_manifest():
            await link.flush()
        await link.flush()
        ready = await self._expect(link, Ready, max(60.0, cfg.stall_timeout))
        sched = await asyncio.to_thread(self._scheduler, ready)
        if not cfg.mem:  # which journaled ranges still match our files (the rest is stale)
            conn.send_keep(self.kept)
            await link.flush()
        entries = self.catalog.entries
        mem = MemSource() if cfg.mem else None  # one chunk shared by all streams
        monitor = Monitor(time.monotonic(), mptcp=cfg.transport == "mptcp")
        self.pool = StreamPool(
            cfg,
            sched,
            monitor,
            welcome.session,
            welcome.secret,
            (lambda: mem) if mem is not None else (lambda: FileSource(entries)),
            sizing=BlockSizing(max_block=self.max_block, mi_s=cfg.mi) if cfg.endgame else None,
            keys=self.keys,
        )
        await self._drive(link, sched, monitor)

    def _scheduler(self, ready: Ready) -> BlockScheduler:
        """Skip what the receiver already has, after checking its hashes against ours."""
        cfg = self.cfg
        block = min(cfg.block_size, ready.max_block or cfg.block_size)
        self.max_block = block
        if cfg.mem:
            return BlockScheduler(
                mem_extents(cfg.mem_size), block, cfg.endgame, remaining=cfg.mem_size
            )
        entries = self.catalog.entries
        for fid in ready.done:
            self.files_done.add(fid)
            self.bytes_skipped += entries[fid].size
        have = {fid: self._matching(entries[fid], rows) for fid, rows in ready.have.items()}
        self.kept = have
        todo = [e for e in entries if e.id not in self.files_done]
        return BlockScheduler(
            file_extents(todo, have), block, cfg.endgame, remaining=needed_bytes(todo, have)
        )

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

    async def _drive(self, link: Link, sched: BlockScheduler, monitor: Monitor) -> None:
        """The MI loop: monitor, controller, pool; and the acks coming back."""
        cfg = self.cfg
        assert self.pool is not None
        ccfg = ControllerConfig(
            min_streams=cfg.min_streams,
            max_streams=cfg.max_streams,
            initial_streams=cfg.streams,
            mi_s=cfg.mi,
        )
        controller = make_controller(cfg.policy_spec, ccfg)
        self.cc_auto = CcChooser() if cfg.cc == "auto" else None
        self.pool.cc = self.cc_auto.current if self.cc_auto else cfg.cc
        self.pool.set_target(ccfg.clip(controller.initial()))
        reader = asyncio.ensure_future(self._read_acks(link, sched))
        u_prev: float | None = None
        deadline = self.started + cfg.duration if cfg.duration else None
        next_mi = time.monotonic() + cfg.mi
        finished = asyncio.ensure_future(self._all_confirmed.wait())
        decider = Decider(controller)
        try:
            while not self._finished(sched):
                waiting: set[asyncio.Future[Any]] = {reader, finished, *decider.waitable()}
                await asyncio.wait(
                    waiting,
                    timeout=cfg.mi / 10,
                    return_when=asyncio.FIRST_COMPLETED,
                )
                self._apply(decider, ccfg)
                if reader.done():
                    reader.result()
                    raise PeerClosed("receiver closed the control connection")
                self._check_pool()
                now = time.monotonic()
                monitor.sample_rtt(now)
                with self.pool.cond:
                    if deadline and now >= deadline:
                        sched.stop_source()
                    elif deadline and self.rate_Bps and not sched.exhausted:
                        sched.remaining = int(self.rate_Bps * (deadline - now))
                    sched.min_age = max(COPY_AGE_S, 2 * monitor.srtt_s())
                    if self.drain_since is None and sched.draining:
                        self.drain_since = now
                    if cfg.redundancy and sched.hedge(monitor.stalled()):
                        self.pool.cond.notify_all()
                if now >= next_mi:
                    next_mi += cfg.mi
                    u_prev = self._interval(decider, monitor, sched, now, u_prev)
            if decider.waitable():  # the last MI's decision: report it if it comes soon
                await asyncio.wait(decider.waitable(), timeout=cfg.mi)
                self._apply(decider, ccfg)
            self.pool.stop()
            self.conn.send_bye()
            await link.flush()
            async with asyncio.timeout(max(30.0, cfg.stall_timeout)):
                await reader
        finally:
            decider.close()
            if self._deciding:  # a decision that never came: report its MI anyway
                self._decided(None)
            self._emit_ready()
            reader.cancel()
            finished.cancel()

    def _finished(self, sched: BlockScheduler) -> bool:
        assert self.pool is not None
        with self.pool.cond:
            if not sched.done:
                return False
        if self.cfg.mem:
            return True
        # every entry is settled once, into one of two disjoint sets (see _file_done)
        return len(self.files_done) + len(self.changed) >= len(self.catalog.entries)

    def _check_pool(self) -> None:
        pool = self.pool
        assert pool is not None
        if pool.error is not None:
            raise pool.error
        if pool.deaths > 8 * max(self.cfg.max_streams, 4) and pool.active == 0:
            raise XferError("data streams keep failing; giving up", Exit.NETWORK)
        with pool.cond:
            all_dead = pool.active == 0 and not pool.sched.done
        if all_dead:  # every stream died: reopen at once; the controller decides at the next MI
            pool.set_target(pool.target)

    def _interval(
        self,
        decider: Decider,
        monitor: Monitor,
        sched: BlockScheduler,
        now: float,
        u_prev: float | None,
    ) -> float:
        """Close an MI: its signal vector, utility and reward; ask the controller (in its
        thread) unless this is a drain MI or it is still deciding on an earlier MI."""
        pool = self.pool
        assert pool is not None
        with pool.cond:
            acked, streams = sched.bytes_acked, pool.active
            drain = self.cfg.endgame and sched.draining
        sig = monitor.interval(now, streams, acked)
        self.rate_Bps = sig.goodput_bps / 8 if sig.goodput_bps else self.rate_Bps
        u = utility_of(sig, UtilityConfig())
        r = reward(u, u_prev, RewardConfig()) if u_prev is not None else 0.0
        self.intervals += 1
        total = None if self.cfg.mem else self.catalog.total_bytes
        rec = Interval(sig, u, r, 0, bytes_done=acked, cc=pool.cc, drain=drain, bytes_total=total)
        if drain:  # only blocks in flight remain: a falling rate here is not congestion
            pass
        elif decider.busy:  # the controller is late: this MI gets no decision of its own
            log.info("controller still deciding at the end of MI %d", self.intervals)
            rec = replace(rec, action=None)
        else:
            decider.start(sig, (streams, u, sig))
            self._deciding = True
        self._records.append(rec)
        self._emit_ready()
        return u

    def _apply(self, decider: Decider, ccfg: ControllerConfig) -> None:
        """A decision arrived (on time or late): set the target, then report its MI."""
        got = decider.take()
        if got is None:
            return
        target, (streams, u, sig) = got
        pool = self.pool
        assert pool is not None
        target = ccfg.clip(target)
        pool.set_target(target)
        if self.cc_auto is not None:
            pool.cc = self.cc_auto.update(sig, u)
            pool.recycle(max(1, target // 4))
        self._decided(target - streams)

    def _decided(self, action: int | None) -> None:
        """The waiting MI's decision came (``action`` None: it never will): report it."""
        assert self._deciding
        self._records[0] = replace(self._records[0], action=action)
        self._deciding = False
        self._emit_ready()

    def _emit_ready(self) -> None:
        """Report finished MIs in order (an MI waiting for its decision holds later ones)."""
        while self._records and not self._deciding:
            rec = self._records.popleft()
            if self.on_interval is not None:
                self.on_interval(rec)

    async def _read_acks(self, link: Link, sched: BlockScheduler) -> None:
        assert self.pool is not None
        while True:
            event = await link.next_event()
            if isinstance(event, PeerError):
                raise RemoteError(event.code, f"receiver: {event.message}")
            if isinstance(event, Summary):
                self.remote = event.body
                return
            if isinstance(event, Acked):
                with self.pool.cond:
                    for fid, off, _ln in event.ok:
                        sched.ack(fid, off)
                    for fid, off, ln in event.bad:
                        self._bad_block(sched, fid, off, ln)
                    self.pool.cond.notify_all()
            elif isinstance(event, FilesDone):
                for fid in event.ids:
                    self._file_done(self.catalog.entries[fid])
            if self.conn.state is State.ACTIVE and self._finished(sched):
                self._all_confirmed.set()  # wake the MI loop now, not at its next tick

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
            name = self.catalog.entries[fid].path if fid < len(self.catalog.entries) else "memory"
            raise XferError(
                f"{name}: block at offset {off} failed verification {n} times", Exit.INCOMPLETE
            )
        sched.requeue(fid, off, ln)

    def summary(self) -> dict[str, Any]:
        """The end-of-transfer object (the ``--json`` contract, documented in the README)."""
        pool = self.pool
        sched = pool.sched if pool else None
        secs = time.monotonic() - self.started
        files = [e for e in self.catalog.entries if e.kind == FILE]
        missing = [e.path for e in files if e.id not in self.files_done]
        error = str(self.error) if self.error else None
        if self.changed and not error:
            changed = [self.catalog.entries[i].path for i in sorted(self.changed)]
            error = (
                f"{len(changed)} file(s) changed while being sent (re-run to send "
                f"them whole): {', '.join(changed[:5])}"
            )
        elif missing and not error:
            error = f"{len(missing)} file(s) not verified"
        acked = sched.bytes_acked if sched else 0
        if self.cfg.mem:
            complete = bool(sched and sched.done) and self.error is None
            total = acked
        else:
            complete = not missing and self.error is None and self.conn.state is State.CLOSED
            total = self.catalog.total_bytes
        verified = complete and self.cfg.checksum
        code = Exit.OK if complete else (self.error.exit if self.error else Exit.INCOMPLETE)
        return {
            "event": "end",
            "bytes": total,
            "bytes_sent": sched.bytes_sent if sched else 0,
            "bytes_skipped": self.bytes_skipped,
            "bytes_resent": sched.bytes_resent if sched else 0,
            "bytes_redundant": sched.bytes_redundant if sched else 0,
            "endgame": self.cfg.endgame,
            "drain_seconds": time.monotonic() - self.drain_since if self.drain_since else 0.0,
            "streams_abandoned": pool.abandoned if pool else 0,
            "files": len(files),
            "files_verified": len(files) - len(missing),
            "files_missing": missing[:100],
            "dirs": len(self.catalog.entries) - len(files),
            "skipped": self.catalog.skipped,
            "seconds": secs,
            "throughput_bps": acked * 8 / secs if secs > 0 else 0.0,
            "streams_max": pool.streams_max if pool else 0,
            "stream_failures": pool.deaths if pool else 0,
            "intervals": self.intervals,
            "policy": self.cfg.policy_spec,
            "encryption": CIPHER if self.cfg.encrypt else "off",
            "verified": verified,
            "exit_code": int(code),
            "error": None if complete else error,
            "receiver": self.remote,
        }
