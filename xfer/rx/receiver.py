"""The receiver: an asyncio server for control connections, one thread per data connection.

Three rooms: this module accepts connections and sorts them by their first frame (the
lifecycle, limits, the data connections' admission); ``xfer/rx/rxsession.py`` runs each session's
control side (a :class:`~xfer.wire.connection.ReceiverConnection` carried on the event loop: the
handshake, manifest, KEEP, acks, summary); ``xfer/rx/rxstream.py`` is the data path, one thread per
data connection that only reads, hashes and writes blocks. A session that fails (bad frame,
bad path, full disk, lost sender) ends alone; the receiver keeps serving the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
import time
from typing import Any

from xfer.addr import split_hostport as split_hostport  # re-exported (was defined here)
from xfer.channel import Channel, Link, PeerClosed, set_timeouts
from xfer.config import ReceiverConfig as ReceiverConfig  # re-exported (was defined here)
from xfer.errors import RemoteError
from xfer.rx.rxsession import Claims, Control, Session
from xfer.rx.rxstream import Stream, serve
from xfer.rx.store import StoreError
from xfer.transport import listen_any
from xfer.wire.connection import ReceiverConnection
from xfer.wire.protocol import DATA_OK, ErrorCode, Frame, Msg, ProtocolError, need

log = logging.getLogger("xfer.receiver")


class Receiver:
    """Serves many senders at once. ``await serve()`` in a loop, or ``start()``/``stop()``
    from synchronous code (the library API)."""

    def __init__(self, config: ReceiverConfig) -> None:
        self.config = config
        self.sessions: dict[str, Session] = {}
        self.address: tuple[str, int] | None = None
        self._listener: socket.socket | None = None
        self._stop: asyncio.Event | None = None
        self._claims = Claims()
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
                await self._control(ch, first)
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

    async def _control(self, ch: Channel, hello: Frame) -> None:
        cfg = self.config
        if len(self.sessions) >= cfg.max_sessions:
            await self._send_error(
                ch, ErrorCode.LIMIT, f"receiver busy: {cfg.max_sessions} sessions"
            )
            return
        conn = ReceiverConnection(
            token=cfg.token,
            encryption=cfg.encryption,
            max_files=cfg.max_files,
            max_block=cfg.max_block,
            now=time.monotonic(),
            decoder=ch.decoder,  # with whatever the sender sent after HELLO
        )
        s = Session(conn)
        self.sessions[s.id] = s
        control = Control(cfg, s, Link(ch.sock, conn), self._claims)
        try:
            await control.run(hello)
        finally:
            ch.close()
            try:
                await control.settle()
                await asyncio.to_thread(self._abort, s)
            except asyncio.CancelledError:  # the receiver is stopping: finish the abort here
                self._abort(s)
                raise
            finally:
                self.sessions.pop(s.id, None)
            self.completed_sessions += 1
            if cfg.once and self._stop is not None:
                self._stop.set()

    def _abort(self, s: Session) -> None:
        """End a session: stop its streams and make what was verified durable (resumable).
        Runs in a worker thread (it may fsync and wait for writers). The store is closed, not
        dropped: a stream thread still inside a block gets a StoreError, never a closed fd."""
        s.shutdown_streams()
        if s.store is not None:
            with contextlib.suppress(StoreError, OSError):
                s.store.sync()
            s.store.close()
        self._claims.release(s)

    # ------------------------------------------------------------ data streams

    async def _data_hello(self, ch: Channel, body: dict[str, Any]) -> None:
        s = self.sessions.get(need(body, "session", str, Msg.DATA_HELLO))
        try:
            if s is None:
                raise RemoteError(ErrorCode.AUTH, "data connection not bound to a live session")
            stream, nonce = s.conn.stream_hello(body)
            if not s.ready:  # the sender opens streams right after KEEP: wait for us to apply it
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(s.ready_event.wait(), self.config.handshake_timeout)
            if not s.ready:
                raise RemoteError(ErrorCode.LIMIT, "session not active or too many streams")
            if ch.decoder.pending:
                raise ProtocolError("data sent before DATA_OK")
            opener = s.conn.accept_stream(stream, nonce, len(s.data_socks), self.config.max_streams)
        except RemoteError as exc:
            await self._send_error(ch, exc.code, str(exc))
            return
        sock = ch.sock
        set_timeouts(sock, self.config.stall_timeout)
        sock.sendall(DATA_OK)
        with s.lock:
            s.data_socks.add(sock)
        conn = s.conn
        rx = Stream(
            sock,
            s.inbox,
            s.writing,
            book=conn.book,
            store=s.store,
            checksum=conn.checksum,
            max_block=self.config.max_block,
            opener=opener,
        )
        name = f"xfer-rx-{s.id[:6]}-{stream}"
        args = (rx, s.id, s.fail, s.stream_ended)
        threading.Thread(target=serve, args=args, daemon=True, name=name).start()
