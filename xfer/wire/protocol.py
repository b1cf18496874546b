"""xfer's wire protocol, sans-IO: bytes in, events out. No sockets, no clock.

Two kinds of connection share one listening port; the first frame says which:

* the **control connection** carries length-prefixed frames whose payload is a small JSON
  object (hello, auth, manifest batches, acks, errors, summary);
* a **data connection** starts with one control-style ``DATA_HELLO`` frame, the receiver
  answers one byte (``DATA_OK``), then the sender sends **blocks**: a fixed 25-byte header
  (type, file id, offset, length, xxh3-64 of the payload) followed by ``length`` raw bytes,
  until an ``END`` header. The payload is never parsed: the adapters move it with
  ``sendfile``/``recv_into`` and only decode the fixed header.

Every decode path checks limits and raises :class:`ProtocolError` (the *peer* broke the
protocol) with a message saying what was wrong.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import json
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from xfer.errors import ErrorCode as ErrorCode  # re-exported; the vocabulary is xfer.errors

VERSION = 1
"""Protocol version exchanged in HELLO; peers with another major version are refused."""

CTRL_HEADER = struct.Struct("!BI")
"""Control frame header: message type (u8), payload length (u32)."""

BLOCK_HEADER = struct.Struct("!BIQIQ")
"""Data block header: kind (u8), file id (u32), offset (u64), length (u32), xxh3-64 (u64)."""

DATA_OK = b"\x01"
"""The receiver's one-byte answer to an accepted DATA_HELLO."""

MAX_CTRL_FRAME = 4 << 20
"""Largest control payload accepted (a manifest batch is kept well below this)."""

MAX_BLOCK = 64 << 20
"""Largest data block accepted."""

FRAME_TAG = 16
"""Bytes an encrypted session adds to each control payload and data block (the AEAD tag)."""


class ProtocolError(Exception):
    """The peer sent something this protocol does not allow (a remote error, not our bug)."""


class Msg(enum.IntEnum):
    """Control message types."""

    HELLO = 1  # S->R {version, nonce, auth}
    CHALLENGE = 2  # R->S {nonce, auth_required}
    AUTH = 3  # S->R {proof}
    WELCOME = 4  # R->S {session, proof?, data_secret?}
    OPEN = 5  # S->R {mode, checksum, block_size, dest}
    MANIFEST = 6  # S->R {entries: [[id, kind, path, size, mtime_ns, mode], ...]}
    MANIFEST_END = 7  # S->R {}
    READY = 8  # R->S {have: {id: [[off, len, hash], ...]}, done: [ids]}
    ACK = 9  # R->S {ok: [[id, off, len], ...], bad: [[id, off, len], ...]}
    FILE_DONE = 10  # R->S {ids: [...]}
    BYE = 11  # S->R {}
    SUMMARY = 12  # R->S {...}
    ERROR = 13  # either way {code, message}
    DATA_HELLO = 14  # S->R on a data connection {session, stream, nonce, proof}
    # 15 was RESEND, never sent: a failed block comes back in ACK.bad
    KEEP = 16  # S->R right after READY {have: {id: [[off, len], ...]}}: offered ranges still valid


class BlockKind(enum.IntEnum):
    """Kinds of data-connection header."""

    BLOCK = 1
    END = 2


# --------------------------------------------------------------------------- control frames


def encode(msg: Msg, body: dict[str, Any] | None = None) -> bytes:
    """Encode one control frame."""
    payload = json.dumps(body or {}, separators=(",", ":")).encode()
    if len(payload) > MAX_CTRL_FRAME:
        raise ValueError(f"control frame of {len(payload)} bytes exceeds {MAX_CTRL_FRAME}")
    return CTRL_HEADER.pack(int(msg), len(payload)) + payload


@dataclass(frozen=True, slots=True)
class Frame:
    """One decoded control frame."""

    msg: Msg
    body: dict[str, Any]


class FrameOpener(Protocol):
    """Authenticates and decrypts one sealed control payload (see xfer.wire.crypto)."""

    def open(self, header: bytes, sealed: bytes) -> bytes: ...


class FrameDecoder:
    """Incremental decoder of control frames: ``feed(bytes)`` then iterate ``frames()``.
    Once ``opener`` is set (after the handshake of an encrypted session), every payload is
    opened by it before it is decoded."""

    def __init__(self, max_frame: int = MAX_CTRL_FRAME) -> None:
        self._buf = bytearray()
        self._max = max_frame
        self.opener: FrameOpener | None = None

    def feed(self, data: bytes) -> None:
        self._buf += data

    @property
    def pending(self) -> int:
        """Bytes received but not yet decoded into a frame."""
        return len(self._buf)

    def frames(self) -> Iterator[Frame]:
        """Yield every complete frame buffered so far; raise ProtocolError on a bad one."""
        while len(self._buf) >= CTRL_HEADER.size:
            kind, length = CTRL_HEADER.unpack_from(self._buf)
            if length > self._max + (FRAME_TAG if self.opener else 0):
                raise ProtocolError(f"control frame of {length} bytes exceeds limit {self._max}")
            try:
                msg = Msg(kind)
            except ValueError:
                raise ProtocolError(f"unknown control message type {kind}") from None
            end = CTRL_HEADER.size + length
            if len(self._buf) < end:
                return
            raw = bytes(self._buf[CTRL_HEADER.size : end])
            if self.opener is not None:
                raw = self.opener.open(bytes(self._buf[: CTRL_HEADER.size]), raw)
            del self._buf[:end]
            yield Frame(msg, decode_body(msg, raw))


def decode_body(msg: Msg, raw: bytes) -> dict[str, Any]:
    """Decode a control payload: a JSON object."""
    try:
        body = json.loads(raw) if raw else {}
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProtocolError(f"{msg.name} payload is not valid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise ProtocolError(f"{msg.name} payload must be a JSON object")
    return body


# ------------------------------------------------------------------------------ data blocks


def block_header(file_id: int, offset: int, length: int, digest: int) -> bytes:
    """Header for one data block."""
    return BLOCK_HEADER.pack(BlockKind.BLOCK, file_id, offset, length, digest)


END_HEADER = BLOCK_HEADER.pack(BlockKind.END, 0, 0, 0, 0)
"""Header that ends a data connection cleanly."""


@dataclass(frozen=True, slots=True)
class BlockHeader:
    """A decoded data block header."""

    kind: BlockKind
    file_id: int
    offset: int
    length: int
    digest: int


def decode_block_header(raw: bytes | bytearray | memoryview) -> BlockHeader:
    """Decode and sanity-check a 25-byte block header."""
    kind, file_id, offset, length, digest = BLOCK_HEADER.unpack(raw)
    try:
        k = BlockKind(kind)
    except ValueError:
        raise ProtocolError(f"unknown data header kind {kind}") from None
    if k is BlockKind.BLOCK and not 0 < length <= MAX_BLOCK:
        raise ProtocolError(f"block length {length} outside 1..{MAX_BLOCK}")
    return BlockHeader(k, file_id, offset, length, digest)


# ------------------------------------------------------------------------- authentication


def proof(key: bytes, label: bytes, *parts: str) -> str:
    """HMAC-SHA256 proof over a label and nonces, hex."""
    mac = hmac.new(key, label, hashlib.sha256)
    for p in parts:
        mac.update(b"\x00" + p.encode())
    return mac.hexdigest()


def check_proof(expected: str, got: object) -> bool:
    """Constant-time comparison of two proofs."""
    return isinstance(got, str) and hmac.compare_digest(expected, got)


def data_secret(token: bytes, server_nonce: str, client_nonce: str) -> bytes:
    """Per-session secret that binds data connections to their session (never sent)."""
    return hmac.new(
        token, b"xfer-data\x00" + f"{server_nonce}\x00{client_nonce}".encode(), hashlib.sha256
    ).digest()


# --------------------------------------------------------------------------- body checks


def need(body: dict[str, Any], key: str, typ: type | tuple[type, ...], msg: Msg) -> Any:
    """Fetch ``body[key]`` and check its type, or raise ProtocolError naming the field."""
    if key not in body:
        raise ProtocolError(f"{msg.name} is missing field {key!r}")
    val = body[key]
    if not isinstance(val, typ) or isinstance(val, bool) and typ is int:
        raise ProtocolError(f"{msg.name}.{key} has the wrong type ({type(val).__name__})")
    return val


def int_list(val: Any, width: int, what: str) -> list[list[int]]:
    """Check a list of fixed-width lists of non-negative ints (ack/ready ranges)."""
    if not isinstance(val, list):
        raise ProtocolError(f"{what} must be a list")
    for row in val:
        if (
            not isinstance(row, list)
            or len(row) != width
            or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in row)
        ):
            raise ProtocolError(f"{what} rows must be lists of {width} non-negative integers")
    return val
