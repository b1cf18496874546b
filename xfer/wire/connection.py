"""The control connection of both roles, sans-IO: bytes in, events out, bytes to send.

As in h11 and aioquic, a connection object owns the protocol and does no I/O: the adapter
feeds what it read with :meth:`receive_data`, takes events one at a time with
:meth:`next_event` (``now`` passed in), calls methods that queue frames, and writes what
:meth:`data_to_send` returns. Every message, sent or received, goes through the session table
(:class:`xfer.wire.session.Machine`). A connection owns the handshake (nonces, HMAC proofs, the
X25519 key exchange and the sealing of every frame after WELCOME), the manifest, READY/KEEP,
ACKs, BYE and the summary. Files, sockets and threads stay with the adapters
(``xfer/tx/sender.py``; ``xfer/rx/receiver.py``, ``xfer/rx/rxsession.py``, ``xfer/rx/rxstream.py``), and the tests join a
:class:`SenderConnection` and a :class:`ReceiverConnection` in memory.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from xfer.errors import ErrorCode, Exit, RemoteError, XferError
from xfer.manifest import FILE, Entry, entry_from_wire
from xfer.wire.crypto import (
    CIPHER,
    BlockOpener,
    BlockSealer,
    FrameOpener,
    FrameSealer,
    KeyExchange,
    SessionKeys,
    session_keys,
)
from xfer.wire.events import (
    Acked,
    Bye,
    Event,
    FilesDone,
    Kept,
    ManifestDone,
    PeerError,
    Range,
    Ready,
    Summary,
    Welcomed,
)
from xfer.wire.protocol import (
    VERSION,
    Frame,
    FrameDecoder,
    Msg,
    ProtocolError,
    check_proof,
    data_secret,
    encode,
    int_list,
    need,
    proof,
)
from xfer.wire.session import Book, Machine, State

__all__ = [
    "Acked",
    "Bye",
    "Event",
    "FilesDone",
    "Kept",
    "ManifestDone",
    "PeerError",
    "Ready",
    "ReceiverConnection",
    "SenderConnection",
    "Summary",
    "Welcomed",
]

MANIFEST_BATCH = 2000
"""Manifest rows per MANIFEST frame (well below the frame limit)."""

# ------------------------------------------------------------------------------ common part


class _Connection:
    """Framing, sealing and the table, shared by both roles."""

    def __init__(self, sender: bool, decoder: FrameDecoder | None = None) -> None:
        self.machine = Machine(sender)
        self._decoder = decoder or FrameDecoder()
        self._sealer: FrameSealer | None = None
        self._out = bytearray()
        self.frames_received = 0
        """Frames decoded so far (the adapter's timeouts restart on each)."""
        self._handlers: dict[Msg, Callable[[dict[str, Any], float], Event | None]] = {}

    @property
    def state(self) -> State:
        return self.machine.state

    def receive_data(self, data: bytes) -> None:
        """Bytes read from the control connection."""
        self._decoder.feed(data)

    def next_event(self, now: float) -> Event | None:
        """The next event in what was received (None: more bytes are needed). Frames are
        decoded one at a time, so the keys installed by one frame open the next."""
        for frame in self._decoder.frames():
            self.frames_received += 1
            event = self.receive(frame, now)
            if event is not None:
                return event
        return None

    def receive(self, frame: Frame, now: float) -> Event | None:
        """One decoded frame; ProtocolError / RemoteError when the peer broke the protocol."""
        self.machine.on(frame.msg)
        if frame.msg is Msg.ERROR:
            body = frame.body
            return PeerError(str(body.get("code", "protocol")), str(body.get("message", "error")))
        return self._handlers[frame.msg](frame.body, now)

    def data_to_send(self) -> bytes:
        """Everything queued since the last call, ready for the socket."""
        out = bytes(self._out)
        self._out.clear()
        return out

    def fail(self, code: str, message: str) -> None:
        """Queue an ERROR and end the conversation (nothing is sent once it is over)."""
        if self.machine.state not in (State.CLOSED, State.FAILED):
            self._send(Msg.ERROR, {"code": str(code), "message": message})

    def _send(self, msg: Msg, body: dict[str, Any]) -> None:
        self.machine.send(msg)
        data = encode(msg, body)
        self._out += self._sealer.seal(data) if self._sealer is not None else data

    def _secure(self, sealer: FrameSealer, opener: FrameOpener) -> None:
        """Seal every frame from now on, both ways (AES-256-GCM)."""
        self._sealer = sealer
        self._decoder.opener = opener


# ----------------------------------------------------------------------------- the sender


class SenderConnection(_Connection):
    """The sender's side: :meth:`start`; on :class:`Welcomed`, :meth:`send_open` and
    :meth:`send_manifest` until it returns False; on :class:`Ready`, :meth:`send_keep`; then
    :class:`Acked` / :class:`FilesDone` until :meth:`send_bye` and :class:`Summary`."""

    def __init__(
        self,
        entries: list[Entry],
        *,
        token: bytes | None = None,
        encrypt: bool = False,
        mem: bool = False,
    ) -> None:
        super().__init__(sender=True)
        self.entries = entries
        """The manifest (ids 0..n-1); empty in memory mode."""
        self.token = token
        self.mem = mem
        self.session = ""
        self.secret = b""
        self.keys: SessionKeys | None = None
        self._kx = KeyExchange() if encrypt else None
        self._cnonce = secrets.token_hex(16)
        self._snonce = ""
        self._shared: bytes | None = None
        self._next_row = 0
        self._handlers = {
            Msg.CHALLENGE: self._challenge,
            Msg.WELCOME: self._welcome,
            Msg.READY: self._ready,
            Msg.ACK: self._ack,
            Msg.FILE_DONE: self._file_done,
            Msg.SUMMARY: lambda body, now: Summary(body),
        }

    def start(self) -> None:
        """Queue HELLO (with our X25519 key when encrypting)."""
        hello: dict[str, Any] = {"version": VERSION, "nonce": self._cnonce}
        if self._kx is not None:
            hello.update(enc=CIPHER, kx=self._kx.public_hex)
        self._send(Msg.HELLO, hello)

    def _challenge(self, body: dict[str, Any], now: float) -> None:
        self._snonce = need(body, "nonce", str, Msg.CHALLENGE)
        token = self.token
        if body.get("auth_required") and token is None:
            raise XferError(
                "the receiver requires a token: give --token-file or XFER_TOKEN", Exit.AUTH
            )
        if self._kx is not None:
            if body.get("enc") != CIPHER:
                raise XferError(
                    "the receiver does not offer encryption (an older xfer?): upgrade it, or "
                    "give --encryption off on a network you trust",
                    Exit.PROTOCOL,
                )
            self._shared = self._kx.shared(body.get("kx"))
        body = {"proof": proof(token, b"xfer-client", self._snonce, self._cnonce)} if token else {}
        self._send(Msg.AUTH, body)

    def _welcome(self, body: dict[str, Any], now: float) -> Welcomed:
        self.session = need(body, "session", str, Msg.WELCOME)
        snonce, cnonce, token = self._snonce, self._cnonce, self.token
        if token:
            if not check_proof(proof(token, b"xfer-server", snonce, cnonce), body.get("proof")):
                raise XferError("the receiver failed to prove it knows the token", Exit.AUTH)
            self.secret = data_secret(token, snonce, cnonce)
        else:
            try:
                self.secret = bytes.fromhex(need(body, "data_secret", str, Msg.WELCOME))
            except ValueError:
                raise ProtocolError("WELCOME.data_secret is not hex") from None
        if self._shared is not None:  # everything after WELCOME is sealed, both ways
            self.keys = session_keys(self.secret, self._shared, snonce, cnonce)
            self._secure(FrameSealer(self.keys.to_receiver), FrameOpener(self.keys.to_sender))
        return Welcomed(self.session, self.secret, self.keys)

    def send_open(self, checksum: bool = True, block_size: int = 4 << 20) -> None:
        """Queue OPEN: the mode, whether blocks carry a checksum, our block size."""
        body = {"mode": "mem" if self.mem else "files", "checksum": checksum}
        self._send(Msg.OPEN, {**body, "block_size": block_size})
        if self.mem:
            self.machine.memory_mode()

    def send_manifest(self) -> bool:
        """Queue the next MANIFEST batch, or MANIFEST_END after the last; False once sent."""
        if self.machine.state is not State.MANIFEST:
            return False
        rows = self.entries[self._next_row : self._next_row + MANIFEST_BATCH]
        if not rows:
            self._send(Msg.MANIFEST_END, {})
            return False
        self._next_row += len(rows)
        self._send(Msg.MANIFEST, {"entries": [e.wire() for e in rows]})
        return True

    def _ready(self, body: dict[str, Any], now: float) -> Ready:
        limit = body.get("max_block")
        max_block = limit if isinstance(limit, int) and limit > 0 else None
        if self.mem:
            return Ready(max_block, [], {})
        n = len(self.entries)
        done = [f for f in body.get("done", []) if isinstance(f, int) and 0 <= f < n]
        raw = body.get("have", {})
        if not isinstance(raw, dict):
            raise ProtocolError("READY.have must be an object")
        have: dict[int, list[list[int]]] = {}
        for key, ranges in raw.items():
            fid = int(key) if key.isdigit() else -1
            if not 0 <= fid < n or self.entries[fid].kind != FILE:
                raise ProtocolError(f"READY names unknown file id {key}")
            have[fid] = int_list(ranges, 3, "READY.have")
        return Ready(max_block, done, have)

    def send_keep(self, kept: dict[int, list[tuple[int, int]]]) -> None:
        """Queue KEEP: the offered ranges whose hash still matches our files."""
        self._send(Msg.KEEP, {"have": {str(k): [list(r) for r in v] for k, v in kept.items()}})

    def _ack(self, body: dict[str, Any], now: float) -> Acked:
        ok = int_list(body.get("ok", []), 3, "ACK.ok")
        return Acked(ok, int_list(body.get("bad", []), 3, "ACK.bad"))

    def _file_done(self, body: dict[str, Any], now: float) -> FilesDone:
        ids = body.get("ids", [])
        n = len(self.entries)
        ok = [f for f in ids if isinstance(f, int) and 0 <= f < n] if isinstance(ids, list) else []
        return FilesDone(ok)

    def data_hello(self, stream: int) -> tuple[bytes, BlockSealer | None]:
        """The DATA_HELLO that opens data connection ``stream`` (a fresh nonce, the proof that
        binds it to this session), and its block sealer when the session is encrypted. Only
        reads the connection: stream threads may call it."""
        nonce = secrets.token_hex(8)
        body = {
            "session": self.session,
            "stream": stream,
            "nonce": nonce,
            "proof": proof(self.secret, b"xfer-stream", self.session, str(stream), nonce),
        }
        sealer = BlockSealer(self.keys.data, stream, nonce) if self.keys else None
        return encode(Msg.DATA_HELLO, body), sealer

    def send_bye(self) -> None:
        """Queue BYE: every block is confirmed; the receiver answers with its summary."""
        self._send(Msg.BYE, {})


# --------------------------------------------------------------------------- the receiver


@dataclass
class _Counters:
    """What the receiver's summary reports besides the book."""

    started: float
    """When the session began (``now`` at construction)."""
    bytes_received: int = 0
    """Payload bytes of blocks that arrived (intact or not; not those failing authentication)."""
    blocks_bad: int = 0
    """Blocks that failed their checksum."""
    auth_failures: int = 0
    """Data connections dropped for a block or header that failed authentication."""
    streams_seen: int = 0
    """Data connections admitted."""


@dataclass
class _Acks:
    """Acks not yet sent."""

    ok: list[list[int]] = field(default_factory=list)
    """Blocks verified: ``[file id, offset, length]``."""
    bad: list[list[int]] = field(default_factory=list)
    """Blocks to send again."""
    files: list[int] = field(default_factory=list)
    """Files renamed into place."""


class ReceiverConnection(_Connection):
    """The receiver's side: feed it the first frame (HELLO) and what follows; on
    :class:`ManifestDone`, prepare the files and :meth:`send_ready`; on :class:`Kept` (files
    mode) blocks may flow: report each with :meth:`block_ok` / :meth:`block_bad` /
    :meth:`block_tampered`, call :meth:`send_acks` every few ms; on :class:`Bye`,
    :meth:`send_summary`. The book of verified blocks is this object's alone to update."""

    def __init__(
        self,
        *,
        token: bytes | None = None,
        encryption: str = "auto",
        max_files: int = 2_000_000,
        max_block: int = 16 << 20,
        now: float = 0.0,
        decoder: FrameDecoder | None = None,
    ) -> None:
        super().__init__(sender=False, decoder=decoder)
        self.token = token
        self.encryption = encryption
        self.max_files = max_files
        self.max_block = max_block
        self.session = secrets.token_hex(16)
        self.secret = secrets.token_bytes(32)
        self.keys: SessionKeys | None = None
        self.mode = "files"
        self.checksum = True
        self.entries: list[Entry] = []
        self.book: Book | None = None
        """Read-only for the data path (:meth:`Book.admit`); updated here only."""
        self.offered: dict[int, list[Range]] = {}
        self.counters = _Counters(now)
        self.acks = _Acks()
        self.streams_used: set[int] = set()
        self._nonces = ("", "")
        self._shared: bytes | None = None
        self._handlers = {
            Msg.HELLO: self._hello,
            Msg.AUTH: self._auth,
            Msg.OPEN: self._open,
            Msg.MANIFEST: self._manifest,
            Msg.MANIFEST_END: self._manifest_end,
            Msg.KEEP: self._keep,
            Msg.BYE: lambda body, now: Bye(),
        }

    # ------------------------------------------------------------------ handshake

    def _hello(self, body: dict[str, Any], now: float) -> None:
        if need(body, "version", int, Msg.HELLO) != VERSION:
            raise RemoteError(
                ErrorCode.PROTOCOL, f"protocol version {body['version']} != {VERSION}"
            )
        cnonce = need(body, "nonce", str, Msg.HELLO)[:128]
        snonce = secrets.token_hex(16)
        self._nonces = (snonce, cnonce)
        kx, self._shared = self._negotiate(body)
        challenge: dict[str, Any] = {"nonce": snonce, "auth_required": self.token is not None}
        if kx is not None:
            challenge.update(enc=CIPHER, kx=kx.public_hex)
        self._send(Msg.CHALLENGE, challenge)

    def _negotiate(self, hello: dict[str, Any]) -> tuple[KeyExchange | None, bytes | None]:
        """Encryption as the sender asks (HELLO ``enc``, ``kx``) and this receiver allows:
        our key pair and the shared secret, or (None, None) for a session in clear."""
        enc = hello.get("enc")
        if enc is None:
            if self.encryption == "on":
                raise RemoteError(
                    ErrorCode.PROTOCOL,
                    "this receiver requires encryption: use an xfer that encrypts "
                    "(--encryption on)",
                )
            return None, None
        if self.encryption == "off":
            raise RemoteError(
                ErrorCode.PROTOCOL, "this receiver has encryption off: give --encryption off"
            )
        if enc != CIPHER:
            raise RemoteError(ErrorCode.PROTOCOL, f"unknown cipher {str(enc)[:40]!r}")
        kx = KeyExchange()
        return kx, kx.shared(hello.get("kx"))

    def _auth(self, body: dict[str, Any], now: float) -> None:
        snonce, cnonce = self._nonces
        welcome: dict[str, Any] = {"session": self.session}
        token = self.token
        if token is not None:
            if not check_proof(proof(token, b"xfer-client", snonce, cnonce), body.get("proof")):
                raise RemoteError(ErrorCode.AUTH, "authentication failed: wrong or missing token")
            self.secret = data_secret(token, snonce, cnonce)
            welcome["proof"] = proof(token, b"xfer-server", snonce, cnonce)
        else:
            welcome["data_secret"] = self.secret.hex()
        self._send(Msg.WELCOME, welcome)
        if self._shared is not None:  # everything after WELCOME is sealed, both ways
            self.keys = session_keys(self.secret, self._shared, snonce, cnonce)
            self._secure(FrameSealer(self.keys.to_sender), FrameOpener(self.keys.to_receiver))

    # ------------------------------------------------------------------- manifest

    def _open(self, body: dict[str, Any], now: float) -> None:
        self.mode = need(body, "mode", str, Msg.OPEN)
        self.checksum = bool(body.get("checksum", True))
        if self.mode not in ("files", "mem"):
            raise ProtocolError(f"unknown mode {self.mode!r}")
        if self.mode == "mem":
            self.machine.memory_mode()

    def _manifest(self, body: dict[str, Any], now: float) -> None:
        for row in need(body, "entries", list, Msg.MANIFEST):
            e = entry_from_wire(row)
            if e.id != len(self.entries):
                raise ProtocolError(f"manifest ids must be consecutive: got {e.id}")
            if len(self.entries) >= self.max_files:
                raise RemoteError(ErrorCode.LIMIT, f"manifest exceeds {self.max_files} entries")
            self.entries.append(e)

    def _manifest_end(self, body: dict[str, Any], now: float) -> ManifestDone:
        if self.mode == "files" and len({e.path for e in self.entries}) != len(self.entries):
            raise ProtocolError("manifest lists the same path twice")
        return ManifestDone(self.mode, self.entries)

    def send_ready(
        self, done: list[int] | None = None, ranges: dict[int, list[Range]] | None = None
    ) -> None:
        """Queue READY: files complete already (``done``) and the journaled ranges of the
        others (``ranges``), which the sender answers with KEEP. Memory mode: no arguments."""
        body: dict[str, Any] = {"have": {}, "done": done or [], "max_block": self.max_block}
        if self.mode == "files":
            self.book = book = Book(self.entries)
            for fid in done or []:
                book.files[fid].done = True
            for fid, recs in (ranges or {}).items():
                if recs:
                    for off, ln, _digest in recs:
                        book.preload(fid, off, ln)
                    self.offered[fid] = recs
                    body["have"][str(fid)] = [list(r) for r in recs]
        self._send(Msg.READY, body)

    def _keep(self, body: dict[str, Any], now: float) -> Kept:
        """Journaled ranges the sender did not confirm are stale (its file changed): forget
        them before any block arrives; a file the confirmed ranges cover is finished."""
        book = self.book
        assert book is not None
        kept: dict[int, set[tuple[int, int]]] = {}
        for key, rows in need(body, "have", dict, Msg.KEEP).items():
            fid = int(key) if key.isdigit() else -1
            if fid not in self.offered:
                raise ProtocolError(f"KEEP names file id {key}, which READY did not offer")
            kept[fid] = {(r[0], r[1]) for r in int_list(rows, 2, "KEEP.have")}
        rewrite: dict[int, list[Range]] = {}
        finished: list[Entry] = []
        for fid, offered in self.offered.items():
            keep = kept.get(fid, set())
            recs = [r for r in offered if (r[0], r[1]) in keep]
            if len(recs) != len(keep):
                raise ProtocolError(f"KEEP lists ranges of file id {fid} that READY did not offer")
            if len(recs) < len(offered):
                book.keep(fid, [(r[0], r[1]) for r in recs])
                rewrite[fid] = recs
            fb = book.files[fid]
            if fb.complete and not fb.done:
                fb.done = True
                finished.append(fb.entry)
        return Kept(rewrite, finished)

    # ---------------------------------------------------------------- data streams

    def stream_hello(self, body: dict[str, Any]) -> tuple[int, str]:
        """Check a DATA_HELLO's proof (the caller found the session by its id): its stream
        id and nonce, or RemoteError(AUTH)."""
        stream = need(body, "stream", int, Msg.DATA_HELLO)
        nonce = need(body, "nonce", str, Msg.DATA_HELLO)[:128]
        expected = proof(self.secret, b"xfer-stream", self.session, str(stream), nonce)
        if not check_proof(expected, body.get("proof")):
            raise RemoteError(ErrorCode.AUTH, "data connection not bound to a live session")
        return stream, nonce

    def accept_stream(
        self, stream: int, nonce: str, open_now: int, limit: int
    ) -> BlockOpener | None:
        """Admit a data connection (``open_now`` are open already, ``limit`` allowed): its
        block opener when the session is encrypted. RemoteError when it may not join."""
        if self.machine.state is not State.ACTIVE or open_now >= limit:
            raise RemoteError(ErrorCode.LIMIT, "session not active or too many streams")
        opener = None
        if self.keys is not None:  # each connection has its own key; a stream id is used once
            if stream in self.streams_used:
                raise RemoteError(ErrorCode.AUTH, f"stream id {stream} used before")
            self.streams_used.add(stream)
            opener = BlockOpener(self.keys.data, stream, nonce)
        self.counters.streams_seen += 1
        return opener

    def block_ok(self, file_id: int, offset: int, length: int) -> Entry | None:
        """A block arrived intact (and was written, or was a duplicate): record it and ack it.
        Returns the file it completed, to finish and then :meth:`file_finished`."""
        self.counters.bytes_received += length
        self.acks.ok.append([file_id, offset, length])
        if self.book is None:  # memory mode: nothing is kept
            return None
        _new, complete = self.book.verified(file_id, offset, length)
        if not complete:
            return None
        fb = self.book.files[file_id]
        fb.done = True
        return fb.entry

    def block_twin(self, file_id: int, offset: int, length: int) -> None:
        """A copy arrived intact while its twin was being written: not written, not acked
        (the twin's ack covers it), counted as a duplicate."""
        self.counters.bytes_received += length
        if self.book is not None:
            self.book.dup_bytes += length

    def block_bad(self, file_id: int, offset: int, length: int) -> None:
        """A block failed its checksum: the sender sends it again."""
        self.counters.bytes_received += length
        self.counters.blocks_bad += 1
        self.acks.bad.append([file_id, offset, length])

    def block_tampered(self, file_id: int, offset: int, length: int) -> None:
        """A sealed block failed authentication (its connection is dropped): send it again."""
        self.acks.bad.append([file_id, offset, length])

    def auth_failure(self) -> None:
        """A data connection was dropped for a block or header that failed authentication."""
        self.counters.auth_failures += 1

    def file_finished(self, file_id: int) -> None:
        """A file is renamed into place: FILE_DONE goes with the next acks."""
        self.acks.files.append(file_id)

    def send_acks(self) -> None:
        """Queue ACK and FILE_DONE for what happened since the last call (if anything)."""
        if self.machine.state not in (State.ACTIVE, State.CLOSING):
            return
        a = self.acks
        if a.ok or a.bad:
            self._send(Msg.ACK, {"ok": a.ok, "bad": a.bad})
        if a.files:
            self._send(Msg.FILE_DONE, {"ids": a.files})
        self.acks = _Acks()

    def send_summary(self, now: float) -> None:
        """Queue the last acks and SUMMARY; the conversation is over."""
        self.send_acks()
        book, c = self.book, self.counters
        missing = [e.path for e in book.unfinished()] if book else []
        self._send(
            Msg.SUMMARY,
            {
                "bytes_received": c.bytes_received,
                "bytes_verified": book.bytes_verified if book else c.bytes_received,
                "dup_bytes": book.dup_bytes if book else 0,
                "blocks_bad": c.blocks_bad,
                "auth_failures": c.auth_failures,
                "encryption": CIPHER if self.keys else "off",
                "streams_seen": c.streams_seen,
                "files_missing": missing[:100],
                "files_missing_count": len(missing),
                "seconds": now - c.started,
            },
        )
