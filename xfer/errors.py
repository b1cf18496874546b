"""Errors that say who broke what, each with a stable exit code (documented in the README).

The one error vocabulary: :class:`Exit` (exit statuses), :class:`ErrorCode` (the codes carried
in ERROR frames, re-exported by :mod:`xfer.wire.protocol`, raised by :mod:`xfer.rx.store`) and
:data:`ERRORS`, the table from each code to its exit status and meaning.
"""

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


class ErrorCode(enum.StrEnum):
    """Stable error codes carried in ERROR frames (plain strings on the wire)."""

    AUTH = "auth"
    PROTOCOL = "protocol"
    PATH = "path"
    IO = "io"
    NO_SPACE = "no_space"
    LIMIT = "limit"
    INTERNAL = "internal"
    VERIFY = "verify"
    TIMEOUT = "timeout"


ERRORS: dict[ErrorCode, tuple[Exit, str]] = {
    ErrorCode.AUTH: (Exit.AUTH, "wrong or missing token, or a receiver proof that fails"),
    ErrorCode.PROTOCOL: (Exit.PROTOCOL, "a frame out of order or malformed, or a version mismatch"),
    ErrorCode.PATH: (Exit.PROTOCOL, "a path refused: outside the root, a symlink, a type clash"),
    ErrorCode.LIMIT: (Exit.PROTOCOL, "a limit hit: sessions, streams, manifest entries"),
    ErrorCode.IO: (Exit.REMOTE_IO, "the receiver could not write or read back its files"),
    ErrorCode.NO_SPACE: (Exit.REMOTE_IO, "the receiver's disk is full"),
    ErrorCode.VERIFY: (Exit.INCOMPLETE, "files did not verify (re-run to complete them)"),
    ErrorCode.TIMEOUT: (Exit.NETWORK, "the peer went silent longer than its stall timeout"),
    ErrorCode.INTERNAL: (Exit.INTERNAL, "a bug on the peer's side"),
}
"""Each ERROR code's exit status and meaning; a code not listed (a newer peer's) exits
:attr:`Exit.PROTOCOL`."""


def exit_for(code: str) -> Exit:
    """The exit status of an ERROR code (:data:`ERRORS`; unknown codes: ``PROTOCOL``)."""
    try:
        return ERRORS[ErrorCode(code)][0]
    except ValueError:
        return Exit.PROTOCOL


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

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message, exit_for(code))
        self.code = str(code)
