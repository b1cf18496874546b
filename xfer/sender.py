"""The sender: control connection on asyncio, data streams as threads in a :class:`StreamPool`.

Each MI the loop asks the monitor for the signal vector, gives it to the controller, and sets
the pool's target. Streams only move blocks: take the next block from the scheduler, send a
25-byte header and the payload (``sendfile`` for large file blocks, one ``sendall`` for small
ones and for memory mode), repeat. A stream that dies has its unconfirmed blocks re-queued.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import mmap
import os
import secrets
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import xxhash

from policy.base import ControllerConfig, make_controller
from policy.ccauto import CcChooser
from policy.utility import RewardConfig, UtilityConfig, reward, utility_of
from xfer.addr import split_hostport
from xfer.channel import Channel, PeerClosed, Stalled, send_all, set_timeouts
from xfer.config import SenderConfig
from xfer.crypto import (
    CIPHER,
    BlockSealer,
    FrameOpener,
    FrameSealer,
    KeyExchange,
    SessionKeys,
    session_keys,
)
from xfer.decider import Decider
from xfer.errors import Exit, RemoteError, XferError
from xfer.manifest import FILE, Entry, ScanResult, scan
from xfer.monitor import Monitor
from xfer.protocol import (
    DATA_OK,
    END_HEADER,
    VERSION,
    Msg,
    ProtocolError,
    block_header,
    check_proof,
    data_secret,
    encode,
    int_list,
    need,
    proof,
)
from xfer.session import (
    SENDER_TABLE,
    Block,
    BlockScheduler,
    BlockSizing,
    Machine,
    State,
    file_extents,
    mem_extents,
    needed_bytes,
)
from xfer.transport import SocketOptions, Transport, make_transport

log = logging.getLogger("xfer.sender")

MEM_CHUNK = 256 << 10
"""Random bytes that memory mode repeats to fill each block (small enough to stay in cache)."""
SMALL_BLOCK = 1 << 20
"""Blocks up to this size are read and sent with one sendall (header + data) instead of sendfile."""
SEND_CHUNK = 1 << 20
"""Larger blocks go out in pieces of this size, so a stream can abandon a block that another
stream's copy has delivered (endgame)."""

COPY_AGE_S = 0.2
"""The endgame copies a block only once it has been unconfirmed for this long (or 2 RTTs if
longer): healthy streams confirm within a few RTTs plus the receiver's 10 ms ack cycle, so on
a clean path nothing is sent twice."""

UNSENT_S = 0.05
"""With the endgame, a stream keeps about this many seconds of its rate (128 KiB..16 MiB)
unsent in its socket buffer (TCP_NOTSENT_LOWAT): enough to cover a thread's wake-up, while
blocks stay unbound to a stream until shortly before they go out (a stream whose rate
collapses then holds little)."""
MIN_UNSENT = 128 << 10
TCP_NOTSENT_LOWAT = getattr(socket, "TCP_NOTSENT_LOWAT", 25)

Abandon = Callable[[int], bool]
"""Asked between pieces of a block with the payload bytes sent so far: True to give it up."""


class Abandoned(Exception):
    """A stream gave up a block that was confirmed through another stream (endgame)."""


def _never(_sent: int) -> bool:
    return False


# ------------------------------------------------------------------------ data sources


class FileSource:
    """Reads blocks of the manifest's files for one stream thread (keeps one file open)."""

    def __init__(self, entries: list[Entry]) -> None:
        self.entries = entries
        self._fid = -1
        self._fd = -1

    def fd(self, fid: int) -> int:
        if fid != self._fid:
            self.close()
            try:
                self._fd = os.open(self.entries[fid].source, os.O_RDONLY)
            except OSError as exc:
                raise XferError(
                    f"cannot read {self.entries[fid].source}: {exc.strerror}", Exit.LOCAL_IO
                ) from None
            self._fid = fid
        return self._fd

    def send(
        self, sock: socket.socket, blk: Block, checksum: bool, abandon: Abandon = _never
    ) -> None:
        fd = self.fd(blk.file_id)
        if blk.length <= SMALL_BLOCK:
            data = os.pread(fd, blk.length, blk.offset)
            if len(data) != blk.length:
                raise XferError(
                    f"{self.entries[blk.file_id].source} shrank while being sent", Exit.LOCAL_IO
                )
            digest = xxhash.xxh3_64_intdigest(data) if checksum else 0
            send_all(sock, block_header(blk.file_id, blk.offset, blk.length, digest) + data)
            return
        digest = _mmap_digest(fd, blk.offset, blk.length) if checksum else 0
        send_all(sock, block_header(blk.file_id, blk.offset, blk.length, digest), socket.MSG_MORE)
        for sent in range(0, blk.length, SEND_CHUNK):
            if sent and abandon(sent):
                raise Abandoned
            _sendfile(sock, fd, blk.offset + sent, min(SEND_CHUNK, blk.length - sent))

    def plaintext(self, blk: Block, buf: memoryview) -> memoryview:
        """Read the block into ``buf`` (the encrypted path: no sendfile)."""
        n = os.preadv(self.fd(blk.file_id), [buf], blk.offset)
        if n != blk.length:
            raise XferError(
                f"{self.entries[blk.file_id].source} shrank while being sent", Exit.LOCAL_IO
            )
        return buf

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
        self._fd, self._fid = -1, -1


def _mmap_digest(fd: int, offset: int, length: int) -> int:
    start = offset - offset % mmap.ALLOCATIONGRANULARITY
    size = length + offset - start
    flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)  # one fault-in, not per page
    with (
        mmap.mmap(fd, size, flags=flags, prot=mmap.PROT_READ, offset=start) as mm,
        memoryview(mm) as mv,
    ):
        return xxhash.xxh3_64_intdigest(mv[offset - start :])


def _sendfile(sock: socket.socket, fd: int, offset: int, length: int) -> None:
    out = sock.fileno()
    while length > 0:
        try:
            n = os.sendfile(out, fd, offset, length)
        except BlockingIOError:
            raise Stalled("no send progress within the stall timeout") from None
        if n == 0:
            raise XferError("source file shrank while being sent", Exit.LOCAL_IO)
        offset += n
        length -= n


class MemSource:
    """Memory mode, as iperf3 does it: every block is one cache-hot random chunk repeated,
    sent with its header in one ``sendmsg``; the digest is computed once per block length.
    One instance is shared by every stream (read-only once built)."""

    def __init__(self) -> None:
        self.chunk = memoryview(os.urandom(MEM_CHUNK))
        self._digest: dict[int, int] = {}
        self._flat = memoryview(b"")

    def iov(self, length: int) -> list[memoryview]:
        full, rest = divmod(length, MEM_CHUNK)
        return [self.chunk] * full + ([self.chunk[:rest]] if rest else [])

    def digest(self, length: int) -> int:
        d = self._digest.get(length)
        if d is None:
            h = xxhash.xxh3_64()
            for part in self.iov(length):
                h.update(part)
            d = self._digest[length] = h.intdigest()
        return d

    def plaintext(self, blk: Block, buf: memoryview) -> memoryview:
        """The block's bytes for the encrypted path: a view of one contiguous copy of the
        chunks, built once for the largest block (the sealer encrypts from it into ``buf``'s
        buffer, so nothing is copied per block)."""
        flat = self._flat
        if len(flat) < blk.length:  # a new object: other streams keep the view they hold
            flat = self._flat = memoryview(b"".join(self.iov(blk.length)))
        return flat[: blk.length]

    def send(
        self, sock: socket.socket, blk: Block, checksum: bool, abandon: Abandon = _never
    ) -> None:
        digest = self.digest(blk.length) if checksum else 0
        bufs = [memoryview(block_header(0, blk.offset, blk.length, digest)), *self.iov(blk.length)]
        per = max(1, SEND_CHUNK // MEM_CHUNK)
        for i in range(0, len(bufs), per):
            if i and abandon((i - 1) * MEM_CHUNK):
                raise Abandoned
            send_vector(sock, bufs[i : i + per])

    def close(self) -> None:
        pass


class SealedSource:
    """The encrypted path: wraps a stream's source so that ``send`` reads the block's
    plaintext into the sealer's buffer, seals it in place (AES-256-GCM, the header as
    associated data) and sends header, ciphertext and tag (no sendfile). The header's digest
    is 0: the receiver hashes what it opened. A block is sealed whole; it can still be
    abandoned between pieces (the stream is then reset, as in clear)."""

    def __init__(self, source: Any, sealer: BlockSealer) -> None:
        self.source = source
        self.sealer = sealer

    def send(
        self, sock: socket.socket, blk: Block, checksum: bool, abandon: Abandon = _never
    ) -> None:
        header = block_header(blk.file_id, blk.offset, blk.length, 0)
        plain = self.source.plaintext(blk, self.sealer.buffer(blk.length))
        wire = self.sealer.seal(header, plain)
        send_vector(sock, [memoryview(header), wire[:SEND_CHUNK]])
        for sent in range(SEND_CHUNK, len(wire), SEND_CHUNK):
            if abandon(sent):
                raise Abandoned
            send_all(sock, wire[sent : sent + SEND_CHUNK])

    def close(self) -> None:
        self.source.close()


def send_vector(sock: socket.socket, bufs: list[memoryview]) -> None:
    """``sendmsg`` every buffer, resuming after partial sends (blocking socket)."""
    while bufs:
        try:
            n = sock.sendmsg(bufs)
        except BlockingIOError:
            raise Stalled("no send progress within the stall timeout") from None
        while bufs and n >= len(bufs[0]):
            n -= len(bufs[0])
            bufs.pop(0)
        if bufs and n:
            bufs[0] = bufs[0][n:]


# ------------------------------------------------------------------------- the pool


@dataclass
class StreamPool:
    """Opens and closes data streams to reach the controller's target, while data flows."""

    cfg: SenderConfig
    sched: BlockScheduler
    monitor: Monitor
    session: str
    secret: bytes
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
    keys: SessionKeys | None = None
    """The session's keys when it is encrypted (each stream seals with its own key)."""

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
            while True:
                if self.stopping or sid in self.retiring:
                    return None
                size = None
                if rate:
                    self.sched.rates[sid] = rate
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
            if sealer is not None:  # the encrypted path (xfer.crypto): same loop, sealed blocks
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
            nonce = secrets.token_hex(8)
            body = {
                "session": self.session,
                "stream": sid,
                "nonce": nonce,
                "proof": proof(self.secret, b"xfer-stream", self.session, str(sid), nonce),
            }
            send_all(sock, encode(Msg.DATA_HELLO, body))
            if sock.recv(1) != DATA_OK:
                raise PeerClosed("receiver refused the data connection")
        except BaseException:
            sock.close()
            raise
        return sock, BlockSealer(self.keys.data, sid, nonce) if self.keys else None


# ----------------------------------------------------------------------- the sender


Callback = Callable[[dict[str, Any]], None]


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
        self.machine = Machine(SENDER_TABLE)
        self.pool: StreamPool | None = None
        self.remote: dict[str, Any] = {}
        self.intervals = 0
        self._all_confirmed = asyncio.Event()
        self.cc_auto: CcChooser | None = None
        self.max_block = cfg.block_size
        self.rate_Bps: float | None = None
        """Goodput of the last MI, bytes/s (sizes the tail of a --duration run)."""
        self._records: deque[dict[str, Any]] = deque()
        """Interval records not yet reported (waiting for their MI's decision)."""
        self.drain_since: float | None = None
        """When all data was first in flight (the drain began)."""
        self.keys: SessionKeys | None = None
        """The session's keys once an encrypted handshake is done."""

    async def run(self) -> dict[str, Any]:
        """Run the transfer; always returns the summary (``exit_code`` says how it went)."""
        ch: Channel | None = None
        try:
            if not self.cfg.mem:
                self.catalog = await asyncio.to_thread(scan, self.cfg.paths, self.cfg.dest)
                gc.freeze()  # the catalog lives until the end: keep the collector off it
            ch = await self._connect()
            await self._transfer(ch)
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
            if ch is not None:
                ch.close()
            gc.unfreeze()
        return self.summary()

    async def _connect(self) -> Channel:
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
        return Channel(sock)

    async def _expect(self, ch: Channel, timeout: float | None = None) -> Any:
        frame = await ch.recv(timeout)
        self.machine.on(frame.msg)
        if frame.msg is Msg.ERROR:
            raise RemoteError(
                str(frame.body.get("code", "protocol")),
                f"receiver: {frame.body.get('message', 'error')}",
            )
        return frame

    async def _handshake(self, ch: Channel) -> tuple[str, bytes]:
        cnonce = secrets.token_hex(16)
        hello: dict[str, Any] = {"version": VERSION, "nonce": cnonce}
        kx = KeyExchange() if self.cfg.encrypt else None
        if kx is not None:
            hello.update(enc=CIPHER, kx=kx.public_hex)
        await ch.send(Msg.HELLO, hello)
        chal = await self._expect(ch, self.cfg.connect_timeout)
        snonce = need(chal.body, "nonce", str, Msg.CHALLENGE)
        session, secret = await self._authenticate(ch, chal, snonce, cnonce)
        if kx is not None:  # everything after WELCOME is sealed, both ways
            if chal.body.get("enc") != CIPHER:
                raise XferError(
                    "the receiver does not offer encryption (an older xfer?): upgrade it, or "
                    "give --encryption off on a network you trust",
                    Exit.PROTOCOL,
                )
            self.keys = session_keys(secret, kx.shared(chal.body.get("kx")), snonce, cnonce)
            ch.secure(FrameSealer(self.keys.to_receiver), FrameOpener(self.keys.to_sender))
        return session, secret

    async def _authenticate(
        self, ch: Channel, chal: Any, snonce: str, cnonce: str
    ) -> tuple[str, bytes]:
        token = self.cfg.token
        if chal.body.get("auth_required") and token is None:
            raise XferError(
                "the receiver requires a token: give --token-file or XFER_TOKEN", Exit.AUTH
            )
        body = {"proof": proof(token, b"xfer-client", snonce, cnonce)} if token else {}
        await ch.send(Msg.AUTH, body)
        welcome = await self._expect(ch, self.cfg.connect_timeout)
        session = need(welcome.body, "session", str, Msg.WELCOME)
        if token:
            if not check_proof(
                proof(token, b"xfer-server", snonce, cnonce), welcome.body.get("proof")
            ):
                raise XferError("the receiver failed to prove it knows the token", Exit.AUTH)
            return session, data_secret(token, snonce, cnonce)
        return session, bytes.fromhex(need(welcome.body, "data_secret", str, Msg.WELCOME))

    async def _transfer(self, ch: Channel) -> None:
        cfg = self.cfg
        session, secret = await self._handshake(ch)
        await ch.send(
            Msg.OPEN,
            {
                "mode": "mem" if cfg.mem else "files",
                "checksum": cfg.checksum,
                "block_size": cfg.block_size,
            },
        )
        rows = [e.wire() for e in self.catalog.entries]
        for i in range(0, len(rows), 2000):
            await ch.send(Msg.MANIFEST, {"entries": rows[i : i + 2000]})
        await ch.send(Msg.MANIFEST_END, {})
        ready = await self._expect(ch, max(60.0, cfg.stall_timeout))
        sched = await asyncio.to_thread(self._scheduler, ready.body)
        if not cfg.mem:  # which journaled ranges still match our files (the rest is stale)
            keep = {str(k): [list(r) for r in v] for k, v in self.kept.items()}
            await ch.send(Msg.KEEP, {"have": keep})
        entries = self.catalog.entries
        mem = MemSource() if cfg.mem else None  # one chunk shared by all streams
        monitor = Monitor(time.monotonic(), mptcp=cfg.transport == "mptcp")
        self.pool = StreamPool(
            cfg,
            sched,
            monitor,
            session,
            secret,
            (lambda: mem) if mem is not None else (lambda: FileSource(entries)),
            sizing=BlockSizing(max_block=self.max_block, mi_s=cfg.mi) if cfg.endgame else None,
            keys=self.keys,
        )
        await self._drive(ch, sched, monitor)

    def _scheduler(self, ready: dict[str, Any]) -> BlockScheduler:
        """Skip what the receiver already has, after checking its hashes against ours."""
        cfg = self.cfg
        limit = ready.get("max_block")
        block = (
            min(cfg.block_size, limit) if isinstance(limit, int) and limit > 0 else cfg.block_size
        )
        self.max_block = block
        if cfg.mem:
            return BlockScheduler(
                mem_extents(cfg.mem_size), block, cfg.endgame, remaining=cfg.mem_size
            )
        entries = self.catalog.entries
        for fid in ready.get("done", []):
            if isinstance(fid, int) and 0 <= fid < len(entries):
                self.files_done.add(fid)
                self.bytes_skipped += entries[fid].size
        have: dict[int, list[tuple[int, int]]] = {}
        raw = ready.get("have", {})
        if not isinstance(raw, dict):
            raise ProtocolError("READY.have must be an object")
        for key, ranges in raw.items():
            fid = int(key)
            if not 0 <= fid < len(entries) or entries[fid].kind != FILE:
                raise ProtocolError(f"READY names unknown file id {key}")
            have[fid] = self._matching(entries[fid], int_list(ranges, 3, "READY.have"))
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
                if off + ln <= e.size and _mmap_digest(fd, off, ln) == digest:
                    ok.append((off, ln))
                    self.bytes_skipped += ln
        finally:
            os.close(fd)
        return ok

    async def _drive(self, ch: Channel, sched: BlockScheduler, monitor: Monitor) -> None:
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
        reader = asyncio.ensure_future(self._read_acks(ch, sched))
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
            await ch.send(Msg.BYE, {})
            self.machine.to(State.CLOSING)
            async with asyncio.timeout(max(30.0, cfg.stall_timeout)):
                await reader
        finally:
            decider.close()
            for rec in self._records:  # decisions that never came: report their MIs anyway
                if "ready" not in rec:
                    rec["action"], rec["ready"] = None, True
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
        rec = {
            "event": "interval",
            **sig.to_dict(),
            "utility": u,
            "reward": r,
            "action": 0,
            "bytes_done": acked,
            "cc": pool.cc,
            "drain": drain,
        }
        self._records.append(rec)
        if drain:  # only blocks in flight remain: a falling rate here is not congestion
            rec["ready"] = True
        elif decider.busy:  # the controller is late: this MI gets no decision of its own
            log.info("controller still deciding at the end of MI %d", self.intervals)
            rec["action"], rec["ready"] = None, True
        else:
            decider.start(sig, (rec, streams, u, sig))
        self._emit_ready()
        return u

    def _apply(self, decider: Decider, ccfg: ControllerConfig) -> None:
        """A decision arrived (on time or late): set the target, then report its MI."""
        got = decider.take()
        if got is None:
            return
        target, (rec, streams, u, sig) = got
        pool = self.pool
        assert pool is not None
        target = ccfg.clip(target)
        pool.set_target(target)
        if self.cc_auto is not None:
            pool.cc = self.cc_auto.update(sig, u)
            pool.recycle(max(1, target // 4))
        rec["action"], rec["ready"] = target - streams, True
        self._emit_ready()

    def _emit_ready(self) -> None:
        """Report finished MIs in order (an MI waiting for its decision holds later ones)."""
        while self._records and self._records[0].pop("ready", False):
            rec = self._records.popleft()
            if self.on_interval is not None:
                self.on_interval(rec)

    async def _read_acks(self, ch: Channel, sched: BlockScheduler) -> None:
        assert self.pool is not None
        while True:
            frame = await self._expect(ch)
            if frame.msg is Msg.SUMMARY:
                self.remote = frame.body
                return
            if frame.msg is Msg.ACK:
                ok = int_list(frame.body.get("ok", []), 3, "ACK.ok")
                bad = int_list(frame.body.get("bad", []), 3, "ACK.bad")
                with self.pool.cond:
                    for fid, off, _ln in ok:
                        sched.ack(fid, off)
                    for fid, off, ln in bad:
                        self._bad_block(sched, fid, off, ln)
                    self.pool.cond.notify_all()
            elif frame.msg is Msg.FILE_DONE:
                for fid in frame.body.get("ids", []):
                    if isinstance(fid, int) and 0 <= fid < len(self.catalog.entries):
                        self._file_done(self.catalog.entries[fid])
            if self.machine.state is State.ACTIVE and self._finished(sched):
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
            complete = not missing and self.error is None and self.machine.state is State.CLOSED
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
