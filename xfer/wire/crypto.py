"""Authenticated encryption of data blocks and control frames (AES-256-GCM), sans-IO.

Keys. HELLO and CHALLENGE carry an X25519 public key each when the sender asks for encryption
(``"enc": "aes-256-gcm"``); :func:`session_keys` runs HKDF-SHA256 over the X25519 shared
secret and the session secret (derived from the token, or from the key handed over SSH), with
both handshake nonces as context. Three keys come out: one for data blocks, one per direction
of the control channel. Without a token the session secret travels in WELCOME, so the keys
then resist only a passive observer (the X25519 part); with a token, an active one too.

Nonces never repeat under one key: each data connection seals with its own key, derived from
the data key, its stream id and the random nonce of its DATA_HELLO, and a 96-bit nonce
(stream id, block counter). The counter is implicit: both ends count the blocks of the
connection, so a block that is dropped, replayed or moved to another position fails to open.
Control frames count the same way, per direction.

On the wire a sealed block is the usual 25-byte header (its ``length`` is the plaintext
length, its digest field is 0: the receiver hashes the plaintext it opened, so no hash of the
plaintext is visible) followed by ``length`` bytes of ciphertext and a 16-byte tag; the header
is the associated data. END is the END header plus the tag of an empty plaintext. A sealed
control frame is the usual 5-byte header (its length counts the tag) and the encrypted JSON,
with the header as associated data.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from xfer.wire.protocol import CTRL_HEADER, END_HEADER, FRAME_TAG, ProtocolError

CIPHER = "aes-256-gcm"
"""The one cipher offered in HELLO (``enc``) and accepted in CHALLENGE."""

TAG = FRAME_TAG
"""Bytes of GCM tag after every sealed block and control frame."""

_NONCE = struct.Struct("!IQ")  # stream id (u32), counter (u64): 96 bits
_MAX_COUNT = (1 << 64) - 1


class Tampered(ProtocolError):
    """A block, header or control frame failed authentication: changed on the way, replayed,
    reordered, or sealed with another key."""


# ------------------------------------------------------------------------------ key setup


class KeyExchange:
    """One side's ephemeral X25519 key pair for one handshake."""

    def __init__(self) -> None:
        self._key = X25519PrivateKey.generate()
        raw = self._key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        self.public_hex = raw.hex()
        """Sent in HELLO / CHALLENGE as ``kx``."""

    def shared(self, peer_hex: object) -> bytes:
        """The shared secret with the peer's public key (hex); ProtocolError if malformed."""
        bad = ProtocolError("kx must be a 32-byte X25519 public key in hex")
        if not isinstance(peer_hex, str):
            raise bad
        try:
            peer = X25519PublicKey.from_public_bytes(bytes.fromhex(peer_hex))
            return self._key.exchange(peer)
        except ValueError:
            raise bad from None


@dataclass(frozen=True, slots=True)
class SessionKeys:
    """The keys of one encrypted session (never sent)."""

    data: bytes
    """Data blocks (each connection derives its own key from this one)."""
    to_receiver: bytes
    """Control frames sent by the sender."""
    to_sender: bytes
    """Control frames sent by the receiver."""


def _hkdf(ikm: bytes, info: bytes, length: int = 32) -> bytes:
    return HKDF(hashes.SHA256(), length, salt=b"xfer-aead-v1", info=info).derive(ikm)


def session_keys(secret: bytes, shared: bytes, server_nonce: str, client_nonce: str) -> SessionKeys:
    """The session's keys from its secret, the X25519 shared secret and the two nonces."""
    okm = _hkdf(secret + shared, f"xfer-keys\x00{server_nonce}\x00{client_nonce}".encode(), 3 * 32)
    return SessionKeys(okm[:32], okm[32:64], okm[64:])


# ------------------------------------------------------------------------------ data blocks


class _BlockAead:
    """Shared part of a data connection's sealer and opener."""

    def __init__(self, data_key: bytes, stream: int, hello_nonce: str) -> None:
        if not 0 <= stream < 1 << 32:
            raise ProtocolError(f"stream id {stream} outside 0..2^32-1")
        key = _hkdf(data_key, f"xfer-stream\x00{stream}\x00{hello_nonce}".encode())
        self._aead = AESGCM(key)
        self._stream = stream
        self.counter = 0
        """Blocks (and END) sealed or opened so far on this connection."""

    def _nonce(self) -> bytes:
        if self.counter >= _MAX_COUNT:
            raise ProtocolError("block counter exhausted on one connection")
        n = _NONCE.pack(self._stream, self.counter)
        self.counter += 1
        return n


class BlockSealer(_BlockAead):
    """The sender's side of one data connection: seals blocks in a buffer it owns."""

    def __init__(self, data_key: bytes, stream: int, hello_nonce: str) -> None:
        super().__init__(data_key, stream, hello_nonce)
        self._buf = bytearray()

    def buffer(self, length: int) -> memoryview:
        """A buffer of ``length`` bytes to read the plaintext into (reused, with room for
        the tag)."""
        if len(self._buf) < length + TAG:
            self._buf = bytearray(length + TAG)
        return memoryview(self._buf)[:length]

    def seal(self, header: bytes, plain: memoryview | bytes) -> memoryview:
        """Encrypt ``plain`` (any buffer, or the one from :meth:`buffer`, in place) with the
        header as associated data; returns ciphertext + tag, a view of this sealer's buffer."""
        n = len(plain)
        if len(self._buf) < n + TAG:
            self._buf = bytearray(n + TAG)
        out = memoryview(self._buf)[: n + TAG]
        self._aead.encrypt_into(self._nonce(), plain, header, out)
        return out

    def end(self) -> bytes:
        """The END header and its tag (an attacker cannot end a connection early)."""
        return END_HEADER + self._aead.encrypt(self._nonce(), b"", END_HEADER)


class BlockOpener(_BlockAead):
    """The receiver's side of one data connection."""

    def open(self, header: bytes | bytearray, sealed: memoryview) -> memoryview:
        """Authenticate and decrypt ``sealed`` (ciphertext + tag) in place; returns the
        plaintext, a view of ``sealed``. Raises :class:`Tampered`; ``sealed`` then holds
        unauthenticated bytes that must not be used."""
        n = len(sealed) - TAG
        if n < 0:
            raise Tampered("sealed block shorter than its tag")
        try:
            self._aead.decrypt_into(self._nonce(), sealed, bytes(header), sealed[:n])
        except InvalidTag:
            raise Tampered(
                f"data block {self.counter - 1} of stream {self._stream} failed authentication"
            ) from None
        return sealed[:n]

    def check_end(self, tag: bytes | bytearray) -> None:
        """Authenticate an END header's tag."""
        try:
            self._aead.decrypt(self._nonce(), bytes(tag), END_HEADER)
        except InvalidTag:
            raise Tampered(f"END of stream {self._stream} failed authentication") from None


# ---------------------------------------------------------------------------- control frames


class FrameSealer:
    """Seals the control frames one side sends (one instance per direction)."""

    def __init__(self, key: bytes) -> None:
        self._aead = AESGCM(key)
        self._count = 0

    def seal(self, frame: bytes) -> bytes:
        """A sealed copy of one encoded frame (header + JSON)."""
        kind, length = CTRL_HEADER.unpack_from(frame)
        header = CTRL_HEADER.pack(kind, length + TAG)
        nonce = _NONCE.pack(0, self._count)
        self._count += 1
        return header + self._aead.encrypt(nonce, frame[CTRL_HEADER.size :], header)


class FrameOpener:
    """Opens the control frames one side receives (hooked into the FrameDecoder)."""

    def __init__(self, key: bytes) -> None:
        self._aead = AESGCM(key)
        self._count = 0

    def open(self, header: bytes, sealed: bytes) -> bytes:
        """The JSON payload of a sealed frame; Tampered if it fails authentication."""
        nonce = _NONCE.pack(0, self._count)
        self._count += 1
        try:
            return self._aead.decrypt(nonce, sealed, header)
        except InvalidTag:
            raise Tampered(
                f"control frame {self._count - 1} failed authentication "
                "(changed on the way, or sealed with another key)"
            ) from None
