"""The sender: the MI loop on asyncio, data streams as threads in a :class:`StreamPool`, the
control connection in :class:`xfer.tx.txsession.Control` (a sans-IO ``SenderConnection``).

Each MI the loop asks the monitor for the signal vector, gives it to the controller, and sets
the pool's target. Streams only move blocks: take the next block from the scheduler, send a
25-byte header and the payload (``sendfile`` for large file blocks, one ``sendall`` for small
ones and for memory mode), repeat. A stream that dies has its unconfirmed blocks re-queued.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import socket
import time
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

from policy.base import Controller, ControllerConfig, make_controller, mi_length
from policy.ccauto import CcChooser
from policy.utility import RewardConfig, UtilityConfig, reward, utility_of
from xfer.channel import PeerClosed
from xfer.config import SenderConfig
from xfer.errors import Exit, XferError
from xfer.manifest import FILE, ScanResult, scan
from xfer.observe.interval import Interval
from xfer.observe.monitor import Monitor
from xfer.observe.tcpinfo import stream_info
from xfer.transport import default_cc
from xfer.tx.decider import Decider
from xfer.tx.pool import StreamPool
from xfer.tx.sources import FileSource, MemSource
from xfer.tx.txsession import Control, connect
from xfer.wire.crypto import CIPHER
from xfer.wire.protocol import ProtocolError
from xfer.wire.session import COPY_AGE_S, BlockScheduler, BlockSizing, State

log = logging.getLogger("xfer.sender")

Callback = Callable[[Interval], None]

POLLS_PER_MI = 10
"""The MI loop wakes at least this often per MI (acks, decisions, the stream pool)."""


def poll_timeout(now: float, next_mi: float, mi: float) -> float:
    """How long the MI loop may wait: a tenth of an MI, but not past the MI's end. Waiting a
    full tenth whatever the boundary made each MI end up to a tenth late (1.01-1.10 s MIs at
    ``mi = 1``, the lateness growing MI by MI until it wrapped), so the controller decided at
    drifting times and the first MIs of a ramp ran long."""
    return min(mi / POLLS_PER_MI, max(next_mi - now, 0.0))


def next_boundary(next_mi: float, now: float, mi: float) -> float:
    """The MI boundary after the one that just passed (``now >= next_mi``): one MI later, on
    the same grid; a loop that fell behind by more than an MI (a stall, a long GC pause)
    skips the boundaries it missed instead of closing a run of near-empty MIs."""
    nxt = next_mi + mi
    if nxt <= now:
        nxt += mi * ((now - nxt) // mi + 1)
    return nxt


def _control_rtt_ms(sock: socket.socket) -> float | None:
    """The control connection's minimum RTT (ms), the path's RTT before any data stream has
    measured one; None if the kernel does not say."""
    try:
        info = stream_info(sock)
    except OSError:
        return None
    return info.min_rtt_us / 1000 if info.min_rtt_us else None


class Sender:
    """One transfer from this host to a receiver."""

    def __init__(self, cfg: SenderConfig, on_interval: Callback | None = None) -> None:
        self.cfg = cfg
        self.on_interval = on_interval
        self.catalog: ScanResult = ScanResult([], [])
        self.error: XferError | None = None
        self.started = time.monotonic()
        self.control = Control(cfg)
        """The control connection: handshake, resume, acks (``xfer/tx/txsession.py``)."""
        self.pool: StreamPool | None = None
        self._default_cc: str | None = None
        """The namespace's default congestion control (what streams run if ``--cc`` is unset)."""
        self.intervals = 0
        self._all_confirmed = asyncio.Event()
        self.cc_auto: CcChooser | None = None
        self.rate_Bps: float | None = None
        """Goodput of the last MI, bytes/s (sizes the tail of a --duration run)."""
        self._records: deque[Interval] = deque()
        """Interval records not yet reported: the one waiting for its MI's decision and any
        after it."""
        self._deciding = False
        """The first of ``_records`` waits for its MI's decision."""

    async def run(self) -> dict[str, Any]:
        """Run the transfer; always returns the summary (``exit_code`` says how it went)."""
        sock: socket.socket | None = None
        try:
            if not self.cfg.mem:
                self.catalog = await asyncio.to_thread(scan, self.cfg.paths, self.cfg.dest)
                gc.freeze()  # the catalog lives until the end: keep the collector off it
            sock = await connect(self.cfg.address, self.cfg.connect_timeout)
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

    async def _transfer(self, sock: socket.socket) -> None:
        cfg = self.cfg
        entries = self.catalog.entries
        sched = await self.control.open(sock, entries)
        mem = MemSource() if cfg.mem else None  # one chunk shared by all streams
        # The controller (a PPO checkpoint: torch and the weights, several ms) is built
        # before the clock starts: the first MI is the first second of data, as every other.
        ccfg = ControllerConfig(
            min_streams=cfg.min_streams,
            max_streams=cfg.max_streams,
            initial_streams=cfg.streams,
            mi_s=cfg.mi,
        )
        controller = make_controller(cfg.policy_spec, ccfg)
        path_rtt_ms = _control_rtt_ms(sock)
        monitor = Monitor(time.monotonic(), mptcp=cfg.transport == "mptcp")
        max_block = self.control.max_block
        self.pool = StreamPool(
            cfg,
            sched,
            monitor,
            self.control.conn.data_hello,
            (lambda: mem) if mem is not None else (lambda: FileSource(entries)),
            sizing=BlockSizing(max_block=max_block, mi_s=cfg.mi) if cfg.endgame else None,
        )
        await self._drive(sched, monitor, controller, ccfg, path_rtt_ms)

    async def _drive(
        self,
        sched: BlockScheduler,
        monitor: Monitor,
        controller: Controller,
        ccfg: ControllerConfig,
        path_rtt_ms: float | None = None,
    ) -> None:
        """The MI loop: monitor, controller, pool; and the acks coming back. The MI clock
        starts where the monitor's did (its first sample covers exactly one MI). Each MI
        lasts ``cfg.mi`` unless the controller asks for a shorter one
        (:func:`policy.base.mi_length`, ``fast``): MI 1 is sized on ``path_rtt_ms`` (the
        control connection's minimum RTT), later ones on the data streams' minimum RTT."""
        cfg = self.cfg
        assert self.pool is not None
        self.cc_auto = CcChooser() if cfg.cc == "auto" else None
        self.pool.cc = self.cc_auto.current if self.cc_auto else cfg.cc
        self._default_cc = default_cc()  # what streams run when pool.cc is None
        self.pool.set_target(ccfg.clip(controller.initial()))
        progress = partial(self._progress, sched)
        reader = asyncio.ensure_future(self.control.read_acks(sched, self.pool.cond, progress))
        u_prev: float | None = None
        deadline = self.started + cfg.duration if cfg.duration else None

        def length(k: int) -> float:
            rtt = monitor.min_rtt_ms
            return mi_length(controller, k, path_rtt_ms if rtt is None else rtt, cfg.mi)

        mi_now = length(1)
        next_mi = monitor.started + mi_now
        finished = asyncio.ensure_future(self._all_confirmed.wait())
        decider = Decider(controller)
        try:
            while not self._finished(sched):
                waiting: set[asyncio.Future[Any]] = {reader, finished, *decider.waitable()}
                await asyncio.wait(
                    waiting,
                    timeout=poll_timeout(time.monotonic(), next_mi, mi_now),
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
                    if cfg.redundancy and sched.hedge(monitor.stalled()):
                        self.pool.cond.notify_all()
                if now >= next_mi:
                    mi_now = length(self.intervals + 2)  # the MI after the one ending now
                    next_mi = next_boundary(next_mi, now, mi_now)
                    u_prev = self._interval(decider, monitor, sched, now, u_prev)
            if decider.waitable():  # the last MI's decision: report it if it comes soon
                await asyncio.wait(decider.waitable(), timeout=cfg.mi)
                self._apply(decider, ccfg)
            self.pool.stop()
            await self.control.bye()
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
        return self.control.settled >= len(self.catalog.entries)

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
        sig = monitor.interval(now, streams, acked, pool.cc or self._default_cc)
        self.rate_Bps = sig.goodput_bps / 8 if sig.goodput_bps else self.rate_Bps
        u = utility_of(sig, UtilityConfig())
        r = reward(u, u_prev, RewardConfig()) if u_prev is not None else 0.0
        self.intervals += 1
        total = None if self.cfg.mem else self.catalog.total_bytes
        rec = Interval(sig, u, r, 0, bytes_done=acked, cc=sig.cc, drain=drain, bytes_total=total)
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

    def _progress(self, sched: BlockScheduler) -> None:
        if self.control.conn.state is State.ACTIVE and self._finished(sched):
            self._all_confirmed.set()  # wake the MI loop now, not at its next tick

    def summary(self) -> dict[str, Any]:
        """The end-of-transfer object (the ``--json`` contract, documented in the README)."""
        pool = self.pool
        sched = pool.sched if pool else None
        secs = time.monotonic() - self.started
        ctl = self.control
        files = [e for e in self.catalog.entries if e.kind == FILE]
        missing = [e.path for e in files if e.id not in ctl.files_done]
        error = str(self.error) if self.error else None
        if ctl.changed and not error:
            changed = [self.catalog.entries[i].path for i in sorted(ctl.changed)]
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
            complete = not missing and self.error is None and ctl.conn.state is State.CLOSED
            total = self.catalog.total_bytes
        verified = complete and self.cfg.checksum
        code = Exit.OK if complete else (self.error.exit if self.error else Exit.INCOMPLETE)
        return {
            "event": "end",
            "bytes": total,
            "bytes_sent": sched.bytes_sent if sched else 0,
            "bytes_skipped": ctl.bytes_skipped,
            "bytes_resent": sched.bytes_resent if sched else 0,
            "bytes_redundant": sched.bytes_redundant if sched else 0,
            "endgame": self.cfg.endgame,
            "drain_seconds": (
                time.monotonic() - sched.drain_since
                if sched and sched.drain_since is not None
                else 0.0
            ),
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
            "receiver": ctl.remote,
        }
