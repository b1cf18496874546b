"""``xfer send --policy stdin`` steered by a driver over pipes, on loopback.

The test is the driver: it reads the sender's stdout, answers every ``observe`` line with the
next target of a script, and checks that the stream count of the following MI is that target
(clipped to --max-streams), that stdout holds only JSON lines in the documented order
(observe, then the interval of the same MI), and that the tree arrives identical.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.local.conftest import make_tree
from xfer.dataset import trees_equal

pytestmark = pytest.mark.timeout(90)

SCRIPT = [3, 1, 4, 2, 99, 2, 5, 1]
"""Targets answered in turn (99 is clipped to --max-streams 6)."""


@pytest.fixture
def recv(tmp_path) -> Iterator[tuple[str, str]]:
    root = str(tmp_path / "dst")
    p = subprocess.Popen(
        [sys.executable, "-m", "xfer.cli", "recv", "--listen", "127.0.0.1:0", "--root", root,
         "--no-fsync"],
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert p.stderr is not None
    line = p.stderr.readline()
    assert "listening on" in line, line
    yield line.split("listening on ")[1].split(",")[0], root
    p.terminate()
    p.wait(10)


def _drive(src: str, address: str) -> tuple[list[dict], list[int], str, int]:
    argv = [sys.executable, "-m", "xfer.cli", "send", src, address, "--policy",
            "stdin:timeout=20", "--mi", "0.25", "--stream-rate", "40Mbit", "--max-streams", "6",
            "--json-stream"]  # fmt: skip
    p = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert p.stdin is not None and p.stdout is not None and p.stderr is not None
    events: list[dict] = []
    answered: list[int] = []
    for line in p.stdout:
        events.append(json.loads(line))  # stdout must be pure JSON lines
        if events[-1]["event"] == "observe":
            answered.append(SCRIPT[len(answered) % len(SCRIPT)])
            p.stdin.write(f"{answered[-1]}\n")
            p.stdin.flush()
    p.stdin.close()
    err = p.stderr.read()
    return events, answered, err, p.wait(30)


def test_stdin_policy_follows_the_driver(tmp_path, recv) -> None:
    address, root = recv
    src = make_tree(str(tmp_path / "src"))
    with open(os.path.join(src, "big"), "wb") as f:
        # 64 MB: 3-13 s at 40-240 Mbit/s, a dozen MIs or more before the drain (32 MB ended
        # after 5 decided MIs on a fresh CI machine when the script's 6-stream MI came early)
        f.write(os.urandom(64 << 20))
    events, answered, err, code = _drive(src, address)
    assert code == 0, err
    kinds = [e["event"] for e in events]
    assert kinds[-1] == "end" and events[-1]["verified"] is True
    n = kinds.count("observe")
    assert n >= 6, f"too short a transfer to test steering: {kinds}"
    # Each observe is followed by the interval of the same MI. The controller runs in its own
    # thread: an MI that ends while it still waits for the driver gets no observe and no
    # decision (action null), as do the drain MIs at the end; nothing else lacks one.
    intervals = [e for e in events if e["event"] == "interval"]
    obs = [e for e in events if e["event"] == "observe"]
    decided = [i for i in intervals if i["action"] is not None and not i["drain"]]
    assert all(i["action"] is None or i["drain"] for i in intervals if i not in decided)
    assert len(decided) == n
    for o in obs:
        at = events.index(o)
        assert events[at + 1]["event"] == "interval" and events[at + 1]["t"] == o["t"]
        assert events[at + 1]["streams"] == o["streams"]
    assert obs[0]["streams"] == 2  # the controller's initial count
    # the action of a decided MI is the answered target (clipped to 6) minus its streams
    assert [i["action"] for i in decided] == [
        min(a, 6) - i["streams"] for a, i in zip(answered, decided, strict=True)
    ]
    # an answer that came in time sets the streams of the next MI, unless the transfer ran out
    # of blocks in it (its streams close as their work ends: a CI run saw 1 where 2 was set)
    for prev, nxt in zip(intervals, intervals[1:], strict=False):
        if prev in decided and nxt in decided and nxt["bytes_done"] < nxt["bytes_total"]:
            assert nxt["streams"] == prev["streams"] + prev["action"], (prev, nxt)
    assert trees_equal(src, os.path.join(root, "src"))


def test_train_finetune_needs_live() -> None:
    from policy.ppo import DEFAULT_CHECKPOINT

    r = subprocess.run(
        [sys.executable, "-m", "xfer.cli", "train", "--finetune", str(DEFAULT_CHECKPOINT)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert r.returncode == 2 and "--finetune CKPT and --live SCENARIO go together" in r.stderr
