"""Thin asyncio adapter between a socket and the sans-IO frame codec, plus the blocking helpers
the data-path threads use."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import time
from typing import TYPE_CHECKING, Any, Protocol

from xfer.protocol import MAX_CTRL_FRAME, Frame, FrameDecoder, Msg, encode

if TYPE_CHECKING:
    from xfer.crypto import FrameOpener, FrameSealer


class PeerClosed(ConnectionError):
    """The peer closed the connection."""


class Channel:
    """A control connection: send and receive whole frames."""

    def __init__(self, sock: socket.socket, max_frame: int = MAX_CTRL_FRAME) -> None:
        sock.setblocking(False)
        self.sock = sock
        self.loop = asyncio.get_running_loop()
        self.decoder = FrameDecoder(max_frame)
        self._send_lock = asyncio.Lock()
        self._sealer: FrameSealer | None = None

    def secure(self, sealer: FrameSealer, opener: FrameOpener) -> None:
        """From now on, seal every frame sent and open every frame received (AES-256-GCM)."""
        self._sealer = sealer
        self.decoder.opener = opener

    @property
    def sealed(self) -> bool:
        return self._sealer is not None

    async def recv(self, timeout: float | None = None) -> Frame:
        """The next frame; raises PeerClosed at EOF, ProtocolError on a bad frame,
        TimeoutError after ``timeout`` seconds."""
        async with asyncio.timeout(timeout):
            while True:
                frame = next(self.decoder.frames(), None)  # one frame: the rest stays buffered
                if frame is not None:
                    return frame
                data = await self.loop.sock_recv(self.sock, 1 << 16)
                if not data:
                    raise PeerClosed("peer closed the control connection")
                self.decoder.feed(data)

    async def send(self, msg: Msg, body: dict[str, Any] | None = None) -> None:
        data = encode(msg, body)
        async with self._send_lock:
            if self._sealer is not None:  # under the lock: frames are counted in send order
                data = self._sealer.seal(data)
            await self.loop.sock_sendall(self.sock, data)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


# ------------------------------------------------------------------- blocking helpers

_TIMEVAL = struct.Struct("ll")


def set_timeouts(sock: socket.socket, seconds: float) -> None:
    """Kernel-level send/receive timeouts on a blocking socket (SO_SNDTIMEO/SO_RCVTIMEO):
    a call that makes no progress for ``seconds`` fails with EAGAIN instead of hanging."""
    sock.setblocking(True)
    tv = _TIMEVAL.pack(int(seconds), int((seconds % 1) * 1e6))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, tv)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, tv)


class Stalled(TimeoutError):
    """No progress on a data connection for the configured stall time."""


def recv_exact(sock: socket.socket, view: memoryview) -> bool:
    """Fill ``view`` from a blocking socket. False on a clean EOF before the first byte;
    PeerClosed on EOF mid-way; Stalled when the receive timeout expires."""
    got = 0
    n = len(view)
    while got < n:
        try:
            k = sock.recv_into(view[got:], n - got, socket.MSG_WAITALL)
        except BlockingIOError:
            raise Stalled("no data received within the stall timeout") from None
        if k == 0:
            if got == 0:
                return False
            raise PeerClosed(f"connection closed after {got} of {n} bytes")
        got += k
    return True


def send_all(sock: socket.socket, data: bytes | memoryview, flags: int = 0) -> None:
    """sendall on a blocking socket with SO_SNDTIMEO, mapping EAGAIN to Stalled."""
    try:
        sock.sendall(data, flags)
    except BlockingIOError:
        raise Stalled("no send progress within the stall timeout") from None


# ------------------------------------------------------------------- sans-IO connections


class Connection(Protocol):
    """What :class:`Link` needs of a sans-IO connection (``xfer.connection``)."""

    def receive_data(self, data: bytes) -> None: ...
    def next_event(self, now: float) -> Any: ...
    def data_to_send(self) -> bytes: ...


class Link:
    """Carries a sans-IO connection's bytes over a non-blocking socket: the only place its
    control connection touches the network and the clock."""

    def __init__(self, sock: socket.socket, conn: Connection) -> None:
        sock.setblocking(False)
        self.sock = sock
        self.conn = conn
        self.loop = asyncio.get_running_loop()
        self._send_lock = asyncio.Lock()

    async def flush(self) -> None:
        """Send whatever the connection has queued (frames leave in the order queued)."""
        async with self._send_lock:
            data = self.conn.data_to_send()
            if data:
                await self.loop.sock_sendall(self.sock, data)

    async def next_event(self, timeout: float | None = None) -> Any:
        """The connection's next event, reading as needed (and sending its answers); raises
        PeerClosed at EOF, TimeoutError after ``timeout`` seconds."""
        async with asyncio.timeout(timeout):
            while True:
                event = self.conn.next_event(time.monotonic())
                await self.flush()
                if event is not None:
                    return event
                data = await self.loop.sock_recv(self.sock, 1 << 16)
                if not data:
                    raise PeerClosed("peer closed the control connection")
                self.conn.receive_data(data)
