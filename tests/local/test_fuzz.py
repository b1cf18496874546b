"""Random and mutated frames thrown at a live receiver (hypothesis): every bad session gets an
ERROR or is closed, nothing escapes the root, no exception escapes the receiver, and a
normal transfer succeeds afterwards."""

from __future__ import annotations

import contextlib
import json
import os
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import xfer
from xfer.dataset import trees_equal
from xfer.wire.protocol import CTRL_HEADER, VERSION, Msg, block_header

from ..hostile import Hostile, crash_watch, file_row, files_under, wait_for
from .conftest import make_tree

FUZZ = settings(
    max_examples=66,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.text(max_size=12),
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4),
    max_leaves=8,
)
paths = st.sampled_from(
    ["ok", "a/b", "../up", "/abs", ".xfer/partial/x", "a/../b", "", "ü/ß", "x" * 256, "\udc80"]
) | st.text(min_size=0, max_size=12)
rows = st.lists(
    st.one_of(
        st.tuples(
            st.integers(-1, 5),
            st.sampled_from(["f", "d", "l", 1]),
            paths,
            st.integers(-1, 1 << 40),
            st.integers(-(2**64), 2**64),
            st.integers(-1, 0o17777),
        ).map(list),
        json_values,
    ),
    max_size=4,
)


@pytest.fixture
def rx(tmp_path) -> Iterator[xfer.Receiver]:
    (tmp_path / "outside").mkdir()
    r = xfer.Receiver(
        root=str(tmp_path / "root"),
        fsync=False,
        handshake_timeout=1,
        stall_timeout=1,
        max_sessions=64,
    )
    r.start()
    yield r
    r.stop()


def frame(msg: int, body: Any) -> bytes:
    payload = json.dumps(body).encode()
    return CTRL_HEADER.pack(msg, len(payload)) + payload


def valid_script(entries: list[Any]) -> list[tuple[int, Any]]:
    return [
        (Msg.HELLO, {"version": VERSION, "nonce": "n0"}),
        (Msg.AUTH, {}),
        (Msg.OPEN, {"mode": "files", "checksum": True, "block_size": 4096}),
        (Msg.MANIFEST, {"entries": entries}),
        (Msg.MANIFEST_END, {}),
        (Msg.KEEP, {"have": {}}),
        (Msg.BYE, {}),
    ]


@st.composite
def mutated_sessions(draw: Any) -> bytes:
    script = valid_script(draw(rows))
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(script) - 1))
        op = draw(st.sampled_from(["drop", "dup", "swap", "body", "type"]))
        if op == "drop" and len(script) > 1:
            del script[i]
        elif op == "dup":
            script.insert(i, script[i])
        elif op == "swap":
            j = draw(st.integers(0, len(script) - 1))
            script[i], script[j] = script[j], script[i]
        elif op == "body":
            script[i] = (script[i][0], draw(json_values))
        else:
            script[i] = (draw(st.integers(0, 255)), script[i][1])
    raw = bytearray(b"".join(frame(m, b) for m, b in script))
    cut = draw(st.one_of(st.none(), st.integers(0, len(raw))))
    if cut is not None:
        raw = raw[:cut]
    for k in draw(st.lists(st.integers(0, max(0, len(raw) - 1)), max_size=2)):
        if raw:
            raw[k] ^= draw(st.integers(1, 255))
    return bytes(raw)


def _throw(address: str, raw: bytes) -> None:
    """Send ``raw`` on a fresh connection, half-close, and require an ERROR or a close."""
    with Hostile(address, timeout=10) as h:
        try:
            h.send_raw(raw)
            h.sock.shutdown(socket.SHUT_WR)
        except OSError:
            return  # the receiver already closed on us (that is an allowed outcome)
        kind, _why = h.outcome()
        assert kind in ("error", "closed")


def _after(tmp_path, rx, crashes: list[str]) -> None:
    assert crashes == []
    assert os.listdir(tmp_path / "outside") == []
    assert wait_for(lambda: not rx._rx.sessions, 10), rx._rx.sessions
    src = make_tree(str(tmp_path / "src" / "tree"), seed=7)
    s = xfer.send([src], rx.address, streams=3, block_size=1 << 20)
    assert s["exit_code"] == 0 and s["verified"], s
    assert trees_equal(src, str(tmp_path / "root" / "tree"))
    assert all(".." not in p for p in files_under(str(tmp_path / "root")))


def test_random_bytes_on_a_fresh_connection(tmp_path, rx) -> None:
    with crash_watch(rx) as crashes:

        @FUZZ
        @given(
            st.binary(max_size=300)
            | st.builds(lambda t, b: bytes([t]) + b, st.integers(0, 255), st.binary(max_size=40))
        )
        def check(raw: bytes) -> None:
            _throw(rx.address, raw)

        check()
        _after(tmp_path, rx, crashes)


def test_mutated_valid_sessions(tmp_path, rx) -> None:
    with crash_watch(rx) as crashes:

        @FUZZ
        @given(mutated_sessions())
        def check(raw: bytes) -> None:
            _throw(rx.address, raw)

        check()
        _after(tmp_path, rx, crashes)


def test_garbage_on_data_connections(tmp_path, rx) -> None:
    counter = iter(range(10**6))
    with crash_watch(rx) as crashes:

        @FUZZ
        @given(st.binary(max_size=200), st.booleans())
        def check(garbage: bytes, valid_header_first: bool) -> None:
            with Hostile(rx.address, timeout=10) as h:
                assert h.open([file_row(0, f"g{next(counter)}", 1000)]).msg is Msg.READY
                d = h.data()
                if valid_header_first:  # a plausible header, then whatever follows
                    garbage = block_header(0, 0, 1000, 0) + garbage
                with contextlib.suppress(OSError):  # the receiver may have hung up already
                    d.sendall(garbage)
                d.close()
                try:
                    h.send(Msg.BYE, {})
                except OSError:
                    return
                while True:
                    got = h.recv()
                    if got is None or got.msg in (Msg.SUMMARY, Msg.ERROR):
                        break

        check()
        _after(tmp_path, rx, crashes)
