"""The ``stdin`` controller's protocol over real pipes: answers, timeout, EOF, bad lines."""

from __future__ import annotations

import io
import json
import os
import threading
import time
from collections.abc import Iterator

import pytest

from policy.base import ControllerConfig, make_controller
from policy.external import StdinController, parse_args, parse_target
from policy.signals import SignalVector


def sig(t: float, streams: int = 2) -> SignalVector:
    return SignalVector(t, 1.0, streams, 1e8, 1e8, 0.0, 50.0, 49.0, 0.0, 1.02)


class Driver:
    """A controller wired to real pipes both ways, and a driver thread on the other end that
    answers each ``observe`` line with the next scripted reply (``None``: stay silent,
    ``EOF``: close the controller's stdin, ``("late", s)``: answer ``s`` only after the
    controller has given up on this MI)."""

    EOF = object()

    def __init__(self, script: list, args: str = "timeout=0.3") -> None:
        self.in_r, self.in_w = os.pipe()
        out_r, out_w = os.pipe()
        self.err = io.StringIO()
        self.ctl = StdinController(
            args, ControllerConfig(1, 16), in_fd=self.in_r, out=os.fdopen(out_w, "w"), err=self.err
        )
        self.seen: list[dict] = []
        self.script = list(script)
        self.thread = threading.Thread(target=self._run, args=(os.fdopen(out_r),), daemon=True)
        self.thread.start()

    def _run(self, out) -> None:
        for line in out:
            self.seen.append(json.loads(line))
            reply = self.script.pop(0) if self.script else None
            if reply is Driver.EOF:
                self.close_writer()
            elif isinstance(reply, tuple):
                time.sleep(0.5)  # past the controller's 0.3 s timeout
                os.write(self.in_w, reply[1].encode())
            elif reply is not None and self.in_w >= 0:
                os.write(self.in_w, reply.encode())

    def close_writer(self) -> None:
        if self.in_w >= 0:
            os.close(self.in_w)
            self.in_w = -1

    def close(self) -> None:
        self.ctl._out.close()  # type: ignore[union-attr]  # ends the driver thread
        self.thread.join(5)
        self.close_writer()
        os.close(self.in_r)


@pytest.fixture
def drive() -> Iterator:
    made: list[Driver] = []

    def make(script: list, args: str = "timeout=0.3") -> Driver:
        made.append(Driver(script, args))
        return made[-1]

    yield make
    for d in made:
        d.close()


def test_observe_line_then_target(drive) -> None:
    d = drive(["7\n", '{"target": 3}\n'])
    assert d.ctl.initial() == 2
    assert d.ctl.decide(sig(1.0)) == 7
    assert d.ctl.decide(sig(2.0, 7)) == 3
    assert [o["event"] for o in d.seen] == ["observe", "observe"]
    assert d.seen[0]["t"] == 1.0 and d.seen[1]["streams"] == 7 and d.seen[0]["rtt_ratio"] == 1.02
    assert set(d.seen[0]) == {"event"} | set(sig(0).to_dict())
    assert d.err.getvalue() == ""


def test_answer_is_clipped(drive) -> None:
    d = drive(["500\n", "0\n"])
    assert d.ctl.decide(sig(1.0)) == 16
    assert d.ctl.decide(sig(2.0)) == 1


def test_timeout_keeps_last_target_and_warns_once(drive) -> None:
    d = drive(["5\n", None, None, "6\n"])
    assert d.ctl.decide(sig(1.0)) == 5
    assert d.ctl.decide(sig(2.0)) == 5  # nobody answers: the controller does not hang
    assert d.ctl.decide(sig(3.0)) == 5
    assert d.err.getvalue().count("no answer on stdin within 0.3 s; keeping 5") == 1
    assert d.ctl.decide(sig(4.0)) == 6  # the driver is back


def test_late_answer_is_applied_before_the_next_observe(drive) -> None:
    d = drive([("late", "6\n"), "4\n", None])
    assert d.ctl.decide(sig(1.0)) == 2  # gives up after 0.3 s; the answer comes at 0.5 s
    time.sleep(0.5)
    # MI 2: the late 6 is drained first, so the answer read for MI 2 is MI 2's own (4) ...
    assert d.ctl.decide(sig(2.0)) == 4
    # ... and no stale answer is left over for MI 3 (the driver is silent: 4 is kept)
    assert d.ctl.decide(sig(3.0)) == 4


def test_eof_keeps_last_target_without_waiting(drive) -> None:
    d = drive(["8\n", Driver.EOF])
    assert d.ctl.decide(sig(1.0)) == 8
    for t in range(2, 6):
        assert d.ctl.decide(sig(float(t))) == 8
    err = d.err.getvalue()
    assert err.count("stdin closed; keeping 8 streams") == 1
    assert "no answer" not in err  # EOF is seen at once, never waited for
    time.sleep(0.1)
    assert len(d.seen) == 5  # the observe lines still go out


def test_last_line_without_newline_before_eof(drive) -> None:
    d = drive(["3"])
    d.ctl.timeout_s = 2.0

    def close_soon() -> None:
        time.sleep(0.2)
        d.close_writer()

    threading.Thread(target=close_soon).start()
    assert d.ctl.decide(sig(1.0)) == 3


def test_malformed_line_names_the_line_and_keeps_target(drive) -> None:
    bad = ["twelve", '{"streams": 3}', "true", "2.5", '"7"']
    d = drive(["4\n", *[b + "\n" for b in bad], "3.0\n"])
    assert d.ctl.decide(sig(1.0)) == 4
    for i, b in enumerate(bad):
        assert d.ctl.decide(sig(2.0 + i)) == 4
        assert f"malformed answer {b!r}" in d.err.getvalue(), b
    assert d.ctl.decide(sig(9.0)) == 3  # an integral float is accepted


def test_overlong_line_is_an_error_not_a_hang(drive) -> None:
    d = drive(["9" * 5000])
    assert d.ctl.decide(sig(1.0)) == 2
    assert "malformed answer" in d.err.getvalue()


def test_args_and_registry() -> None:
    assert parse_args("") == (30.0, None)
    assert parse_args("timeout=2.5,initial=6") == (2.5, 6)
    for bad in ("timeout=0", "initial=0", "speed=3", "5"):
        with pytest.raises(ValueError, match="stdin"):
            parse_args(bad)
    assert parse_target(" 12 ") == 12 and parse_target('{"target": 3}') == 3
    ctl = make_controller("stdin:initial=6", ControllerConfig(1, 4))
    assert ctl.name == "stdin" and ctl.initial() == 4  # clipped to max_streams
    assert make_controller("stdin", ControllerConfig(1, 64, 5)).initial() == 5
