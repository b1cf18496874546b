"""``stdin``: a controller whose stream target comes from another process, over pipes.

Used by the live training environment (``train/live.py``) and by anyone who wants to steer a
running ``xfer send`` from a script. The protocol is line-based JSON, one exchange per MI:

1. At the end of every MI the controller writes ONE line to the sender's **stdout** and
   flushes it::

       {"event": "observe", "t": ..., "mi_s": ..., "streams": ..., "throughput_bps": ...,
        ...every SignalVector field (see policy/signals.py)...}

   With ``xfer send --json-stream`` this line comes right before the ``interval`` line of
   the same MI, so stdout stays pure JSON lines (tell them apart by ``event``).
2. It then reads ONE line from the sender's **stdin**: the target stream count for the next
   MI, either a bare integer (``12``) or an object (``{"target": 12}``). The engine clips it
   to ``[--min-streams, --max-streams]`` as for every controller.

Failure handling (a dead or slow driver must never hang or kill a transfer):

* no line within ``timeout`` seconds: keep the last target, warn once on stderr;
* end of file on stdin (the driver exited or closed the pipe): keep the last target from now
  on without waiting again, warn once;
* a malformed line: an error on stderr that quotes the line, keep the last target;
* answers that arrive late (after a timeout) are applied at the start of the next MI,
  before its ``observe`` line is written, so the exchange stays in step.

Spec: ``stdin[:timeout=SECONDS][,initial=N]`` (defaults: 30 s; ``initial`` falls back to the
engine's initial stream count, then 2). The read runs in the sender's control loop; it
waits with ``select`` and never longer than ``timeout``.
"""

from __future__ import annotations

import json
import os
import select
import sys
import time
from typing import IO

from policy.base import ControllerConfig
from policy.signals import SignalVector

DEFAULT_TIMEOUT_S = 30.0
"""Seconds to wait for the driver's answer before keeping the last target."""
MAX_LINE = 4096
"""Longest answer line accepted (bytes); longer input is a protocol error."""


def parse_args(args: str) -> tuple[float, int | None]:
    """``timeout=S,initial=N`` (both optional) -> (timeout, initial)."""
    timeout, initial = DEFAULT_TIMEOUT_S, None
    for part in (p.strip() for p in args.split(",") if p.strip()):
        key, eq, value = part.partition("=")
        try:
            if key == "timeout" and eq:
                timeout = float(value)
            elif key == "initial" and eq:
                initial = int(value)
            else:
                raise ValueError
        except ValueError:
            raise ValueError(
                f"stdin: bad argument {part!r}; expected timeout=SECONDS and/or initial=N"
            ) from None
    if not timeout > 0:
        raise ValueError(f"stdin: timeout must be > 0 s, got {timeout}")
    if initial is not None and initial < 1:
        raise ValueError(f"stdin: initial must be >= 1, got {initial}")
    return timeout, initial


def parse_target(line: str) -> int:
    """The target in one answer line (``12`` or ``{"target": 12}``); ValueError if malformed."""
    try:
        value = json.loads(line)
    except json.JSONDecodeError:
        raise ValueError("not JSON") from None
    if isinstance(value, dict):
        value = value.get("target")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError('expected an integer or {"target": <integer>}')
    return value


class LineReader:
    """Lines from a file descriptor with a deadline (select + os.read; no Python buffering)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = b""
        self.eof = False

    def _fill(self, wait_s: float) -> bool:
        """Read what is available within ``wait_s``; False if nothing came (timeout)."""
        ready, _, _ = select.select([self.fd], [], [], max(wait_s, 0.0))
        if not ready:
            return False
        chunk = os.read(self.fd, 65536)
        if not chunk:
            self.eof = True
        self.buf += chunk
        return True

    def _pop(self) -> str | None:
        nl = self.buf.find(b"\n")
        if nl < 0:
            if not ((self.eof and self.buf) or len(self.buf) > MAX_LINE):
                return None
            nl = len(self.buf)  # a last line without newline, or an overlong one
        line, self.buf = self.buf[:nl], self.buf[nl + 1 :]
        return line.decode("utf-8", "replace").strip()

    def readline(self, timeout_s: float) -> str | None:
        """The next line (stripped); None on timeout or at end of file with nothing left."""
        deadline = time.monotonic() + timeout_s
        while True:
            line = self._pop()
            if line is not None:
                return line
            if self.eof or not self._fill(deadline - time.monotonic()):
                return None

    def ready_lines(self) -> list[str]:
        """Every complete line that can be read without waiting."""
        lines = []
        while not self.eof and self._fill(0.0):
            pass
        while (line := self._pop()) is not None:
            lines.append(line)
        return lines


class StdinController:
    """``stdin[:timeout=S,initial=N]``: the target is read from stdin once per MI."""

    name = "stdin"

    def __init__(
        self,
        args: str,
        config: ControllerConfig,
        *,
        in_fd: int | None = None,
        out: IO[str] | None = None,
        err: IO[str] | None = None,
    ) -> None:
        self.config = config
        self.timeout_s, initial = parse_args(args)
        self.target = config.clip(initial or config.initial_streams or 2)
        self._in_fd = in_fd
        self._out, self._err = out, err
        self._reader: LineReader | None = None
        self._warned: set[str] = set()

    def initial(self) -> int:
        return self.target

    def _warn(self, msg: str, once: str | None = None) -> None:
        if once is not None:
            if once in self._warned:
                return
            self._warned.add(once)
        err = self._err or sys.stderr
        print(f"xfer: policy stdin: {msg}", file=err, flush=True)

    def _apply(self, line: str) -> None:
        if not line:
            return
        try:
            self.target = self.config.clip(parse_target(line))
        except ValueError as exc:
            self._warn(
                f"malformed answer {line[:200]!r} from the driver on stdin ({exc}); "
                f"keeping {self.target} streams"
            )

    def decide(self, signals: SignalVector) -> int:
        if self._reader is None:
            self._reader = LineReader(sys.stdin.fileno() if self._in_fd is None else self._in_fd)
        reader = self._reader
        for late in reader.ready_lines():  # answers that came after a timeout
            self._apply(late)
        out = self._out or sys.stdout
        try:
            out.write(json.dumps({"event": "observe", **signals.to_dict()}) + "\n")
            out.flush()
        except (OSError, ValueError) as exc:  # stdout closed: nobody to ask
            self._warn(f"cannot write to stdout ({exc}); keeping {self.target} streams", "out")
            return self.target
        line = None if reader.eof else reader.readline(self.timeout_s)
        if line is None:
            if reader.eof:
                self._warn(f"stdin closed; keeping {self.target} streams from now on", "eof")
            else:
                self._warn(
                    f"no answer on stdin within {self.timeout_s:g} s; keeping "
                    f"{self.target} streams (warned once)",
                    "timeout",
                )
            return self.target
        self._apply(line)
        return self.target
