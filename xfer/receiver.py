"""The receiver: an asyncio server for control connections, one thread per data connection.

The control side (handshake, manifest, acks, summary) runs on the event loop and follows
:data:`xfer.session.RECEIVER_TABLE`. Each accepted data connection is handed to a thread that
does only this: read a 25-byte header, ``recv_into`` the payload, check its xxh3, ``pwrite`` it,
and note the block for the ack and the journal. A session that fails (bad frame, bad path, full
disk, lost sender) ends alone; the receiver keeps serving the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import socket
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any

import xxhash

from xfer.addr import split_hostport as split_hostport  # re-exported (was defined here)
from xfer.channel import Channel, PeerClosed, Stalled, recv_exact, set_timeouts
from xfer.config import ReceiverConfig as ReceiverConfig  # re-exported (was defined here)
from xfer.crypto import (
    CIPHER,
    TAG,
    BlockOpener,
    FrameOpener,
    FrameSealer,
    KeyExchange,
    SessionKeys,
    Tampered,
    session_keys,
)
from xfer.errors import RemoteError
from xfer.manifest import Entry, entry_from_wire
from xfer.protocol import (
    BLOCK_HEADER,
    DATA_OK,
    VERSION,
    BlockHeader,
    BlockKind,
    ErrorCode,
    Msg,
    ProtocolError,
    check_proof,
    data_secret,
    decode_block_header,
    int_list,
    need,
    proof,
)
from xfer.session import RECEIVER_TABLE, Book, Machine, State
from xfer.store import Store, StoreError
from xfer.transport import listen_any

log = logging.getLogger("xfer.receiver")


@dataclass
class Session:
    """One sender's session on this receiver."""

    id: str
    secret: bytes
    store: Store | None = None
    mode: str = "files"
    checksum: bool = True
    entries: list[Entry] = field(default_factory=list)
    book: Book | None = None
    machine: Machine = field(default_factory=lambda: Machine(RECEIVER_TABLE))
    lock: threading.Lock = field(default_factory=threading.Lock)
    acks_ok: list[list[int]] = field(default_factory=list)
    acks_bad: list[list[int]] = field(default_factory=list)
    files_done: list[int] = field(default_factory=list)
    error: tuple[str, str] | None = None
    data_socks: set[socket.socket] = field(default_factory=set)
    streams_seen: int = 0
    ready: bool = False
    """READY was sent (and KEEP applied): data connections are accepted from now on."""
    ready_event: asyncio.Event = field(default_factory=asyncio.Event)
    """Set with ``ready``; a data connection that arrives a little early waits for it."""
    offered: dict[int, list[tuple[int, int, int]]] = field(default_factory=dict)
    """Journaled ranges offered in READY, per file id (the sender answers with KEEP)."""
    claimed: frozenset[str] = frozenset()
    """Paths this session holds against concurrent writers (released when it ends)."""
    writing: set[tuple[int, int]] = field(default_factory=set)
    """Blocks (file id, offset) being written now: a second copy arriving meanwhile (endgame)
    is dropped, never written twice."""
    bytes_received: int = 0
    blocks_bad: int = 0
    keys: SessionKeys | None = None
    """Set when the session is encrypted (after WELCOME)."""
    streams_used: set[int] = field(default_factory=set)
    """Stream ids seen (an encrypted session refuses a replayed DATA_HELLO)."""
    auth_failures: int = 0
    """Blocks and data headers that failed authentication (their connection was dropped)."""
    started: float = field(default_factory=time.monotonic)

    def fail(self, code: str, message: str) -> None:
        with self.lock:
            if self.error is None:
                self.error = (code, message)


class Receiver:
    """Serves many senders at once. ``await serve()`` in a loop, or ``start()``/``stop()``
    from synchronous code (the library API)."""

    def __init__(self, config: ReceiverConfig) -> None:
        self.config = config
        self.sessions: dict[str, Session] = {}
        self.address: tuple[str, int] | None = None
        self._listener: socket.socket | None = None
        self._stop: asyncio.Event | None = None
        self._busy_paths: set[str] = set()
        self._busy_lock = threading.Lock()
        self._pending = 0
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self.completed_sessions = 0

    # ---------------------------------------------------------------- lifecycle

    def bind(self) -> tuple[str, int]:
        host, port = split_hostport(self.config.listen)
        self._listener = listen_any(host, port)
        addr = self._listener.getsockname()
        self.address = (addr[0], addr[1])
        return self.address

    async def serve(self) -> None:
        """Accept connections until ``shutdown()`` (or the first session with ``once``)."""
        if self._listener is None:
            self.bind()
        assert self._listener is not None
        self._stop = asyncio.Event()
        self._listener.setblocking(False)
        loop = asyncio.get_running_loop()
        self._ready.set()
        tasks: set[asyncio.Task[None]] = set()
        accept = asyncio.ensure_future(loop.sock_accept(self._listener))
        stop = asyncio.ensure_future(self._stop.wait())
        warned = 0.0
        try:
            while True:
                done, _ = await asyncio.wait({accept, stop}, return_when=asyncio.FIRST_COMPLETED)
                if stop in done:
                    break
                try:
                    sock, _peer = accept.result()
                except OSError as exc:  # EMFILE under a connection flood: keep serving
                    if time.monotonic() - warned > 5:
                        warned = time.monotonic()
                        log.warning("cannot accept connections (%s); retrying", exc.strerror or exc)
                    await asyncio.sleep(0.1)
                    accept = asyncio.ensure_future(loop.sock_accept(self._listener))
                    continue
                accept = asyncio.ensure_future(loop.sock_accept(self._listener))
                if self._pending >= self.config.max_pending:
                    sock.close()  # too many connections that have not said who they are
                    continue
                t = asyncio.ensure_future(self._handle(sock))
                tasks.add(t)
                t.add_done_callback(tasks.discard)
        finally:
            accept.cancel()
            stop.cancel()
            for t in list(tasks):
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for s in list(self.sessions.values()):
                self._abort(s)
            self._listener.close()

    def shutdown(self) -> None:
        """Ask ``serve()`` to return (thread-safe once serving)."""
        if self._stop is not None:
            self._stop.set()

    def start(self) -> tuple[str, int]:
        """Serve in a background thread; returns the bound address."""
        addr = self.bind()

        def run() -> None:
            self._loop = asyncio.new_event_loop()
            self._loop.run_until_complete(self.serve())
            self._loop.close()

        self._thread = threading.Thread(target=run, name="xfer-recv", daemon=True)
        self._thread.start()
        self._ready.wait(10)
        return addr

    def stop(self) -> None:
        """Stop a receiver started with ``start()``."""
        if self._thread and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(30)

    # ----------------------------------------------------------- first frame

    async def _handle(self, sock: socket.socket) -> None:
        ch = Channel(sock)
        try:
            self._pending += 1
            try:
                first = await self._first_frame(ch)
            finally:
                self._pending -= 1
            if first is None:
                ch.close()
                return
            if first.msg is Msg.DATA_HELLO:
                await self._data_hello(ch, first.body)
            else:
                await self._control(ch, first.body)
        except (PeerClosed, ConnectionError, TimeoutError, ProtocolError) as exc:
            log.info("connection dropped before its session started: %s", exc)
            ch.close()

    async def _first_frame(self, ch: Channel) -> Any:
        frame = await ch.recv(self.config.handshake_timeout)
        if frame.msg not in (Msg.HELLO, Msg.DATA_HELLO):
            await self._send_error(ch, ErrorCode.PROTOCOL, f"expected HELLO, got {frame.msg.name}")
            return None
        return frame

    @staticmethod
    async def _send_error(ch: Channel, code: str, message: str) -> None:
        with contextlib.suppress(OSError):
            await ch.send(Msg.ERROR, {"code": str(code), "message": message})
        ch.close()

    # --------------------------------------------------------- control session

    async def _control(self, ch: Channel, hello: dict[str, Any]) -> None:
        cfg = self.config
        if len(self.sessions) >= cfg.max_sessions:
            await self._send_error(
                ch, ErrorCode.LIMIT, f"receiver busy: {cfg.max_sessions} sessions"
            )
            return
        s = Session(id=secrets.token_hex(16), secret=secrets.token_bytes(32))
        s.machine.on(Msg.HELLO)
        self.sessions[s.id] = s
        try:
            await self._run_session(ch, s, hello)
        except RemoteError as exc:
            log.warning("session %s ended (%s): %s", s.id[:8], exc.code, exc)
            await self._send_error(ch, exc.code, str(exc))
        except ProtocolError as exc:
            log.warning("session %s: remote protocol error: %s", s.id[:8], exc)
            await self._send_error(ch, ErrorCode.PROTOCOL, f"protocol error: {exc}")
        except StoreError as exc:
            log.warning("session %s: %s", s.id[:8], exc)
            await self._send_error(ch, exc.code, str(exc))
        except (PeerClosed, ConnectionError, TimeoutError) as exc:
            log.info("session %s: sender gone: %s", s.id[:8], exc)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # our bug: say so to the sender, keep serving the others
            log.exception("session %s: internal error", s.id[:8])
            await self._send_error(ch, ErrorCode.INTERNAL, f"receiver internal error: {exc!r}")
        finally:
            ch.close()
            try:
                await asyncio.to_thread(self._abort, s)
            except asyncio.CancelledError:  # the receiver is stopping: finish the abort here
                self._abort(s)
                raise
            finally:
                self.sessions.pop(s.id, None)
            self.completed_sessions += 1
            if cfg.once and self._stop is not None:
                self._stop.set()

    async def _run_session(self, ch: Channel, s: Session, hello: dict[str, Any]) -> None:
        cfg = self.config
        if need(hello, "version", int, Msg.HELLO) != VERSION:
            raise RemoteError(
                ErrorCode.PROTOCOL, f"protocol version {hello['version']} != {VERSION}"
            )
        cnonce = need(hello, "nonce", str, Msg.HELLO)[:128]
        snonce = secrets.token_hex(16)
        kx, shared = self._negotiate(hello)
        challenge: dict[str, Any] = {"nonce": snonce, "auth_required": cfg.token is not None}
        if kx is not None:
            challenge.update(enc=CIPHER, kx=kx.public_hex)
        await ch.send(Msg.CHALLENGE, challenge)
        auth = await ch.recv(cfg.handshake_timeout)
        s.machine.on(auth.msg)
        if auth.msg is Msg.ERROR:
            return
        welcome: dict[str, Any] = {"session": s.id}
        if cfg.token is not None:
            if not check_proof(
                proof(cfg.token, b"xfer-client", snonce, cnonce), auth.body.get("proof")
            ):
                raise RemoteError(ErrorCode.AUTH, "authentication failed: wrong or missing token")
            s.secret = data_secret(cfg.token, snonce, cnonce)
            welcome["proof"] = proof(cfg.token, b"xfer-server", snonce, cnonce)
        else:
            welcome["data_secret"] = s.secret.hex()
        await ch.send(Msg.WELCOME, welcome)
        if shared is not None:  # everything after WELCOME is sealed, both ways
            s.keys = session_keys(s.secret, shared, snonce, cnonce)
            ch.secure(FrameSealer(s.keys.to_sender), FrameOpener(s.keys.to_receiver))
        await self._open(ch, s)
        await self._active(ch, s)

    def _negotiate(self, hello: dict[str, Any]) -> tuple[KeyExchange | None, bytes | None]:
        """Encryption as the sender asks (HELLO ``enc``, ``kx``) and this receiver allows:
        our key pair and the shared secret, or (None, None) for a session in clear."""
        enc = hello.get("enc")
        if enc is None:
            if self.config.encryption == "on":
                raise RemoteError(
                    ErrorCode.PROTOCOL,
                    "this receiver requires encryption: use an xfer that encrypts "
                    "(--encryption on)",
                )
            return None, None
        if self.config.encryption == "off":
            raise RemoteError(
                ErrorCode.PROTOCOL, "this receiver has encryption off: give --encryption off"
            )
        if enc != CIPHER:
            raise RemoteError(ErrorCode.PROTOCOL, f"unknown cipher {str(enc)[:40]!r}")
        kx = KeyExchange()
        return kx, kx.shared(hello.get("kx"))

    async def _open(self, ch: Channel, s: Session) -> None:
        cfg = self.config
        frame = await ch.recv(cfg.handshake_timeout)
        s.machine.on(frame.msg)
        s.mode = need(frame.body, "mode", str, Msg.OPEN)
        s.checksum = bool(frame.body.get("checksum", True))
        if s.mode not in ("files", "mem"):
            raise ProtocolError(f"unknown mode {s.mode!r}")
        while True:
            frame = await ch.recv(cfg.stall_timeout)
            if s.machine.on(frame.msg) is State.ACTIVE:
                break
            for row in need(frame.body, "entries", list, Msg.MANIFEST):
                e = entry_from_wire(row)
                if e.id != len(s.entries):
                    raise ProtocolError(f"manifest ids must be consecutive: got {e.id}")
                if len(s.entries) >= cfg.max_files:
                    raise RemoteError(ErrorCode.LIMIT, f"manifest exceeds {cfg.max_files} entries")
                s.entries.append(e)
        if s.mode == "mem":
            await ch.send(Msg.READY, {"have": {}, "done": [], "max_block": cfg.max_block})
        else:
            ready = await asyncio.to_thread(self._prepare, s)
            await ch.send(Msg.READY, {**ready, "max_block": cfg.max_block})
            frame = await ch.recv(cfg.stall_timeout)
            if frame.msg is not Msg.KEEP:
                raise ProtocolError(f"expected KEEP after READY, got {frame.msg.name}")
            s.machine.on(frame.msg)
            await asyncio.to_thread(self._keep, s, frame.body)
        s.ready = True
        s.ready_event.set()

    def _keep(self, s: Session, body: dict[str, Any]) -> None:
        """Apply the sender's KEEP: journaled ranges it did not confirm are stale (its file
        changed) and are forgotten, in the book and in the journal, before any block arrives;
        a file whose confirmed ranges cover it (killed just before its rename) is finished."""
        assert s.book is not None and s.store is not None
        kept: dict[int, set[tuple[int, int]]] = {}
        for key, rows in need(body, "have", dict, Msg.KEEP).items():
            fid = int(key) if key.isdigit() else -1
            if fid not in s.offered:
                raise ProtocolError(f"KEEP names file id {key}, which READY did not offer")
            kept[fid] = {(r[0], r[1]) for r in int_list(rows, 2, "KEEP.have")}
        for fid, offered in s.offered.items():
            keep = kept.get(fid, set())
            recs = [r for r in offered if (r[0], r[1]) in keep]
            if len(recs) != len(keep):
                raise ProtocolError(f"KEEP lists ranges of file id {fid} that READY did not offer")
            entry = s.entries[fid]
            if len(recs) < len(offered):
                s.book.keep(fid, [(r[0], r[1]) for r in recs])
                s.store.rewrite_journal(entry, recs)
            fb = s.book.files[fid]
            if fb.complete and not fb.done:
                fb.done = True
                s.store.finalize(entry)
                with s.lock:
                    s.files_done.append(fid)

    def _prepare(self, s: Session) -> dict[str, Any]:
        """Check every path, then open partials and read journals (a worker thread)."""
        paths = frozenset(e.path for e in s.entries)
        if len(paths) != len(s.entries):
            raise ProtocolError("manifest lists the same path twice")
        with self._busy_lock:  # check and claim at once: two sessions never write one path
            busy = paths & self._busy_paths
            if busy:
                raise RemoteError(
                    ErrorCode.LIMIT,
                    f"{sorted(busy)[0]!r} is being written by "
                    "another session; re-run once it has ended",
                )
            self._busy_paths |= paths
            s.claimed = paths
        s.store = Store(
            self.config.root, fsync=self.config.fsync, max_open=self.config.max_open_files
        )
        s.store.check_paths(s.entries)
        s.book = Book(s.entries)
        have: dict[str, list[list[int]]] = {}
        done: list[int] = []
        for e in s.entries:
            complete, ranges = s.store.prepare(e)
            if complete:
                s.book.files[e.id].done = True
                done.append(e.id)
                continue
            for off, ln, _digest in ranges:
                s.book.preload(e.id, off, ln)
            if ranges:
                s.offered[e.id] = ranges
                have[str(e.id)] = [list(r) for r in ranges]
        return {"have": have, "done": done}

    async def _active(self, ch: Channel, s: Session) -> None:
        """Blocks flow: push acks every 10 ms, sync the journal every second, until BYE."""
        recv_task = asyncio.ensure_future(ch.recv())
        last_sync = idle_since = time.monotonic()
        try:
            while True:
                done, _ = await asyncio.wait({recv_task}, timeout=0.01)
                await self._flush_acks(ch, s)
                if s.error is not None:
                    raise RemoteError(*s.error)
                now = time.monotonic()
                if s.data_socks:
                    idle_since = now
                elif now - idle_since > self.config.stall_timeout and not done:
                    raise RemoteError(
                        ErrorCode.TIMEOUT,
                        (
                            f"no data connection and no control message for "
                            f"{self.config.stall_timeout:g} s: the sender is gone; session ended, "
                            "verified data kept (re-run to resume)"
                        ),
                    )
                if time.monotonic() - last_sync >= self.config.sync_interval and s.store:
                    await asyncio.to_thread(s.store.sync)
                    last_sync = time.monotonic()
                if done:
                    frame = recv_task.result()
                    if s.machine.on(frame.msg) is State.FAILED:
                        return
                    if frame.msg is not Msg.BYE:
                        raise ProtocolError(f"{frame.msg.name} not allowed while blocks flow")
                    await self._finish(ch, s)
                    return
        finally:
            recv_task.cancel()

    async def _flush_acks(self, ch: Channel, s: Session) -> None:
        with s.lock:
            ok, bad, files = s.acks_ok, s.acks_bad, s.files_done
            s.acks_ok, s.acks_bad, s.files_done = [], [], []
        if ok or bad:
            await ch.send(Msg.ACK, {"ok": ok, "bad": bad})
        if files:
            await ch.send(Msg.FILE_DONE, {"ids": files})

    async def _finish(self, ch: Channel, s: Session) -> None:
        for sock in list(s.data_socks):  # all blocks arrived: let stream threads end
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        if s.store is not None:
            await asyncio.to_thread(s.store.sync)
            await asyncio.to_thread(s.store.finish_dirs, s.entries)
        await self._flush_acks(ch, s)
        book = s.book
        missing = [e.path for e in book.unfinished()] if book else []
        await ch.send(
            Msg.SUMMARY,
            {
                "bytes_received": s.bytes_received,
                "bytes_verified": book.bytes_verified if book else s.bytes_received,
                "dup_bytes": book.dup_bytes if book else 0,
                "blocks_bad": s.blocks_bad,
                "auth_failures": s.auth_failures,
                "encryption": CIPHER if s.keys else "off",
                "streams_seen": s.streams_seen,
                "files_missing": missing[:100],
                "files_missing_count": len(missing),
                "seconds": time.monotonic() - s.started,
            },
        )

    def _abort(self, s: Session) -> None:
        """End a session: stop its streams and make what was verified durable (resumable).
        Runs in a worker thread (it may fsync and wait for writers). The store is closed, not
        dropped: a stream thread still inside a block gets a StoreError, never a closed fd."""
        for sock in list(s.data_socks):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        if s.store is not None:
            with contextlib.suppress(StoreError, OSError):
                s.store.sync()
            s.store.close()
        with self._busy_lock:
            self._busy_paths -= s.claimed
            s.claimed = frozenset()

    # ------------------------------------------------------------ data streams

    async def _data_hello(self, ch: Channel, body: dict[str, Any]) -> None:
        sid = need(body, "session", str, Msg.DATA_HELLO)
        stream = need(body, "stream", int, Msg.DATA_HELLO)
        nonce = need(body, "nonce", str, Msg.DATA_HELLO)[:128]
        s = self.sessions.get(sid)
        if s is None or not check_proof(
            proof(s.secret, b"xfer-stream", sid, str(stream), nonce), body.get("proof")
        ):
            await self._send_error(
                ch, ErrorCode.AUTH, "data connection not bound to a live session"
            )
            return
        if not s.ready:  # the sender opens streams right after KEEP: wait for us to apply it
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(s.ready_event.wait(), self.config.handshake_timeout)
        if (
            not s.ready
            or s.machine.state is not State.ACTIVE
            or len(s.data_socks) >= self.config.max_streams
        ):
            await self._send_error(ch, ErrorCode.LIMIT, "session not active or too many streams")
            return
        if ch.decoder.pending:
            raise ProtocolError("data sent before DATA_OK")
        opener = None
        if s.keys is not None:  # each connection has its own key; a stream id is used once
            if stream in s.streams_used:
                await self._send_error(ch, ErrorCode.AUTH, f"stream id {stream} used before")
                return
            s.streams_used.add(stream)
            opener = BlockOpener(s.keys.data, stream, nonce)
        sock = ch.sock
        set_timeouts(sock, self.config.stall_timeout)
        sock.sendall(DATA_OK)
        with s.lock:
            s.data_socks.add(sock)
            s.streams_seen += 1
        t = threading.Thread(
            target=self._data_thread,
            args=(s, sock, opener),
            daemon=True,
            name=f"xfer-rx-{sid[:6]}-{stream}",
        )
        t.start()

    def _data_thread(self, s: Session, sock: socket.socket, opener: BlockOpener | None) -> None:
        hdr = bytearray(BLOCK_HEADER.size)
        buf = bytearray(1 << 20)
        tag = TAG if opener else 0
        try:
            while True:
                if not recv_exact(sock, memoryview(hdr)):
                    raise PeerClosed("data connection closed without END")
                h = decode_block_header(hdr)
                if h.kind is BlockKind.END:
                    if opener is not None:
                        _sealed_end(sock, opener)
                    break
                if h.length > self.config.max_block:
                    raise ProtocolError(
                        f"block of {h.length} bytes exceeds this receiver's "
                        f"max_block {self.config.max_block}"
                    )
                if len(buf) < h.length + tag:
                    buf = bytearray(min(self.config.max_block, max(h.length, 2 * len(buf))) + tag)
                if opener is None:
                    self._block(s, sock, h, memoryview(buf)[: h.length])
                else:
                    self._sealed_block(s, sock, opener, hdr, h, memoryview(buf)[: h.length + tag])
        except Tampered as exc:  # unauthenticated bytes: drop this connection, not the session
            with s.lock:
                s.auth_failures += 1
            log.warning("session %s: %s; data connection dropped", s.id[:8], exc)
        except ProtocolError as exc:
            if opener is not None and not _authenticated(exc):
                with s.lock:  # a header we could not yet authenticate: treat as tampering
                    s.auth_failures += 1
                log.warning("session %s: bad data header (%s); connection dropped", s.id[:8], exc)
            else:
                s.fail(ErrorCode.PROTOCOL, f"protocol error on a data connection: {exc}")
        except StoreError as exc:
            s.fail(exc.code, str(exc))
        except (PeerClosed, Stalled, OSError) as exc:
            log.info("session %s: data connection ended: %s", s.id[:8], exc)
        finally:
            with s.lock:
                s.data_socks.discard(sock)
            with contextlib.suppress(OSError):
                sock.close()

    def _sealed_block(
        self,
        s: Session,
        sock: socket.socket,
        opener: BlockOpener,
        hdr: bytearray,
        h: BlockHeader,
        sealed: memoryview,
    ) -> None:
        """An encrypted block: read and authenticate it before anything else looks at it.
        A block that fails is reported bad (the sender re-queues it) and counted, never
        written; its connection is dropped (its framing cannot be trusted any more)."""
        if not recv_exact(sock, sealed):
            raise PeerClosed("connection closed inside a block")
        try:
            plain = opener.open(hdr, sealed)
        except Tampered:
            with s.lock:
                s.acks_bad.append([h.file_id, h.offset, h.length])
            raise
        journal = s.checksum and s.mode == "files"  # the tag verified it; the hash is for resume
        digest = xxhash.xxh3_64_intdigest(plain) if journal else 0
        try:
            self._block(s, sock, replace(h, digest=digest), plain, received=True)
        except ProtocolError as exc:  # the authenticated sender broke the protocol
            raise _Authenticated(str(exc)) from None

    def _block(
        self, s: Session, sock: socket.socket, h: Any, view: memoryview, received: bool = False
    ) -> None:
        fb = None
        if s.mode == "files":
            assert s.book is not None
            with s.lock:
                fb = s.book.check(h.file_id, h.offset, h.length)
        if not received and not recv_exact(sock, view):
            raise PeerClosed("connection closed inside a block")
        s.bytes_received += h.length
        if s.checksum and not received and xxhash.xxh3_64_intdigest(view) != h.digest:
            with s.lock:
                s.blocks_bad += 1
                s.acks_bad.append([h.file_id, h.offset, h.length])
            return
        assert s.store is not None or fb is None
        key = (h.file_id, h.offset)
        with s.lock:
            if fb is None:  # memory mode: nothing to write
                s.acks_ok.append([h.file_id, h.offset, h.length])
                return
            dup = fb.done or fb.lengths.get(h.offset) == h.length
            if dup or key in s.writing:  # a copy arriving while another is written: its
                assert s.book is not None  # writer acks it
                s.book.dup_bytes += h.length
                if dup:
                    s.acks_ok.append([h.file_id, h.offset, h.length])
                return
            s.writing.add(key)
        try:
            self._write_block(s, fb, h, view)
        finally:
            with s.lock:
                s.writing.discard(key)

    def _write_block(self, s: Session, fb: Any, h: Any, view: memoryview) -> None:
        """Write one verified, new block; record it; finish its file when it is complete."""
        assert s.store is not None and s.book is not None
        entry = fb.entry
        try:
            s.store.write(entry, h.offset, view)
            s.store.record(entry, h.offset, h.length, h.digest)
        except (StoreError, FileNotFoundError):
            if fb.done:  # finished by another stream meanwhile: this was a duplicate
                with s.lock:  # ack it, or the sender waits for it forever
                    s.acks_ok.append([h.file_id, h.offset, h.length])
                return
            raise
        with s.lock:
            _new, complete = s.book.verified(h.file_id, h.offset, h.length)
            if complete:
                s.book.files[h.file_id].done = True
        if complete:
            s.store.finalize(entry)
        with s.lock:
            s.acks_ok.append([h.file_id, h.offset, h.length])
            if complete:
                s.files_done.append(h.file_id)


class _Authenticated(ProtocolError):
    """A protocol error in an authenticated block: the sender's, so the session fails."""


def _authenticated(exc: ProtocolError) -> bool:
    return isinstance(exc, _Authenticated)


def _sealed_end(sock: socket.socket, opener: BlockOpener) -> None:
    tag = bytearray(TAG)
    if not recv_exact(sock, memoryview(tag)):
        raise PeerClosed("connection closed inside END")
    opener.check_end(tag)
