"""The receiver's side of the disk: confinement under the root, partial files, the durable
journal of verified ranges, and the final rename.

Layout under the root::

    <root>/<relpath>                      final files (appear only once verified)
    <root>/.xfer/partial/<key>.part       data being received (pwrite at offsets)
    <root>/.xfer/partial/<key>.jnl        journal: header line (JSON) + 20-byte records

A journal record (offset u64, length u32, xxh3-64 u64) is written only after the data it
covers has been ``fdatasync``-ed, so after any crash the journal lists only ranges that are
really on disk and verified. Every path is resolved component by component with
``O_NOFOLLOW`` from a directory fd of the root: a symlink anywhere in the tree being
written is refused, so nothing can be written outside the root.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import struct
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from xfer.errors import ErrorCode
from xfer.manifest import DIR, STATE_DIR, Entry

JOURNAL_RECORD = struct.Struct("!QIQ")
SAFE_MODE = 0o1777
"""Mode bits restored on received files: never setuid/setgid (a peer must not be able to plant
a set-id executable, least of all on a receiver running as root)."""
PARTIAL_DIR = f"{STATE_DIR}/partial"


class StoreError(Exception):
    """A receiver-side filesystem failure, with the ERROR code it is reported under."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code


def _io_error(exc: OSError, what: str) -> StoreError:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return StoreError(ErrorCode.NO_SPACE, f"receiver disk full while {what}")
    return StoreError(ErrorCode.IO, f"receiver I/O error while {what}: {exc.strerror or exc}")


@dataclass
class Partial:
    """An open partial file and its journal records not yet made durable."""

    entry: Entry
    key: str
    fd: int = -1
    dirty: bool = False
    unsynced: list[tuple[int, int, int]] = field(default_factory=list)
    users: int = 0
    """Threads inside a ``pwrite`` on ``fd`` right now (the fd is closed only at zero)."""
    closed: bool = False
    """Finalized, evicted or store closed: no new writer may use ``fd``."""


class Store:
    """Confined writer for one receiver root (shared by all sessions on that root)."""

    def __init__(self, root: str, *, fsync: bool = True, max_open: int = 128) -> None:
        os.makedirs(root, exist_ok=True)
        self.root = os.path.realpath(root)
        self.fsync = fsync
        self.max_open = max_open
        self.root_fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY)
        self.state_fd = self._open_dir(PARTIAL_DIR, create=True)
        self._lock = threading.Condition()
        self._open: OrderedDict[str, Partial] = OrderedDict()
        self._finished: set[str] = set()
        self._closed = False

    def close(self, wait: float = 10.0) -> None:
        """Close every partial (after the writers inside a ``pwrite`` left) and the root.
        Idempotent; writes after this fail with a StoreError."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for p in self._open.values():
                p.closed = True
            self._lock.wait_for(lambda: all(p.users == 0 for p in self._open.values()), wait)
            for p in list(self._open.values()):
                self._close_fd(p)
            self._open.clear()
        os.close(self.state_fd)
        os.close(self.root_fd)

    # ------------------------------------------------------------------ confinement

    def _open_dir(self, relpath: str, *, create: bool) -> int:
        """A directory fd for ``relpath`` under the root, never following a symlink."""
        fd = os.dup(self.root_fd)
        try:
            for part in [p for p in relpath.split("/") if p]:
                try:
                    nfd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, 0o755, dir_fd=fd)
                    nfd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                        raise StoreError(
                            ErrorCode.PATH,
                            f"refused {relpath!r}: {part!r} is a symlink or not a "
                            "directory inside the receiver's root",
                        ) from None
                    raise
                os.close(fd)
                fd = nfd
            return fd
        except BaseException:
            os.close(fd)
            raise

    def check_paths(self, entries: list[Entry]) -> None:
        """Refuse the manifest before writing anything if any existing component of any path
        is a symlink or a non-directory where a directory is needed."""
        seen: set[str] = set()
        for e in entries:
            parts = e.path.split("/")
            dirs = parts if e.kind == DIR else parts[:-1]
            for i in range(1, len(dirs) + 1):
                d = "/".join(dirs[:i])
                if d in seen:
                    continue
                seen.add(d)
                self._check_existing(d, e.path)
            if e.kind != DIR:
                self._check_existing(e.path, e.path, leaf=True)

    def _check_existing(self, rel: str, whole: str, leaf: bool = False) -> None:
        import stat as st

        try:
            s = os.lstat(rel, dir_fd=self.root_fd)
        except FileNotFoundError:
            return
        if st.S_ISLNK(s.st_mode) and not leaf:
            raise StoreError(
                ErrorCode.PATH, f"refused {whole!r}: {rel!r} is a symlink in the receiver's root"
            )
        if not leaf and not st.S_ISDIR(s.st_mode):
            raise StoreError(
                ErrorCode.PATH, f"refused {whole!r}: {rel!r} exists and is not a directory"
            )
        if leaf and st.S_ISDIR(s.st_mode):
            raise StoreError(ErrorCode.PATH, f"refused {whole!r}: a directory of that name exists")

    # -------------------------------------------------------------------- preparing

    @staticmethod
    def key(entry: Entry) -> str:
        return hashlib.sha256(entry.path.encode("utf-8", "surrogateescape")).hexdigest()[:32]

    def prepare(self, entry: Entry) -> tuple[bool, list[tuple[int, int, int]]]:
        """Get ready to receive ``entry``. Returns ``(already_complete, verified_ranges)``:
        complete when the final file exists with the same size and mtime; otherwise the
        ranges a matching journal lists (a journal for another size/mtime is discarded)."""
        try:
            return self._prepare(entry)
        except OSError as exc:
            raise _io_error(exc, f"preparing {entry.path!r}") from None

    def _prepare(self, entry: Entry) -> tuple[bool, list[tuple[int, int, int]]]:
        if entry.kind == DIR:
            os.close(self._open_dir(entry.path, create=True))
            return True, []
        parent, name = _split(entry.path)
        dfd = self._open_dir(parent, create=True)
        try:
            s = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            if s.st_size == entry.size and s.st_mtime_ns == entry.mtime_ns:
                self._drop_partial(self.key(entry))
                return True, []
        except FileNotFoundError:
            pass
        finally:
            os.close(dfd)
        if entry.size == 0:
            self._create_empty(entry)
            return True, []
        return False, self._load_journal(entry)

    def _load_journal(self, entry: Entry) -> list[tuple[int, int, int]]:
        key = self.key(entry)
        header = {"path": entry.path, "size": entry.size, "mtime_ns": entry.mtime_ns}
        try:
            with open(f"{key}.jnl", "rb", opener=self._state_opener) as f:
                first = f.readline()
                if json.loads(first or b"{}") != header:
                    raise ValueError("journal of another version of the file")
                raw = f.read()
            recs = [
                JOURNAL_RECORD.unpack_from(raw, i)
                for i in range(0, len(raw) - len(raw) % JOURNAL_RECORD.size, JOURNAL_RECORD.size)
            ]
            os.stat(f"{key}.part", dir_fd=self.state_fd)
            return _clean_records(recs, entry.size)
        except (FileNotFoundError, ValueError, json.JSONDecodeError):
            self._drop_partial(key)
        line = json.dumps(header).encode() + b"\n"
        with open(f"{key}.jnl", "wb", opener=self._state_opener) as f:
            f.write(line)
            self._maybe_fsync(f.fileno())
        fd = os.open(
            f"{key}.part", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600, dir_fd=self.state_fd
        )
        try:
            os.ftruncate(fd, entry.size)
        except OSError as exc:
            raise _io_error(exc, f"creating {entry.path!r}") from None
        finally:
            os.close(fd)
        return []

    def rewrite_journal(self, entry: Entry, records: list[tuple[int, int, int]]) -> None:
        """Replace the journal of ``entry`` by ``records`` (atomically: write, sync, rename),
        dropping ranges the sender found stale."""
        key = self.key(entry)
        header = {"path": entry.path, "size": entry.size, "mtime_ns": entry.mtime_ns}
        try:
            with open(f"{key}.jnl.new", "wb", opener=self._state_opener) as f:
                f.write(json.dumps(header).encode() + b"\n")
                f.write(b"".join(JOURNAL_RECORD.pack(*r) for r in records))
                self._maybe_fsync(f.fileno())
            os.rename(
                f"{key}.jnl.new", f"{key}.jnl", src_dir_fd=self.state_fd, dst_dir_fd=self.state_fd
            )
        except OSError as exc:
            raise _io_error(exc, f"journaling {entry.path!r}") from None

    def _state_opener(self, path: str, flags: int) -> int:
        return os.open(path, flags | os.O_NOFOLLOW, 0o600, dir_fd=self.state_fd)

    def _drop_partial(self, key: str) -> None:
        for suffix in (".part", ".jnl"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(key + suffix, dir_fd=self.state_fd)

    def _create_empty(self, entry: Entry) -> None:
        key = self.key(entry)
        fd = os.open(
            f"{key}.part", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600, dir_fd=self.state_fd
        )
        self._install(Partial(entry, key, fd))

    # ---------------------------------------------------------------------- writing

    def _partial(self, entry: Entry) -> Partial:
        """The open partial of ``entry`` (call with the lock held). A finalized file has no
        partial any more: FileNotFoundError, which the data path treats as a late duplicate."""
        key = self.key(entry)
        if self._closed:
            raise StoreError(ErrorCode.IO, f"session ended while writing {entry.path!r}")
        if key in self._finished:
            raise FileNotFoundError(f"{entry.path!r} is already complete")
        p = self._open.get(key)
        if p is not None:
            self._open.move_to_end(key)
            return p
        p = Partial(entry, key)
        p.fd = os.open(f"{key}.part", os.O_WRONLY, dir_fd=self.state_fd)
        self._open[key] = p
        if len(self._open) > self.max_open:  # evict the least recently used idle partial
            for old in [q for q in self._open.values() if q.users == 0 and q is not p]:
                del self._open[old.key]
                self._flush_one(old)
                old.closed = True
                self._close_fd(old)
                if len(self._open) <= self.max_open:
                    break
        return p

    def write(self, entry: Entry, offset: int, data: memoryview) -> None:
        """Write a verified block at its offset in the partial file. The partial's fd stays
        open while we are inside ``pwrite`` (a concurrent finalize or eviction waits), so a
        late duplicate block can never land in a renamed file or in a reused descriptor."""
        with self._lock:
            p = self._partial(entry)
            p.users += 1
        try:
            done = 0
            while done < len(data):
                done += os.pwrite(p.fd, data[done:], offset + done)
        except OSError as exc:
            raise _io_error(exc, f"writing {entry.path!r}") from None
        finally:
            with self._lock:
                p.users -= 1
                if p.users == 0:
                    self._lock.notify_all()

    def record(self, entry: Entry, offset: int, length: int, digest: int) -> None:
        """Remember a verified, written block; it reaches the journal at the next sync."""
        with self._lock:
            p = self._partial(entry)
            p.unsynced.append((offset, length, digest))
            p.dirty = True

    def sync(self) -> None:
        """Make written data durable, then journal the ranges it covers."""
        with self._lock:
            todo = [p for p in self._open.values() if p.dirty]
        for p in todo:
            with self._lock:
                if p.fd < 0 or p.closed:
                    continue
                self._flush_one(p)

    def _flush_one(self, p: Partial) -> None:
        recs, p.unsynced, p.dirty = p.unsynced, [], False
        if not recs or p.fd < 0:
            return
        try:
            self._maybe_fsync(p.fd)
            with open(f"{p.key}.jnl", "ab", opener=self._state_opener) as f:
                f.write(b"".join(JOURNAL_RECORD.pack(*r) for r in recs))
                self._maybe_fsync(f.fileno())
        except OSError as exc:
            raise _io_error(exc, f"journaling {p.entry.path!r}") from None

    def _maybe_fsync(self, fd: int) -> None:
        if self.fsync:
            os.fdatasync(fd)

    def _close_fd(self, p: Partial) -> None:
        if p.fd >= 0:
            os.close(p.fd)
            p.fd = -1

    def finalize(self, entry: Entry) -> None:
        """All of ``entry`` is verified: make it durable, set mode and mtime, rename it into
        its final place, and forget its journal. Waits for writers still inside a ``pwrite``
        of this file (duplicates); later ones are refused."""
        with self._lock:
            p = self._partial(entry)
            self._open.pop(p.key, None)
            self._finished.add(p.key)
            p.closed = True
            p.unsynced.clear()
            self._lock.wait_for(lambda: p.users == 0)
        try:
            self._install(p)
        except OSError as exc:
            raise _io_error(exc, f"finishing {entry.path!r}") from None

    def _install(self, p: Partial) -> None:
        e = p.entry
        try:
            self._maybe_fsync(p.fd)
            os.fchmod(p.fd, e.mode & SAFE_MODE)
            os.utime(p.fd, ns=(e.mtime_ns, e.mtime_ns))
        finally:
            self._close_fd(p)
        parent, name = _split(e.path)
        dfd = self._open_dir(parent, create=True)
        try:
            os.rename(f"{p.key}.part", name, src_dir_fd=self.state_fd, dst_dir_fd=dfd)
        finally:
            os.close(dfd)
        self._drop_partial(p.key)

    def finish_dirs(self, entries: list[Entry]) -> None:
        """Restore directory modes and mtimes, deepest first (after their files landed)."""
        for e in sorted((e for e in entries if e.kind == DIR), key=lambda e: -e.path.count("/")):
            fd = self._open_dir(e.path, create=True)
            try:
                os.fchmod(fd, (e.mode | 0o700) & SAFE_MODE)
                os.utime(fd, ns=(e.mtime_ns, e.mtime_ns))
            finally:
                os.close(fd)


def _clean_records(recs: list[tuple[int, int, int]], size: int) -> list[tuple[int, int, int]]:
    """Journal records as disjoint ranges in offset order: a later record for an offset
    replaces an earlier one (a block written twice, e.g. a hedged duplicate), and a record
    overlapping the one before it, or beyond the end, is dropped (it is received again)."""
    by_offset = {r[0]: r for r in recs if r[1] > 0 and r[0] + r[1] <= size}
    out: list[tuple[int, int, int]] = []
    for r in sorted(by_offset.values()):
        if not out or out[-1][0] + out[-1][1] <= r[0]:
            out.append(r)
    return out


def _split(path: str) -> tuple[str, str]:
    parent, _, name = path.rpartition("/")
    return parent, name
