"""Where a stream's bytes come from: files (``sendfile`` for large blocks, one ``sendall`` for
small ones), memory mode (one cache-hot random chunk repeated, as iperf3 does), and the
encrypted path (read, seal in place, send). Each ``send`` may be told to abandon a block
between pieces (the endgame)."""

from __future__ import annotations

import mmap
import os
import socket
from collections.abc import Callable, Iterator
from typing import Any

import xxhash

from xfer.channel import Stalled, send_all
from xfer.errors import Exit, XferError
from xfer.manifest import Entry
from xfer.wire.crypto import (
    BlockSealer,
)
from xfer.wire.protocol import (
    block_header,
)
from xfer.wire.session import (
    Block,
)

MEM_CHUNK = 256 << 10
"""Random bytes that memory mode repeats to fill each block (small enough to stay in cache)."""
SMALL_BLOCK = 1 << 20
"""Blocks up to this size are read and sent with one sendall (header + data) instead of sendfile."""
SEND_CHUNK = 1 << 20
"""Larger blocks go out in pieces of this size, so a stream can abandon a block that another
stream's copy has delivered (endgame)."""

Abandon = Callable[[int], bool]
"""Asked between pieces of a block with the payload bytes sent so far: True to give it up."""


class Abandoned(Exception):
    """A stream gave up a block that was confirmed through another stream (endgame)."""


def _never(_sent: int) -> bool:
    return False


def pieces(length: int, abandon: Abandon, start: int = 0) -> Iterator[int]:
    """Offsets of the ``SEND_CHUNK`` pieces of ``length`` bytes from ``start``; before every
    piece but the block's first, ``abandon`` is asked (with the bytes sent so far) and may give
    the block up (raises :class:`Abandoned`)."""
    for sent in range(start, length, SEND_CHUNK):
        if sent and abandon(sent):
            raise Abandoned
        yield sent


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
            self._check_read(blk, len(data))
            digest = xxhash.xxh3_64_intdigest(data) if checksum else 0
            send_all(sock, block_header(blk.file_id, blk.offset, blk.length, digest) + data)
            return
        digest = mmap_digest(fd, blk.offset, blk.length) if checksum else 0
        send_all(sock, block_header(blk.file_id, blk.offset, blk.length, digest), socket.MSG_MORE)
        for sent in pieces(blk.length, abandon):
            _sendfile(sock, fd, blk.offset + sent, min(SEND_CHUNK, blk.length - sent))

    def plaintext(self, blk: Block, buf: memoryview) -> memoryview:
        """Read the block into ``buf`` (the encrypted path: no sendfile)."""
        self._check_read(blk, os.preadv(self.fd(blk.file_id), [buf], blk.offset))
        return buf

    def _check_read(self, blk: Block, n: int) -> None:
        if n != blk.length:
            raise XferError(
                f"{self.entries[blk.file_id].source} shrank while being sent", Exit.LOCAL_IO
            )

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
        self._fd, self._fid = -1, -1


def mmap_digest(fd: int, offset: int, length: int) -> int:
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
        head = [memoryview(block_header(0, blk.offset, blk.length, digest))]
        iov, per = self.iov(blk.length), SEND_CHUNK // MEM_CHUNK
        for sent in pieces(blk.length, abandon):
            i = sent // MEM_CHUNK
            send_vector(sock, head + iov[i : i + per])
            head = []

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
        for sent in pieces(len(wire), abandon, SEND_CHUNK):
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
