"""The events the connection objects of ``xfer/wire/connection.py`` produce, one frozen dataclass
each: what the adapter must act on (sans-IO, no imports of sockets or the clock)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xfer.manifest import Entry
from xfer.wire.crypto import SessionKeys

Range = tuple[int, int, int]
"""A journaled range: offset, length, xxh3-64 of its bytes."""


@dataclass(frozen=True, slots=True)
class PeerError:
    """The peer sent ERROR: the session is over (FAILED)."""

    code: str
    """Its error code (``xfer.errors.ErrorCode`` value)."""
    message: str
    """What it said went wrong."""


@dataclass(frozen=True, slots=True)
class Welcomed:
    """Sender: the handshake is done (the receiver proved the token, if there is one)."""

    session: str
    """Session id, named by every data connection."""
    secret: bytes
    """Session secret that binds data connections to the session (never sent)."""
    keys: SessionKeys | None
    """The session's keys when it is encrypted (control frames are sealed from now on)."""


@dataclass(frozen=True, slots=True)
class Ready:
    """Sender: the receiver is ready; answer with :meth:`SenderConnection.send_keep` (files)."""

    max_block: int | None
    """Largest block the receiver accepts (None: it did not say)."""
    done: list[int]
    """Ids of files the receiver has complete already."""
    have: dict[int, list[list[int]]]
    """Journaled ranges ``[offset, length, xxh3]`` per file id, to check against our files."""


@dataclass(frozen=True, slots=True)
class Acked:
    """Sender: blocks verified (``ok``) or failed (``bad``), each ``[file id, offset, length]``."""

    ok: list[list[int]]
    """Blocks written and verified (duplicates included)."""
    bad: list[list[int]]
    """Blocks that failed verification or authentication: send them again."""


@dataclass(frozen=True, slots=True)
class FilesDone:
    """Sender: files verified and renamed into place."""

    ids: list[int]
    """Their ids (only ids of our manifest)."""


@dataclass(frozen=True, slots=True)
class Summary:
    """Sender: the receiver's summary; the conversation is over (CLOSED)."""

    body: dict[str, Any]
    """Its counters, as sent (part of the sender's ``--json`` summary)."""


@dataclass(frozen=True, slots=True)
class ManifestDone:
    """Receiver: the manifest is complete; answer with :meth:`ReceiverConnection.send_ready`
    once the files are prepared."""

    mode: str
    """``files`` or ``mem``."""
    entries: list[Entry]
    """The manifest, ids 0..n-1, paths validated (not yet checked against the disk)."""


@dataclass(frozen=True, slots=True)
class Kept:
    """Receiver: the sender's KEEP, applied to the book; blocks may flow. The adapter brings
    the disk in line: journals to rewrite, files to finish."""

    rewrite: dict[int, list[Range]]
    """File id -> the journal records still valid (the others were for another version)."""
    finished: list[Entry]
    """Files complete with what was kept (killed just before their rename): finish them and
    call :meth:`ReceiverConnection.file_finished`."""


@dataclass(frozen=True, slots=True)
class Bye:
    """Receiver: the sender has everything confirmed; send the summary."""


Event = PeerError | Welcomed | Ready | Acked | FilesDone | Summary | ManifestDone | Kept | Bye
