"""The stream pool: opens and closes data streams to reach the controller's target while data
flows; each stream is a thread that takes a block from the scheduler, sends it, repeats."""

from __future__ import annotations

import contextlib
import logging
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from xfer.addr import split_hostport
from xfer.channel import PeerClosed, Stalled, send_all, set_timeouts
from xfer.config import SenderConfig
from xfer.errors import XferError
from xfer.observe.monitor import Monitor
from xfer.transport import SocketOptions, Transport, make_transport
from xfer.tx.sources import Abandon, Abandoned, SealedSource
from xfer.wire.crypto import (
    BlockSealer,
)
from xfer.wire.protocol import (
    DATA_OK,
    END_HEADER,
    ProtocolError,
)
from xfer.wire.session import (
    Block,
    BlockScheduler,
    BlockSizing,
)

log = logging.getLogger("xfer.sender")

UNSENT_S = 0.05
"""With the endgame, a stream keeps about this many seconds of its rate (128 KiB..16 MiB)
unsent in its socket buffer (TCP_NOTSENT_LOWAT): enough to cover a thread's wake-up, while
blocks stay unbound to a stream until shortly before they go out (a stream whose rate
collapses then holds little)."""
MIN_UNSENT = 128 << 10
TCP_NOTSENT_LOWAT = getattr(socket, "TCP_NOTSENT_LOWAT", 25)


@dataclass
class StreamPool:
    """Opens and closes data streams to reach the controller's target, while data flows."""

    cfg: SenderConfig
    sched: BlockScheduler
    monitor: Monitor
    hello: Callable[[int], tuple[bytes, BlockSealer | None]]
    """A data connection's DATA_HELLO and block sealer, by stream id
    (:meth:`xfer.wire.connection.SenderConnection.data_hello`)."""
    make_source: Callable[[], Any]
    cond: threading.Condition = field(default_factory=threading.Condition)
    threads: dict[int, threading.Thread] = field(default_factory=dict)
    retiring: set[int] = field(default_factory=set)
    next_id: int = 0
    target: int = 1
    streams_max: int = 0
    stopping: bool = False
    deaths: int = 0
    error: BaseException | None = None
    cc: str | None = None
    """Congestion control for new streams (None: the system default)."""
    sizing: BlockSizing | None = None
    """Blocks sized to each stream's delivery rate (None: the scheduler's fixed size)."""
    abandoned: int = 0
    """Streams closed because they were still sending a block confirmed elsewhere."""
    stream_cc: dict[int, str | None] = field(default_factory=dict)
    transports: dict[str | None, Transport] = field(default_factory=dict)

    def transport(self, cc: str | None) -> Transport:
        """The transport that opens streams with congestion control ``cc`` (one per name)."""
        t = self.transports.get(cc)
        if t is None:
            rate = self.cfg.stream_rate_bps
            opts = SocketOptions(congestion=cc, max_pacing_rate=int(rate / 8) if rate else None)
            t = self.transports[cc] = make_transport(self.cfg.transport, opts)
        return t

    def recycle(self, k: int) -> None:
        """Replace up to ``k`` streams running another congestion control than ``cc``."""
        with self.cond:
            old = [
                s
                for s in sorted(self.threads)
                if s not in self.retiring and self.stream_cc.get(s) != self.cc
            ][:k]
            target = self.target
        for sid in old:
            with self.cond:
                self.retiring.add(sid)
            self.set_target(target)

    @property
    def active(self) -> int:
        return len(self.threads) - len(self.retiring)

    def set_target(self, n: int) -> None:
        with self.cond:
            if self.stopping:
                return
            self.target = n
            while self.active < n:
                sid = self.next_id
                self.next_id += 1
                t = threading.Thread(
                    target=self._run, args=(sid,), daemon=True, name=f"xfer-tx-{sid}"
                )
                self.threads[sid] = t
                self.stream_cc[sid] = self.cc
                t.start()
            live = sorted(s for s in self.threads if s not in self.retiring)
            for sid in live[n:]:
                self.retiring.add(sid)
            self.streams_max = max(self.streams_max, self.active)
            self.cond.notify_all()

    def stop(self) -> None:
        with self.cond:
            self.stopping = True
            self.cond.notify_all()

    def join(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        for t in list(self.threads.values()):
            t.join(max(0.0, deadline - time.monotonic()))

    def _next(self, sid: int, rate: float | None) -> Block | None:
        with self.cond:
            if rate:
                self.sched.rates[sid] = rate
            while True:
                if self.stopping or sid in self.retiring:
                    return None
                size = None
                if self.sizing is not None:
                    size = self.sizing.size(rate, self.sched.remaining, self.active)
                blk = self.sched.next(sid, size, time.monotonic())
                if blk is not None:
                    return blk
                if self.sched.done:
                    return None
                self.cond.wait(0.05)

    def _abandon(self, blk: Block, started: float) -> Abandon:
        """Endgame: give up ``blk`` once it is confirmed through another stream, unless the
        rest of it would go out within half an MI anyway (a connection is worth more)."""
        sched, half_mi = self.sched, self.cfg.mi / 2

        def check(sent: int) -> bool:
            if not sched.exhausted or sched.wanted(blk):
                return False
            left_s = (blk.length - sent) * (time.monotonic() - started) / max(sent, 1)
            return left_s > half_mi

        return check

    def _send_blocks(self, sid: int, sock: socket.socket, source: Any) -> None:
        """The stream's loop: take a block, send it, repeat until nothing is left."""
        rate: float | None = None
        sent = spent = 0.0  # decaying sums of bytes and of seconds inside send()
        if self.sizing is not None:
            sock.setsockopt(socket.IPPROTO_TCP, TCP_NOTSENT_LOWAT, MIN_UNSENT)
        while (blk := self._next(sid, rate)) is not None:
            if self.sizing is None:
                source.send(sock, blk, self.cfg.checksum)
                continue
            t0 = time.monotonic()
            source.send(sock, blk, self.cfg.checksum, self._abandon(blk, t0))
            # With little unsent data allowed in the kernel, send() returns about as fast as
            # the path drains: bytes per second spent sending is the stream's rate. (The
            # kernel's delivery_rate is not: on paced or sub-ms paths it reads 100x high.)
            sent, spent = 0.7 * sent + blk.length, 0.7 * spent + (time.monotonic() - t0)
            rate = sent / spent if spent > 1e-3 else None
            if rate:  # keep little unsent data queued in the kernel, bound to this stream
                lowat = int(min(max(rate * UNSENT_S, MIN_UNSENT), 16 << 20))
                sock.setsockopt(socket.IPPROTO_TCP, TCP_NOTSENT_LOWAT, lowat)

    def _run(self, sid: int) -> None:
        sock: socket.socket | None = None
        source = self.make_source()
        final = None
        clean = abandoned = False
        try:
            sock, sealer = self._open(sid)
            self.monitor.add(sid, sock)
            if (
                sealer is not None
            ):  # the encrypted path (xfer.wire.crypto): same loop, sealed blocks
                source = SealedSource(source, sealer)
            self._send_blocks(sid, sock, source)
            send_all(sock, END_HEADER if sealer is None else sealer.end())
            sock.shutdown(socket.SHUT_WR)
            final = self.monitor.info(sock)
            with contextlib.suppress(OSError):
                sock.recv(1)  # the receiver closes once it has read everything
            clean = True
        except XferError as exc:
            self.error = exc
        except Abandoned:
            abandoned = True
            if sock is not None:  # reset: the rest of the block must not be read as data
                final = self.monitor.info(sock)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except (OSError, Stalled, PeerClosed, ProtocolError) as exc:
            log.info("stream %d died: %s", sid, exc)
        finally:
            if sock is not None:
                if final is None:
                    final = self.monitor.info(sock)
                sock.close()
            source.close()
            self.monitor.remove(sid, final)
            with self.cond:
                self.threads.pop(sid, None)
                self.retiring.discard(sid)
                self.stream_cc.pop(sid, None)
                self.sched.rates.pop(sid, None)
                if not clean:
                    self.deaths += not abandoned
                    self.abandoned += abandoned
                    self.sched.stream_lost(sid)
                self.cond.notify_all()
            if not clean and not abandoned and not self.stopping and not self.sched.done:
                self.set_target(self.target)  # replace the dead stream now, not at the next MI

    def _open(self, sid: int) -> tuple[socket.socket, BlockSealer | None]:
        host, port = split_hostport(self.cfg.address)
        sock = self.transport(self.stream_cc.get(sid)).connect(
            host, port, timeout=self.cfg.connect_timeout
        )
        try:
            set_timeouts(sock, self.cfg.stall_timeout)
            hello, sealer = self.hello(sid)
            send_all(sock, hello)
            if sock.recv(1) != DATA_OK:
                raise PeerClosed("receiver refused the data connection")
        except BaseException:
            sock.close()
            raise
        return sock, sealer
