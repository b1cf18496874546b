"""Test tools that break things on purpose.

* :class:`Hostile`: a hand-written client that speaks xfer's wire protocol directly (blocking
  sockets, no engine code on the sending side except the frame encoder and the proof helpers)
  so tests can send what the real sender never would: paths outside the root, blocks beyond a
  file's end, bad hashes, half blocks, garbage.
* :class:`Proxy`: a loopback TCP forwarder between a real sender and a real receiver that can
  reset, freeze or corrupt one connection at an exact byte offset.
* Process helpers: start ``xfer recv`` / ``xfer send`` as subprocesses (so they can be
  SIGKILLed) and watch the receiver's journal to decide when to kill.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import xxhash

from xfer.rx.store import JOURNAL_RECORD, PARTIAL_DIR
from xfer.wire.protocol import (
    BLOCK_HEADER,
    CTRL_HEADER,
    DATA_OK,
    END_HEADER,
    VERSION,
    Frame,
    FrameDecoder,
    Msg,
    ProtocolError,
    block_header,
    data_secret,
    encode,
    proof,
)

LINGER_RST = struct.pack("ii", 1, 0)


def rst(sock: socket.socket) -> None:
    """Close with a TCP RST (SO_LINGER 0), as a crashed host or a middlebox would."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, LINGER_RST)
    with contextlib.suppress(OSError):  # wake a thread blocked in recv (else close waits for it)
        sock.shutdown(socket.SHUT_RD)
    with contextlib.suppress(OSError):
        sock.close()


def split(address: str | tuple[str, int]) -> tuple[str, int]:
    if isinstance(address, tuple):
        return address
    host, _, port = address.rpartition(":")
    return host, int(port)


# ---------------------------------------------------------------------------- the client


class Hostile:
    """One control connection to a receiver, driven frame by frame."""

    def __init__(self, address: str | tuple[str, int], timeout: float = 5.0) -> None:
        self.address = split(address)
        self.timeout = timeout
        self.sock = socket.create_connection(self.address, timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.decoder = FrameDecoder()
        self.frames: list[Frame] = []
        self.session = ""
        self.secret = b""

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()

    def __enter__(self) -> Hostile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ frames

    def send(self, msg: Msg | int, body: Any = None) -> None:
        """Send one frame; ``body`` may be any JSON value (not only an object)."""
        payload = json.dumps({} if body is None else body).encode()
        self.send_raw(CTRL_HEADER.pack(int(msg), len(payload)) + payload)

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def recv(self, timeout: float | None = None) -> Frame | None:
        """The next frame, or None when the receiver closed (or reset) the connection."""
        self.sock.settimeout(self.timeout if timeout is None else timeout)
        while not self.frames:
            try:
                data = self.sock.recv(1 << 16)
            except ConnectionResetError:
                return None
            if not data:
                return None
            self.decoder.feed(data)
            self.frames.extend(self.decoder.frames())
        return self.frames.pop(0)

    def expect(self, msg: Msg, timeout: float | None = None) -> Frame:
        frame = self.recv(timeout)
        if frame is None or frame.msg is not msg:
            raise AssertionError(f"expected {msg.name}, got {frame}")
        return frame

    def outcome(self, timeout: float | None = None) -> tuple[str, str]:
        """Read until the receiver ends the session: ``("error", code)`` for an ERROR frame,
        ``("closed", "")`` when it just closed. Other frames (acks) are skipped."""
        while True:
            try:
                frame = self.recv(timeout)
            except ProtocolError as exc:  # the receiver must never send garbage
                raise AssertionError(f"receiver sent a bad frame: {exc}") from None
            if frame is None:
                return "closed", ""
            if frame.msg is Msg.ERROR:
                return "error", str(frame.body.get("code")) + ": " + str(frame.body.get("message"))

    # --------------------------------------------------------------- a session

    def handshake(self, token: bytes | None = None) -> Frame:
        """HELLO, CHALLENGE, AUTH; returns WELCOME (or the ERROR frame)."""
        cnonce = secrets.token_hex(16)
        self.send(Msg.HELLO, {"version": VERSION, "nonce": cnonce})
        chal = self.expect(Msg.CHALLENGE)
        snonce = chal.body["nonce"]
        self.send(
            Msg.AUTH, {"proof": proof(token, b"xfer-client", snonce, cnonce)} if token else {}
        )
        frame = self.recv()
        assert frame is not None, "receiver closed during the handshake"
        if frame.msg is Msg.WELCOME:
            self.session = frame.body["session"]
            self.secret = (
                data_secret(token, snonce, cnonce)
                if token
                else bytes.fromhex(frame.body["data_secret"])
            )
        return frame

    def open(
        self,
        entries: list[list[Any]],
        mode: str = "files",
        token: bytes | None = None,
        keep: dict[str, Any] | None = None,
    ) -> Frame:
        """Handshake, OPEN, one MANIFEST, MANIFEST_END; returns READY (after answering it with
        KEEP ``keep``, by default keeping nothing, in files mode) or ERROR."""
        welcome = self.handshake(token)
        if welcome.msg is not Msg.WELCOME:
            return welcome
        self.send(Msg.OPEN, {"mode": mode, "checksum": True, "block_size": 1 << 20})
        self.send(Msg.MANIFEST, {"entries": entries})
        self.send(Msg.MANIFEST_END, {})
        frame = self.recv()
        assert frame is not None, "receiver closed instead of answering the manifest"
        if frame.msg is Msg.READY and mode == "files":
            self.send(Msg.KEEP, {"have": keep or {}})
        return frame

    def data(
        self, stream: int = 0, secret: bytes | None = None, session: str | None = None
    ) -> socket.socket:
        """A data connection of this session (DATA_HELLO answered by DATA_OK)."""
        sock = self.data_raw(stream, secret, session)
        got = sock.recv(1)
        if got != DATA_OK:
            sock.close()
            raise ConnectionRefusedError(f"receiver refused the data connection ({got!r})")
        return sock

    def data_raw(
        self, stream: int = 0, secret: bytes | None = None, session: str | None = None
    ) -> socket.socket:
        """Connect and send DATA_HELLO without waiting for the answer."""
        sid = self.session if session is None else session
        key = self.secret if secret is None else secret
        nonce = secrets.token_hex(8)
        sock = socket.create_connection(self.address, timeout=self.timeout)
        sock.sendall(
            encode(
                Msg.DATA_HELLO,
                {
                    "session": sid,
                    "stream": stream,
                    "nonce": nonce,
                    "proof": proof(key, b"xfer-stream", sid, str(stream), nonce),
                },
            )
        )
        return sock

    def bye(self) -> Frame:
        """BYE, then the frames up to SUMMARY (acks skipped)."""
        self.send(Msg.BYE, {})
        while True:
            frame = self.recv()
            assert frame is not None, "receiver closed instead of sending SUMMARY"
            if frame.msg in (Msg.SUMMARY, Msg.ERROR):
                return frame

    def acks(self, until: float = 3.0) -> tuple[list[list[int]], list[list[int]], list[int]]:
        """Collect ACK ok/bad rows and FILE_DONE ids for ``until`` seconds."""
        ok: list[list[int]] = []
        bad: list[list[int]] = []
        done: list[int] = []
        deadline = time.monotonic() + until
        while time.monotonic() < deadline:
            try:
                frame = self.recv(max(0.01, deadline - time.monotonic()))
            except TimeoutError:
                break
            if frame is None:
                break
            if frame.msg is Msg.ACK:
                ok += frame.body["ok"]
                bad += frame.body["bad"]
            elif frame.msg is Msg.FILE_DONE:
                done += frame.body["ids"]
        return ok, bad, done


def send_block(
    sock: socket.socket, file_id: int, offset: int, data: bytes, digest: int | None = None
) -> None:
    """One block header plus payload (``digest`` overrides the real xxh3)."""
    d = xxhash.xxh3_64_intdigest(data) if digest is None else digest
    sock.sendall(block_header(file_id, offset, len(data), d) + data)


def end_stream(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.sendall(END_HEADER)
        sock.shutdown(socket.SHUT_WR)
        sock.settimeout(5)
        sock.recv(1)
    sock.close()


def file_row(
    fid: int, path: str, size: int, mtime_ns: int = 1_600_000_000 * 10**9, mode: int = 0o644
) -> list[Any]:
    return [fid, "f", path, size, mtime_ns, mode]


def dir_row(fid: int, path: str) -> list[Any]:
    return [fid, "d", path, 0, 1_600_000_000 * 10**9, 0o755]


assert BLOCK_HEADER.size == 25


# ----------------------------------------------------------------------------- the proxy


class Proxy:
    """Forwards loopback connections to ``target``; data connections (first byte DATA_HELLO)
    are numbered 0, 1, ... in the order they arrive. Faults, set before or during a run:

    * ``reset_data = (k, n)``: RST data connection k (both sides) after forwarding n bytes
      from the sender;
    * ``freeze_data = (k, n)``: after n bytes, stop reading from data connection k and forward
      nothing more either way (a stalled path);
    * ``corrupt = (k, n)``: flip one bit of byte n of data connection k;
    * ``crawl = (k, bps)``: forward data connection k from the sender at ``bps`` bytes/s
      (with a small ``rcvbuf`` the sender's send() blocks: a stream slowed to a crawl);
    * ``corrupt_blocks = True``: flip one bit of the first payload byte of every block on every
      data connection (the proxy follows the block framing);
    * ``reset_control()``: RST the control connection now;
    * ``tamper = Tamper(...)``: an on-path attacker on an encrypted session (see
      :class:`Tamper`): flips bits in chosen block headers, payloads and control frames.
    """

    def __init__(self, target: str | tuple[str, int], rcvbuf: int | None = None) -> None:
        self.target = split(target)
        self.lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if rcvbuf:  # inherited by accepted sockets: a frozen connection fills up quickly
            self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(64)
        self.address = f"127.0.0.1:{self.lsock.getsockname()[1]}"
        self.reset_data: tuple[int, int] | None = None
        self.freeze_data: tuple[int, int] | None = None
        self.corrupt: tuple[int, int] | None = None
        self.crawl: tuple[int, float] | None = None
        self.corrupt_blocks = False
        self.tamper: Tamper | None = None
        self.data_count = 0
        self.control: list[socket.socket] = []
        self.events: list[str] = []
        self._closing = False
        self._socks: list[socket.socket] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._closing = True
        with contextlib.suppress(OSError):
            self.lsock.close()
        for s in list(self._socks):
            with contextlib.suppress(OSError):
                s.close()

    def __enter__(self) -> Proxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def reset_control(self) -> None:
        for s in self.control:
            rst(s)
        self.events.append("control reset")

    def _accept(self) -> None:
        while not self._closing:
            try:
                client, _ = self.lsock.accept()
            except OSError:
                return
            threading.Thread(target=self._pair, args=(client,), daemon=True).start()

    def _pair(self, client: socket.socket) -> None:
        try:
            server = socket.create_connection(self.target, timeout=10)
        except OSError:
            client.close()
            return
        server.settimeout(None)
        self._socks += [client, server]
        first = client.recv(1, socket.MSG_PEEK)
        kind, index = "control", -1
        if first and first[0] == Msg.DATA_HELLO:
            with self._lock:
                kind, index = "data", self.data_count
                self.data_count += 1
        else:
            self.control += [client, server]
        idx = index if kind == "data" else None
        threading.Thread(target=self._pump, args=(server, client, idx, False), daemon=True).start()
        self._pump(client, server, idx, True)

    def _pump(self, src: socket.socket, dst: socket.socket, index: int | None, up: bool) -> None:
        """Copy src -> dst, applying the faults aimed at data connection ``index`` (``up``:
        the sender-to-receiver direction)."""
        done = 0
        framing = _Framing()
        tamper = self.tamper.stream(index, up) if self.tamper else None
        crawl = self.crawl[1] if self.crawl and up and self.crawl[0] == index else None
        try:
            while True:
                data = src.recv(4096 if crawl else 1 << 16)
                if data and crawl:
                    time.sleep(len(data) / crawl)
                if data and tamper is not None:
                    data = tamper.feed(bytearray(data))
                if not data:
                    if index is not None and not up:
                        self.events.append(f"receiver closed data connection {index}")
                    with contextlib.suppress(OSError):
                        dst.shutdown(socket.SHUT_WR)
                    return
                if index is not None and up:
                    if self.corrupt_blocks:
                        data = framing.corrupt(bytearray(data))
                    data = self._faults(index, done, bytearray(data), src, dst)
                    if data is None:
                        return
                done += len(data)
                dst.sendall(data)
        except OSError:
            rst(dst)
            rst(src)

    def _faults(
        self, index: int, done: int, data: bytearray, src: socket.socket, dst: socket.socket
    ) -> bytearray | None:
        end = done + len(data)
        spec = self.corrupt
        if spec and spec[0] == index and done <= spec[1] < end:
            data[spec[1] - done] ^= 0x01
            self.events.append(f"corrupted byte {spec[1]} of data connection {index}")
        for spec, what in ((self.reset_data, "reset"), (self.freeze_data, "froze")):
            if spec and spec[0] == index and done <= spec[1] < end:
                dst.sendall(data[: spec[1] - done])
                self.events.append(f"{what} data connection {index} after {spec[1]} bytes")
                if what == "reset":
                    rst(src)
                    rst(dst)
                else:
                    while not self._closing:  # read nothing more: the sender's buffers fill
                        time.sleep(0.05)
                return None
        return data


class Tamper:
    """Flips one bit in chosen places of an encrypted session, following its framing (sealed
    block payloads and END carry a 16-byte tag; sealed control frames count it in their
    length). Counts are over the whole session, in the order the proxy sees them:

    * ``headers``: indexes of block headers (all data connections) whose offset field is
      changed;
    * ``payloads``: indexes of block payloads whose first byte is flipped;
    * ``up_frames`` / ``down_frames``: indexes of control frames, sender -> receiver and
      receiver -> sender, whose last byte (in the tag) is flipped.

    ``events`` says what was done."""

    def __init__(
        self,
        headers: tuple[int, ...] = (),
        payloads: tuple[int, ...] = (),
        up_frames: tuple[int, ...] = (),
        down_frames: tuple[int, ...] = (),
    ) -> None:
        self.targets = {
            "header": set(headers),
            "payload": set(payloads),
            "up": set(up_frames),
            "down": set(down_frames),
        }
        self.counts = {k: 0 for k in self.targets}
        self.events: list[str] = []
        self._lock = threading.Lock()

    def hit(self, what: str) -> bool:
        """Count one more ``what``; True if this one is to be tampered with."""
        with self._lock:
            k = self.counts[what]
            self.counts[what] += 1
            if k in self.targets[what]:
                self.events.append(f"{what} {k}")
                return True
            return False

    def stream(self, index: int | None, up: bool) -> _TamperStream | None:
        if index is None:
            return _TamperStream(self, "control", "up" if up else "down")
        return _TamperStream(self, "data", "") if up else None


class _TamperStream:
    """The framing of one direction of one connection, as :class:`Tamper` follows it: a data
    connection is a DATA_HELLO frame, then sealed blocks; a control connection is frames."""

    def __init__(self, tamper: Tamper, kind: str, direction: str) -> None:
        self.t = tamper
        self.kind = kind
        self.direction = direction
        self.buf = bytearray()
        self.state = "hello" if kind == "data" else "frame"
        self.after = "header" if kind == "data" else "frame"  # the state after a body
        self.left = 0
        self.flip_first = False
        self.flip_last = False

    def feed(self, data: bytearray) -> bytearray:
        i = 0
        while i < len(data):
            if self.state == "body":
                n = min(self.left, len(data) - i)
                if self.flip_first:
                    data[i] ^= 0x01
                    self.flip_first = False
                if self.flip_last and n == self.left:
                    data[i + n - 1] ^= 0x01
                    self.flip_last = False
                i += n
                self.left -= n
                if not self.left:
                    self.state = self.after
                continue
            need = BLOCK_HEADER.size if self.state == "header" else CTRL_HEADER.size
            take = min(need - len(self.buf), len(data) - i)
            self.buf += data[i : i + take]
            i += take
            if len(self.buf) < need:
                break
            self._header(data, i - need)
            self.buf = bytearray()
            self.state = "body" if self.left else self.after
        return data

    def _header(self, data: bytearray, start: int) -> None:
        """A header just completed at ``data[start:]`` (``start`` < 0: it straddled two
        reads and cannot be changed any more)."""
        if self.state != "header":  # a control frame, or the DATA_HELLO
            self.left = CTRL_HEADER.unpack(self.buf)[1]
            self.flip_last = self.state == "frame" and self.t.hit(self.direction)
            return
        kind, _fid, _off, length, _digest = BLOCK_HEADER.unpack(self.buf)
        self.left = length + 16 if kind == 1 else 16  # sealed payload + tag, or END's tag
        if kind != 1:
            return
        if self.t.hit("header"):
            if start >= 0:  # even: a bit of the offset; odd: the length's lowest bit
                data[start + (9 if self.t.counts["header"] % 2 else 16)] ^= 0x01
            else:
                self.flip_first = True
        if self.t.hit("payload"):
            self.flip_first = True


class _Framing:
    """Follows a data connection (DATA_HELLO frame, then block headers and payloads) to flip
    the first payload byte of every block."""

    def __init__(self) -> None:
        self.buf = bytearray()
        self.state = "hello"
        self.left = 0
        self.flip = False

    def corrupt(self, data: bytearray) -> bytearray:
        i = 0
        while i < len(data):
            if self.state == "payload":
                n = min(self.left, len(data) - i)
                if self.flip and n:
                    data[i] ^= 0x01
                    self.flip = False
                i += n
                self.left -= n
                if not self.left:
                    self.state = "header"
                continue
            need = CTRL_HEADER.size if self.state == "hello" else BLOCK_HEADER.size
            take = min(need - len(self.buf), len(data) - i)
            self.buf += data[i : i + take]
            i += take
            if len(self.buf) < need:
                break
            if self.state == "hello":
                self.left, self.flip = CTRL_HEADER.unpack(self.buf)[1], False
            else:
                self.left = BLOCK_HEADER.unpack(self.buf)[3]
                self.flip = self.left > 0
            self.state = "payload" if self.left else "header"
            self.buf = bytearray()
        return data


# ----------------------------------------------------------------------------- processes


XFER = [sys.executable, "-m", "xfer.cli"]


class RecvProcess:
    """``xfer recv`` in a subprocess (stderr to a file), ready once it printed its address."""

    def __init__(
        self,
        root: str,
        logfile: str,
        port: int = 0,
        *extra: str,
        env: dict[str, str] | None = None,
        wrap: tuple[str, ...] = (),
    ) -> None:
        """``wrap`` prefixes the command (e.g. ``("prlimit", "--nofile=128:128")``)."""
        self.root = root
        self.logfile = logfile
        self.log = open(logfile, "ab")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(
            [*wrap, *XFER, "recv", "--listen", f"127.0.0.1:{port}", "--root", root, *extra],
            stderr=self.log,
            stdout=subprocess.DEVNULL,
            env=env,
        )
        self.address = self._wait_address()

    def _wait_address(self) -> str:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with open(self.logfile, encoding="utf-8", errors="replace") as f:
                for line in f:
                    if "listening on" in line:
                        return line.split("listening on ")[1].split(",")[0].strip()
            if self.proc.poll() is not None:
                raise RuntimeError(f"xfer recv exited {self.proc.returncode}: {self.stderr()}")
            time.sleep(0.05)
        raise RuntimeError(f"xfer recv did not start: {self.stderr()}")

    def stderr(self) -> str:
        with open(self.logfile, encoding="utf-8", errors="replace") as f:
            return f.read()

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.log.close()


def start_send(args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """``xfer send ARGS --json -q`` in a subprocess; read its result with :func:`result`."""
    return subprocess.Popen(
        [*XFER, "send", *args, "--json", "-q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def result(proc: subprocess.Popen[str], timeout: float = 60) -> tuple[int, dict[str, Any], str]:
    """Exit code, the JSON summary (empty if none was printed) and stderr."""
    out, err = proc.communicate(timeout=timeout)
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    return proc.returncode, (json.loads(lines[-1]) if lines else {}), err


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def journaled_bytes(root: str) -> int:
    """Bytes the receiver's journals list as verified and durable (all partial files)."""
    total = 0
    d = os.path.join(root, PARTIAL_DIR)
    with contextlib.suppress(FileNotFoundError):
        for name in os.listdir(d):
            if not name.endswith(".jnl"):
                continue
            try:
                with open(os.path.join(d, name), "rb") as f:
                    data = f.read()
            except FileNotFoundError:  # finished (renamed) meanwhile
                continue
            # One read, then the header must be whole: a journal being created is empty for
            # a moment, and reading the header line and the records in two reads once took a
            # header written in between for records (lengths of ~10^9 from its JSON text).
            header, newline, raw = data.partition(b"\n")
            try:
                whole = bool(newline) and isinstance(json.loads(header), dict)
            except ValueError:
                whole = False
            if not whole:
                continue
            for i in range(0, len(raw) - len(raw) % JOURNAL_RECORD.size, JOURNAL_RECORD.size):
                total += JOURNAL_RECORD.unpack_from(raw, i)[1]
    return total


def final_bytes(root: str, sub: str) -> int:
    """Bytes of the files already renamed into place under ``root/sub``."""
    total = 0
    for d, _, files in os.walk(os.path.join(root, sub)):
        for n in files:
            with contextlib.suppress(FileNotFoundError):
                total += os.lstat(os.path.join(d, n)).st_size
    return total


def wait_for(cond: Any, timeout: float, step: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(step)
    return bool(cond())


def files_under(path: str) -> Iterator[str]:
    for d, dirs, files in os.walk(path):
        for n in files + dirs:
            yield os.path.relpath(os.path.join(d, n), path)


def readable(sock: socket.socket, timeout: float) -> bool:
    return bool(select.select([sock], [], [], timeout)[0])


# ------------------------------------------------------------------------ crash watching


@contextlib.contextmanager
def crash_watch(rx: Any) -> Iterator[list[str]]:
    """Collect exceptions that escape the receiver (thread excepthook, asyncio's handler for
    unretrieved task exceptions). ``rx`` is an ``xfer.Receiver`` started in this process."""
    import gc

    crashes: list[str] = []
    old = threading.excepthook

    def hook(args: Any) -> None:
        name = args.thread.name if args.thread else "?"
        crashes.append(f"thread {name}: {args.exc_type.__name__}: {args.exc_value}")

    def handler(_loop: Any, ctx: dict[str, Any]) -> None:
        crashes.append(f"asyncio: {ctx.get('message')}: {ctx.get('exception')!r}")

    threading.excepthook = hook
    loop = rx._rx._loop
    loop.call_soon_threadsafe(loop.set_exception_handler, handler)
    try:
        yield crashes
    finally:
        gc.collect()
        time.sleep(0.05)
        threading.excepthook = old
