"""Thin asyncio adapters between a socket and the sans-IO protocol (:class:`Link` carries a
connection object's bytes; :class:`Channel` reads a connection's first frame), plus the
blocking helpers the data-path threads use."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import time
from collections.abc import Callable
from typing import Any, Protocol

from xfer.wire.protocol import MAX_CTRL_FRAME, Frame, FrameDecoder, Msg, encode


class PeerClosed(ConnectionError):
    """The peer closed the connection."""


async def read(sock: socket.socket) -> bytes:
    """What a non-blocking socket has (waiting for something); PeerClosed at EOF."""
    data = await asyncio.get_running_loop().sock_recv(sock, 1 << 16)
    if not data:
        raise PeerClosed("peer closed the control connection")
    return data


class Channel:
    """A connection's first frames, before it is known what it is: receive whole frames
    (one at a time, the rest stays in ``decoder``), send an ERROR. A control connection then
    goes to a sans-IO connection on a :class:`Link`."""

    def __init__(self, sock: socket.socket, max_frame: int = MAX_CTRL_FRAME) -> None:
        sock.setblocking(False)
        self.sock = sock
        self.loop = asyncio.get_running_loop()
        self.decoder = FrameDecoder(max_frame)

    async def recv(self, timeout: float | None = None) -> Frame:
        """The next frame; raises PeerClosed at EOF, ProtocolError on a bad frame,
        TimeoutError after ``timeout`` seconds."""
        async with asyncio.timeout(timeout):
            while True:
                frame = next(self.decoder.frames(), None)  # one frame: the rest stays buffered
                if frame is not None:
                    return frame
                self.decoder.feed(await read(self.sock))

    async def send(self, msg: Msg, body: dict[str, Any] | None = None) -> None:
        await self.loop.sock_sendall(self.sock, encode(msg, body))

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


Timeout = float | Callable[[], float | None] | None
"""Seconds to wait for the peer's next frame, or a function giving them."""


class Connection(Protocol):
    """What :class:`Link` needs of a sans-IO connection (``xfer.wire.connection``)."""

    def receive_data(self, data: bytes) -> None: ...
    def next_event(self, now: float) -> Any: ...
    def data_to_send(self) -> bytes: ...
    @property
    def frames_received(self) -> int: ...


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

    async def next_event(self, timeout: Timeout = None) -> Any:
        """The connection's next event, reading as needed (and sending its answers); raises
        PeerClosed at EOF, TimeoutError when the peer sends no whole frame for ``timeout``
        seconds (a number, or a function of nothing asked again after each frame: the wait
        may depend on the connection's state)."""
        limit = timeout if callable(timeout) else lambda: timeout
        deadline = self._deadline(limit())
        while True:
            frames = self.conn.frames_received
            event = self.conn.next_event(time.monotonic())
            await self.flush()
            if event is not None:
                return event
            if self.conn.frames_received != frames:
                deadline = self._deadline(limit())
            async with asyncio.timeout_at(deadline):
                self.conn.receive_data(await read(self.sock))

    def _deadline(self, seconds: float | None) -> float | None:
        return None if seconds is None else self.loop.time() + seconds
