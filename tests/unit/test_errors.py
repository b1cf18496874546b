"""The one error vocabulary: ERROR codes, exit statuses and the table between them."""

from __future__ import annotations

import re
from pathlib import Path

from xfer.errors import ERRORS, ErrorCode, Exit, RemoteError, exit_for
from xfer.rx.store import StoreError
from xfer.wire import protocol

ROOT = Path(__file__).resolve().parents[2]


def test_every_code_has_an_exit_and_a_meaning() -> None:
    assert set(ERRORS) == set(ErrorCode)
    assert all(isinstance(e, Exit) and meaning for e, meaning in ERRORS.values())


def test_exit_statuses_of_remote_errors() -> None:
    expected = {
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
    assert {code: exit_for(code) for code in expected} == expected
    assert exit_for("from-a-newer-peer") == Exit.PROTOCOL
    err = RemoteError(ErrorCode.NO_SPACE, "disk full")
    assert err.exit == Exit.REMOTE_IO and err.code == "no_space"


def test_one_vocabulary_everywhere() -> None:
    assert protocol.ErrorCode is ErrorCode  # re-exported, not a copy
    assert StoreError(ErrorCode.PATH, "x").code == "path"


def test_the_readme_lists_every_exit_status() -> None:
    text = (ROOT / "README.md").read_text()
    listed = {int(m) for m in re.findall(r"^\| (\d+) \|", text, re.M)}
    assert {int(e) for e in Exit} <= listed
