"""The end of a transfer (issue #14), on loopback with real kernel TCP.

One data stream is slowed to a crawl (a proxy forwards it at 0.5 Mbit/s, its sender's
send() blocks) while the others run at loopback speed. The endgame must not wait for it: its block is copied to a fast stream,
the receiver writes every range once, and a sender killed in the middle of the endgame is
resumed by the same command.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

import xfer
from xfer.dataset import trees_equal
from xfer.rx import store as store_mod
from xfer.transport import TRANSPORTS, Transport

from ..hostile import Proxy, result, start_send
from .conftest import make_tree

pytestmark = pytest.mark.timeout(120)

CRAWL_BPS = 62_500
"""0.5 Mbit/s: the paced stream needs 16.8 s for the 1 MiB first block it is handed."""
FIRST_BLOCK = 1 << 20
HEAD_START_S = 0.5
"""The paced stream connects this long before the others."""


class SlowFirst(Transport):
    """Plain TCP whose first connection of the process opens a moment before the others
    (so it takes the first block) with a small send buffer (so it cannot park a whole block
    in the kernel and take more than the one it crawls through).

    The crawl itself is a :class:`Proxy` forwarding that connection at ``CRAWL_BPS``: the
    kernel's SO_MAX_PACING_RATE is no crawl on loopback (its 64 KiB segments and initial
    window go out in bursts: a 512 KiB block paced to 62.5 kB/s arrived in 1.5 s)."""

    name: ClassVar[str] = "slow-first"
    opened: ClassVar[int] = 0
    lock: ClassVar[threading.Lock] = threading.Lock()
    first_open: ClassVar[threading.Event] = threading.Event()

    def connect(self, host: str, port: int, timeout: float | None = 30.0) -> socket.socket:
        with SlowFirst.lock:
            first = SlowFirst.opened == 0
            SlowFirst.opened += 1
        if not first:
            SlowFirst.first_open.wait(10.0)
            time.sleep(HEAD_START_S)
        sock = super().connect(host, port, timeout)
        if first:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 32 << 10)
            SlowFirst.first_open.set()
        return sock


@contextlib.contextmanager
def crawling(address: str) -> Iterator[str]:
    """An address whose first data connection moves ``CRAWL_BPS`` (the others run free)."""
    with Proxy(address, rcvbuf=16 << 10) as proxy:
        proxy.crawl = (0, CRAWL_BPS)
        yield proxy.address


@pytest.fixture
def slow_first(monkeypatch) -> Iterator[None]:
    SlowFirst.opened = 0
    SlowFirst.first_open.clear()
    monkeypatch.setitem(TRANSPORTS, "slow-first", SlowFirst)
    yield


def _file(tmp_path, size: int) -> str:
    src = tmp_path / "src"
    src.mkdir()
    with open(src / "data", "wb") as f:
        f.write(os.urandom(size))
    return str(src)


def test_a_crawling_stream_does_not_hold_the_transfer(tmp_path, slow_first, monkeypatch) -> None:
    writes: dict[tuple[str, int], int] = {}
    real_write = store_mod.Store.write

    def counting_write(self: Any, entry: Any, offset: int, data: Any) -> None:
        key = (entry.path, offset)
        writes[key] = writes.get(key, 0) + 1
        real_write(self, entry, offset, data)

    monkeypatch.setattr(store_mod.Store, "write", counting_write)
    src = _file(tmp_path, 48 << 20)
    with xfer.Receiver(str(tmp_path / "dst"), fsync=False) as rx, crawling(rx.address) as address:
        s = xfer.send(src, address, streams=4, transport="slow-first", mi=0.25)
    assert s["exit_code"] == 0 and s["verified"], s
    assert trees_equal(src, str(tmp_path / "dst" / "src"))
    assert SlowFirst.opened >= 4
    # The paced stream cannot deliver its first block in less than FIRST_BLOCK / CRAWL_BPS
    # seconds (16.8 s): a transfer that ended before that did not wait for it; its block
    # reached the receiver as a copy on another stream.
    assert s["seconds"] < FIRST_BLOCK / CRAWL_BPS, s
    assert s["bytes_redundant"] > 0, s
    assert s["endgame"] and s["drain_seconds"] > 0, s
    # every range was written exactly once, however many copies were sent
    assert writes and max(writes.values()) == 1
    assert s["receiver"]["bytes_verified"] == 48 << 20, s


def test_without_endgame_the_crawling_stream_is_waited_for(tmp_path, slow_first) -> None:
    """The comparison that shows what the endgame removes: the same run with --no-endgame
    cannot end before the paced stream has delivered its fixed-size block."""
    src = _file(tmp_path, 8 << 20)
    with xfer.Receiver(str(tmp_path / "dst"), fsync=False) as rx, crawling(rx.address) as address:
        s = xfer.send(
            src, address, streams=4, transport="slow-first", endgame=False,
            block_size=FIRST_BLOCK // 2,
        )  # fmt: skip
    assert s["exit_code"] == 0 and s["verified"], s
    assert s["seconds"] >= (FIRST_BLOCK // 2) / CRAWL_BPS * 0.9, s  # 8.4 s of pacing, at least
    assert s["bytes_redundant"] == 0 and not s["endgame"], s


DRIVER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {root!r})
    from tests.local.test_endgame import SlowFirst
    from xfer.transport import TRANSPORTS
    TRANSPORTS["slow-first"] = SlowFirst
    import json
    from xfer.wire.session import BlockScheduler
    _draining = BlockScheduler.draining.fget
    def draining(self):
        on = _draining(self)
        if on and not getattr(self, "_told", False):  # the moment the drain begins
            self._told = True
            print(json.dumps({{"event": "test-drain"}}), flush=True)
        return on
    BlockScheduler.draining = property(draining)
    from xfer.cli import main
    sys.argv = ["xfer", *sys.argv[1:]]
    main()
    """
)


def test_a_kill_during_the_endgame_resumes(tmp_path) -> None:
    src = make_tree(str(tmp_path / "src" / "tree"), seed=14)
    with open(os.path.join(src, "big"), "wb") as f:
        f.write(os.urandom(24 << 20))
    total = sum(os.path.getsize(os.path.join(d, n)) for d, _, fs in os.walk(src) for n in fs)
    root = str(tmp_path / "dst")
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with (
        xfer.Receiver(root, stall_timeout=1.5, sync_interval=0.1) as rx,
        crawling(rx.address) as address,
    ):
        argv = [sys.executable, "-c", DRIVER.format(root=repo), "send", src, address,
                "--streams", "4", "--transport", "slow-first", "--mi", "0.1", "--json-stream"]  # fmt: skip
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert p.stdout is not None
        drained = False
        for line in p.stdout:
            ev = json.loads(line)
            # The drain lasts 0.15-0.3 s here, but need not span an MI boundary (so a drain
            # MI is not a reliable trigger): the driver reports the moment it begins.
            if ev.get("event") == "test-drain" or ev.get("drain"):
                drained = True
                p.send_signal(signal.SIGKILL)  # the data is all in flight: kill now
                break
        p.wait(30)
        assert drained, ("the first run ended without a drain", p.stderr.read() if p.stderr else "")
        code, s, err = result(start_send([src, rx.address, "--streams", "4"]), timeout=60)
    assert code == 0 and s["verified"], (s, err)
    assert s["bytes"] == total and s["bytes_skipped"] > 0, s  # resumed, not restarted
    assert s["bytes_sent"] + s["bytes_skipped"] >= total, s
    assert trees_equal(src, os.path.join(root, "tree"))
