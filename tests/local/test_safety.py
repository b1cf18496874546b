"""Safety: tokens, loopback-only without a token, confinement under --root against a
hand-written malicious client (tests/hostile.py), limits, and what the receiver does after."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import time
from collections.abc import Iterator

import pytest

import xfer
from xfer.dataset import trees_equal
from xfer.rx.receiver import ReceiverConfig
from xfer.wire.protocol import CTRL_HEADER, Msg

from ..hostile import (
    XFER,
    Hostile,
    RecvProcess,
    crash_watch,
    dir_row,
    end_stream,
    file_row,
    files_under,
    result,
    send_block,
    split,
    start_send,
    wait_for,
)
from .conftest import make_tree

TOKEN = b"correct horse battery staple"


@pytest.fixture
def rx(tmp_path) -> Iterator[xfer.Receiver]:
    """A receiver whose root sits next to an 'outside' directory holding a victim file."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "victim.txt").write_text("do not touch")
    r = xfer.Receiver(
        root=str(tmp_path / "root"),
        fsync=False,
        handshake_timeout=3,
        stall_timeout=3,
        max_sessions=4,
    )
    r.start()
    yield r
    r.stop()


def _outside_untouched(tmp_path) -> None:
    assert sorted(os.listdir(tmp_path / "outside")) == ["victim.txt"]
    assert (tmp_path / "outside" / "victim.txt").read_text() == "do not touch"
    assert {p.name for p in tmp_path.iterdir()} <= {"outside", "root", "src", "good.tok", "bad.tok"}


def _normal_transfer_works(tmp_path, address: str, **opts) -> None:
    src = make_tree(str(tmp_path / "src" / f"after-{time.monotonic_ns()}"), seed=3)
    s = xfer.send([src], address, streams=2, block_size=1 << 20, **opts)
    assert s["exit_code"] == 0 and s["verified"], s
    assert trees_equal(src, str(tmp_path / "root" / os.path.basename(src)))


def _user_files(root) -> list[str]:
    return sorted(p for p in files_under(str(root)) if not p.startswith(".xfer"))


# ------------------------------------------------------------------------------ tokens


def test_wrong_and_missing_tokens_write_nothing_and_say_why(tmp_path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "victim.txt").write_text("do not touch")
    src = make_tree(str(tmp_path / "src" / "tree"), seed=1)
    good, bad = tmp_path / "good.tok", tmp_path / "bad.tok"
    good.write_bytes(TOKEN + b"\n")
    bad.write_bytes(b"guess\n")
    with xfer.Receiver(root=str(tmp_path / "root"), fsync=False, token=TOKEN) as r:
        env = {k: v for k, v in os.environ.items() if k != "XFER_TOKEN"}
        runs = {
            "wrong file": start_send([src, r.address, "--token-file", str(bad)], env),
            "missing": start_send([src, r.address], env),
            "wrong env": start_send([src, r.address], {**env, "XFER_TOKEN": "guess"}),
        }
        for what, proc in runs.items():
            code, summary, err = result(proc)
            assert code == 4, (what, code, summary, err)
            assert summary["exit_code"] == 4 and not summary["verified"]
            assert "token" in summary["error"], (what, summary["error"])
        assert _user_files(tmp_path / "root") == []
        # a data connection that guesses the per-session secret is refused too
        with Hostile(r.address) as h:
            assert h.open([file_row(0, "x", 10)], token=TOKEN).msg is Msg.READY
            d = h.data_raw(0, secret=b"not the session secret")
            assert d.recv(1) != b"\x01"
            d.close()
        code, summary, err = result(
            start_send([src, r.address], {**env, "XFER_TOKEN": TOKEN.decode()})
        )
        assert code == 0 and summary["verified"], (summary, err)
        code, summary, err = result(start_send([src, r.address, "--token-file", str(good)], env))
        assert code == 0 and summary["bytes_sent"] == 0, (summary, err)
    assert trees_equal(src, str(tmp_path / "root" / "tree"))
    _outside_untouched(tmp_path)


def test_sender_with_token_refuses_a_receiver_that_cannot_prove_it(tmp_path, rx) -> None:
    src = make_tree(str(tmp_path / "src" / "t"), seed=2)
    s = xfer.send([src], rx.address, token=TOKEN)
    assert s["exit_code"] == 4 and "prove" in s["error"], s
    assert _user_files(tmp_path / "root") == []


def test_no_token_means_loopback_only_unless_insecure(tmp_path) -> None:
    root = str(tmp_path / "r")
    for host in ("0.0.0.0", "[::]", "127.evil.example", "localhost.evil.example"):
        with pytest.raises(ValueError, match="without a token"):
            ReceiverConfig(root=root, listen=f"{host}:0")
    ReceiverConfig(root=root, listen="0.0.0.0:0", token=b"t")
    ReceiverConfig(root=root, listen="0.0.0.0:0", insecure=True)
    for host in ("127.0.0.1", "127.1.2.3", "localhost", "[::1]"):
        ReceiverConfig(root=root, listen=f"{host}:0")
    env = {k: v for k, v in os.environ.items() if k != "XFER_TOKEN"}
    p = subprocess.run(
        [*XFER, "recv", "--listen", "0.0.0.0:0", "--root", root],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert p.returncode == 2 and "--insecure" in p.stderr, p.stderr
    proc = subprocess.Popen(
        [*XFER, "recv", "--listen", "0.0.0.0:0", "--root", root, "--insecure"],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        assert "listening on 0.0.0.0:" in proc.stderr.readline()
    finally:
        proc.terminate()
        proc.wait(10)


# ------------------------------------------------------------------------- confinement


BAD_PATHS = [
    "/tmp/xfer-abs-escape",
    "../escape",
    "a/../../escape",
    "a/../b",
    ".xfer/partial/x",
    ".xfer",
    "./a",
    "a//b",
    "a/./b",
    "",
    "..",
    "a/\x00b",
    "x" * 300,
]


@pytest.mark.parametrize("kind", ["f", "d"])
def test_traversal_paths_are_refused_before_anything_is_written(tmp_path, rx, kind) -> None:
    with crash_watch(rx) as crashes:
        for i, path in enumerate(BAD_PATHS):
            row = file_row(0, path, 5) if kind == "f" else dir_row(0, path)
            entries = [dir_row(0, f"ok{i}"), [1, *row[1:]]]
            with Hostile(rx.address) as h:
                frame = h.open(entries)
                assert frame.msg is Msg.ERROR, (path, frame)
                assert frame.body["code"] == "protocol" and "path" in frame.body["message"], frame
                assert h.recv() is None  # the session is over
        assert _user_files(tmp_path / "root") == []
        assert not os.path.exists("/tmp/xfer-abs-escape")
        _outside_untouched(tmp_path)
        _normal_transfer_works(tmp_path, rx.address)
    assert crashes == []


def test_symlinks_inside_the_root_are_not_followed(tmp_path, rx) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir(exist_ok=True)
    (root / "link").symlink_to(outside)  # planted by someone with access to the root
    (root / "deep").mkdir()
    (root / "deep" / "er").symlink_to(outside)
    with crash_watch(rx) as crashes:
        for entries in (
            [file_row(0, "link/pwned", 4)],
            [dir_row(0, "link")],
            [dir_row(0, "link/sub")],
            [dir_row(0, "deep"), file_row(1, "deep/er/x", 4)],
        ):
            with Hostile(rx.address) as h:
                frame = h.open(entries)
                assert frame.msg is Msg.ERROR and frame.body["code"] == "path", frame
                assert "symlink" in frame.body["message"]
        # a symlink as the *leaf*: the file replaces the link, the link's target is untouched
        (root / "leaf").symlink_to(outside / "victim.txt")
        with Hostile(rx.address) as h:
            assert h.open([file_row(0, "leaf", 5)]).msg is Msg.READY
            d = h.data()
            send_block(d, 0, 0, b"owned")
            end_stream(d)
            assert h.acks(1.0)[2] == [0]
            assert h.bye().msg is Msg.SUMMARY
        assert (root / "leaf").is_file() and not (root / "leaf").is_symlink()
        assert (root / "leaf").read_bytes() == b"owned"
        _outside_untouched(tmp_path)
        _normal_transfer_works(tmp_path, rx.address)
    assert crashes == []


def test_symlink_planted_after_the_manifest_check_is_refused_at_rename(tmp_path, rx) -> None:
    """Time-of-check vs time-of-use: the directory is swapped for a symlink between READY and
    the last block; the final rename walks with O_NOFOLLOW and refuses."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    with crash_watch(rx) as crashes, Hostile(rx.address) as h:
        assert h.open([dir_row(0, "d"), file_row(1, "d/f", 6)]).msg is Msg.READY
        os.rmdir(root / "d")
        (root / "d").symlink_to(outside)
        d = h.data()
        send_block(d, 1, 0, b"escape")
        kind, why = h.outcome()
        d.close()
        assert kind == "error" and why.startswith("path:") and "symlink" in why, why
    assert crashes == []
    _outside_untouched(tmp_path)
    os.unlink(root / "d")
    _normal_transfer_works(tmp_path, rx.address)


def test_setuid_and_setgid_bits_are_not_restored(tmp_path, rx) -> None:
    with Hostile(rx.address) as h:
        assert h.open([file_row(0, "suid", 3, mode=0o6755)]).msg is Msg.READY
        d = h.data()
        send_block(d, 0, 0, b"\x7fEL")
        end_stream(d)
        assert h.acks(1.0)[2] == [0]
        h.bye()
    mode = stat.S_IMODE(os.stat(tmp_path / "root" / "suid").st_mode)
    assert mode == 0o755, oct(mode)


# ----------------------------------------------------------------- protocol abuse, limits


def test_blocks_outside_the_manifest_end_the_session(tmp_path, rx) -> None:
    cases = {
        "unknown file id": (7, 0, b"abcd"),
        "beyond the end": (0, 8, b"abcd"),
        "directory id": (1, 0, b"abcd"),
    }
    with crash_watch(rx) as crashes:
        for what, (fid, off, data) in cases.items():
            with Hostile(rx.address) as h:
                assert (
                    h.open([file_row(0, f"f-{fid}-{off}", 10), dir_row(1, f"d-{fid}-{off}")]).msg
                    is Msg.READY
                )
                d = h.data()
                send_block(d, fid, off, data)
                kind, why = h.outcome()
                d.close()
                assert kind == "error" and why.startswith("protocol:"), (what, why)
        with Hostile(rx.address) as h:  # overlapping, not identical, ranges
            assert h.open([file_row(0, "overlap", 10)]).msg is Msg.READY
            d = h.data()
            send_block(d, 0, 0, b"abcdef")
            send_block(d, 0, 4, b"efghij")
            kind, why = h.outcome()
            d.close()
            assert kind == "error" and "overlaps" in why, why
        assert [p for p in _user_files(tmp_path / "root") if not p.startswith("d-")] == []
        _outside_untouched(tmp_path)
        _normal_transfer_works(tmp_path, rx.address)
    assert crashes == []


def test_out_of_order_and_oversized_frames(tmp_path, rx) -> None:
    with crash_watch(rx) as crashes:
        with Hostile(rx.address) as h:  # a frame header announcing 1 GiB
            h.send_raw(CTRL_HEADER.pack(int(Msg.HELLO), 1 << 30))
            assert h.outcome()[0] == "closed"
        with Hostile(rx.address) as h:  # MANIFEST before the handshake
            h.send(Msg.MANIFEST, {"entries": []})
            kind, why = h.outcome()
            assert kind == "error" and "HELLO" in why, why
        with Hostile(rx.address) as h:  # BYE in the middle of the manifest
            h.handshake()
            h.send(Msg.OPEN, {"mode": "files"})
            h.send(Msg.BYE, {})
            kind, why = h.outcome()
            assert kind == "error" and "not allowed" in why, why
        with Hostile(rx.address) as h:  # a data connection before READY (and no KEEP ever)
            welcome = h.handshake()
            assert welcome.msg is Msg.WELCOME
            h.send(Msg.OPEN, {"mode": "files"})
            h.send(Msg.MANIFEST, {"entries": [file_row(i, f"early/{i}", 4) for i in range(300)]})
            h.send(Msg.MANIFEST_END, {})
            d = h.data_raw()
            got = d.recv(1)
            if got == b"\x01":  # accepted while the session was still being prepared
                send_block(d, 0, 0, b"soon")  # (this crashed the stream thread, once)
            d.close()
            assert got != b"\x01", "data connection accepted before READY and KEEP"
            assert h.recv(30).msg is Msg.READY  # the session itself is unharmed
        with Hostile(rx.address) as h:  # version mismatch
            h.send(Msg.HELLO, {"version": 99, "nonce": "n"})
            kind, why = h.outcome()
            assert kind == "error" and "version" in why
        _normal_transfer_works(tmp_path, rx.address)
    assert crashes == []


def test_limits_sessions_and_manifest_size(tmp_path) -> None:
    with xfer.Receiver(root=str(tmp_path / "root"), fsync=False, max_sessions=1, max_files=10) as r:
        with Hostile(r.address) as first, Hostile(r.address) as second:
            first.handshake()
            time.sleep(0.1)
            second.send(Msg.HELLO, {"version": 1, "nonce": "n"})
            kind, why = second.outcome()
            assert kind == "error" and why.startswith("limit:"), why
        with Hostile(r.address) as h:
            frame = h.open([file_row(i, f"f{i}", 1) for i in range(11)])
            assert frame.msg is Msg.ERROR and frame.body["code"] == "limit"
        assert _user_files(tmp_path / "root") == []


def test_a_refused_session_does_not_release_the_paths_of_the_writing_one(tmp_path, rx) -> None:
    """Before the fix, the refused session released the first one's paths on its way out, so
    the next session could write the same file concurrently."""
    with Hostile(rx.address) as first:
        assert first.open([file_row(0, "same", 8)]).msg is Msg.READY
        for _ in range(2):
            with Hostile(rx.address) as other:
                frame = other.open([file_row(0, "same", 8)])
                assert frame.msg is Msg.ERROR and frame.body["code"] == "limit", frame
                assert "another session" in frame.body["message"]


@pytest.mark.skipif(shutil.which("prlimit") is None, reason="needs prlimit (util-linux)")
def test_a_flood_of_idle_connections_does_not_take_the_receiver_down(tmp_path) -> None:
    """More idle connections than the receiver has file descriptors (limit 128): accept()
    fails with EMFILE for a while; the receiver must stay up and serve again afterwards."""
    recv = RecvProcess(
        str(tmp_path / "root"), str(tmp_path / "recv.log"), wrap=("prlimit", "--nofile=128:128")
    )
    flood: list[socket.socket] = []
    try:
        for _ in range(300):
            try:
                flood.append(socket.create_connection(split(recv.address), timeout=1))
            except TimeoutError:  # its backlog is full too: the flood has done its work
                break
        assert len(flood) > 128
        assert wait_for(lambda: "Too many open files" in recv.stderr(), 10), recv.stderr()
        assert recv.proc.poll() is None, recv.stderr()
        for s in flood:
            s.close()
        flood.clear()
        src = make_tree(str(tmp_path / "src" / "t"), seed=9)
        assert wait_for(lambda: xfer.send([src], recv.address, streams=2)["exit_code"] == 0, 20)
        assert recv.proc.poll() is None, recv.stderr()
        assert trees_equal(src, str(tmp_path / "root" / "t"))
    finally:
        for s in flood:
            s.close()
        recv.stop()
