"""Errors that say who broke what, each with a stable exit code (documented in the README)."""

from __future__ import annotations

import enum


class Exit(enum.IntEnum):
    """Exit status of ``xfer send`` / ``xfer recv``."""

    OK = 0
    """Everything delivered and verified."""
    INTERNAL = 1
    """A bug in xfer (please report it)."""
    USAGE = 2
    """Bad command line or configuration."""
    NETWORK = 3
    """Could not connect, or the control connection was lost (resumable)."""
    AUTH = 4
    """The receiver refused our token (or we refused the receiver's proof)."""
    PROTOCOL = 5
    """The peer broke the protocol or refused our request (e.g. a path outside its root)."""
    INCOMPLETE = 6
    """The transfer ended without every file verified (re-run to complete it)."""
    REMOTE_IO = 7
    """The receiver could not write (e.g. its disk is full); re-run after fixing it."""
    LOCAL_IO = 8
    """We could not read a source file."""
    INTERRUPTED = 130
    """Stopped by Ctrl-C / SIGTERM (resumable)."""


class XferError(Exception):
    """An error ending a transfer, with its exit code."""

    exit = Exit.INTERNAL

    def __init__(self, message: str, exit: Exit | None = None) -> None:
        super().__init__(message)
        if exit is not None:
            self.exit = exit


class RemoteError(XferError):
    """The peer reported an error (ERROR frame) or we report one to the peer; ``code`` is the
    protocol's ErrorCode value."""

    _EXITS = {
        "auth": Exit.AUTH,
        "protocol": Exit.PROTOCOL,
        "path": Exit.PROTOCOL,
        "limit": Exit.PROTOCOL,
        "io": Exit.REMOTE_IO,
        "no_space": Exit.REMOTE_IO,
        "verify": Exit.INCOMPLETE,
        "timeout": Exit.NETWORK,
        "internal": Exit.INTERNAL,
    }

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message, self._EXITS.get(str(code), Exit.PROTOCOL))
        self.code = str(code)
