"""The catalog: what a transfer moves (files and directories with their metadata), how a file
is cut into blocks, and the rules every relative path must obey on both sides."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from xfer.wire.protocol import ProtocolError

FILE = "f"
DIR = "d"
STATE_DIR = ".xfer"
"""Name of the receiver's state directory under its root (journals, partial files)."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One file or directory of a transfer."""

    id: int
    """Index in the manifest (file id on data connections)."""
    kind: str
    """``f`` (regular file) or ``d`` (directory)."""
    path: str
    """Relative POSIX path under the destination root."""
    size: int
    """Bytes (0 for directories)."""
    mtime_ns: int
    """Modification time in nanoseconds, restored on the receiver."""
    mode: int
    """Permission bits (``stat.S_IMODE``), restored on the receiver."""
    source: str = ""
    """Absolute source path on the sender (never sent)."""

    def wire(self) -> list[object]:
        return [self.id, self.kind, self.path, self.size, self.mtime_ns, self.mode]


def check_relpath(path: object) -> str:
    """Validate a relative path received from a peer; raise ProtocolError if unsafe."""
    if not isinstance(path, str) or not path:
        raise ProtocolError("path must be a non-empty string")
    if len(path) > 4096 or "\x00" in path:
        raise ProtocolError(f"path {path[:80]!r} is too long or contains NUL")
    if path.startswith("/"):
        raise ProtocolError(f"absolute path {path!r} refused: paths must be relative to the root")
    parts = path.split("/")
    for part in parts:
        if part in ("", ".", ".."):
            raise ProtocolError(f"path {path!r} refused: empty, '.' or '..' component")
        try:
            encoded = os.fsencode(part)
        except UnicodeEncodeError:
            raise ProtocolError(f"path {path!r} is not encodable as a file name") from None
        if len(encoded) > 255:
            raise ProtocolError(f"path {path!r} has a component longer than 255 bytes")
    if parts[0] == STATE_DIR:
        raise ProtocolError(f"path {path!r} refused: {STATE_DIR}/ is the receiver's state")
    return path


def entry_from_wire(row: object) -> Entry:
    """Parse and validate one manifest row from the peer."""
    if not isinstance(row, list) or len(row) != 6:
        raise ProtocolError("manifest rows must be [id, kind, path, size, mtime_ns, mode]")
    fid, kind, path, size, mtime_ns, mode = row
    ints = (fid, size, mtime_ns, mode)
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in ints):
        raise ProtocolError("manifest id/size/mtime/mode must be integers")
    if kind not in (FILE, DIR) or fid < 0 or not 0 <= size < 1 << 62 or not 0 <= mode <= 0o7777:
        raise ProtocolError(f"bad manifest row for {path!r}")
    if not -(1 << 62) < mtime_ns < 1 << 62:
        raise ProtocolError(f"mtime_ns {mtime_ns} of {path!r} out of range")
    if kind == DIR and size:
        raise ProtocolError(f"directory {path!r} with a size")
    return Entry(fid, kind, check_relpath(path), size, mtime_ns, mode)


@dataclass
class ScanResult:
    """The catalog of a sender's paths."""

    entries: list[Entry]
    skipped: list[str]
    """Source paths not sent (symlinks, sockets, devices), each with the reason."""

    @property
    def total_bytes(self) -> int:
        return sum(e.size for e in self.entries)

    @property
    def files(self) -> int:
        return sum(1 for e in self.entries if e.kind == FILE)


def scan(paths: Iterable[str], dest: str = "") -> ScanResult:
    """Catalog files and trees. A directory ``/a/b`` arrives as ``<root>/b/...``; a file
    ``/a/f`` as ``<root>/f``. ``dest`` prefixes every path (a sub-directory of the root)."""
    entries: list[Entry] = []
    skipped: list[str] = []
    prefix = dest.strip("/")
    if prefix:
        check_relpath(prefix)
    for src in paths:
        src = os.path.abspath(src)
        st = os.lstat(src)
        name = os.path.basename(src.rstrip("/")) or "root"
        rel = f"{prefix}/{name}" if prefix else name
        if stat.S_ISDIR(st.st_mode):
            for path, full, s in _walk(src, rel, skipped):
                entries.append(_entry(len(entries), path, full, s))
        elif stat.S_ISREG(st.st_mode):
            entries.append(_entry(len(entries), rel, src, st))
        else:
            raise FileNotFoundError(f"{src}: not a regular file or directory")
    return ScanResult(entries, skipped)


def _entry(i: int, rel: str, full: str, st: os.stat_result) -> Entry:
    kind = DIR if stat.S_ISDIR(st.st_mode) else FILE
    size = st.st_size if kind == FILE else 0
    return Entry(i, kind, rel, size, st.st_mtime_ns, stat.S_IMODE(st.st_mode), full)


def _walk(top: str, rel: str, skipped: list[str]) -> Iterator[tuple[str, str, os.stat_result]]:
    yield rel, top, os.lstat(top)
    with os.scandir(top) as it:
        children = sorted(it, key=lambda d: d.name)
    for d in children:
        st = d.stat(follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode):
            yield from _walk(d.path, f"{rel}/{d.name}", skipped)
        elif stat.S_ISREG(st.st_mode):
            yield f"{rel}/{d.name}", d.path, st
        else:
            what = "symlink" if stat.S_ISLNK(st.st_mode) else "special file"
            skipped.append(f"{d.path} ({what}, not sent)")
