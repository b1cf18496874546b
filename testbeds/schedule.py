"""The time schedule of a testbed: capacity changes, paths down/up, background flows.

:class:`ScheduleRunner` turns a scenario's schedule and background flows into timed events
and applies them from a daemon thread, with t = 0 when it starts. Background flows are
iperf3 clients in ``bgsendK`` towards an iperf3 server in ``bgrecvK``; on/off flows are
restarted every ``on_s + off_s`` seconds.
"""

from __future__ import annotations

import heapq
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .scenario import BackgroundFlow, Scenario

IPERF_PORT = 5201


@dataclass(order=True)
class _Due:
    at_s: float
    seq: int
    action: str = field(compare=False)
    arg: object = field(compare=False)


def iperf_client_args(flow: BackgroundFlow, server: str, seconds: float | None) -> list[str]:
    """iperf3 command line of one background flow (``seconds`` None: until stopped)."""
    args = ["iperf3", "-c", server, "-p", str(IPERF_PORT), "-C", flow.cc, "-P", str(flow.streams)]
    args += ["-t", str(int(seconds) if seconds else 86400), "-i", "0"]
    if flow.rate_bps:
        args += ["-b", str(int(flow.rate_bps))]
    return args


class ScheduleRunner:
    """Applies a scenario's timed events in a background thread.

    ``apply(action, arg)`` is called for set_rate (arg (path, rate)), path_down/path_up (arg
    path); flows are started through ``spawn(host, argv) -> Popen``.
    """

    def __init__(
        self,
        scn: Scenario,
        apply: Callable[[str, object], None],
        spawn: Callable[[str, list[str]], subprocess.Popen[bytes]],
        server_addr: Callable[[int], str],
    ) -> None:
        self.scn, self._apply, self._spawn, self._server = scn, apply, spawn, server_addr
        self._heap: list[_Due] = []
        self._seq = 0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._clients: dict[str, subprocess.Popen[bytes]] = {}
        self._active: set[str] = set()
        self._thread: threading.Thread | None = None
        self.t0 = 0.0
        self.log: list[tuple[float, str]] = []
        """(seconds since start, what was done) for every applied event."""

    def _push(self, at_s: float, action: str, arg: object) -> None:
        self._seq += 1
        heapq.heappush(self._heap, _Due(at_s, self._seq, action, arg))

    def start(self) -> None:
        """t = 0 now: queue every event and start the thread."""
        for e in self.scn.schedule:
            arg: object = (
                e.flow if e.flow else (e.path, e.rate_bps) if e.action == "set_rate" else e.path
            )
            self._push(e.at_s, e.action, arg)
        for flow in self.scn.background:
            if flow.start_s is not None:
                self._push(flow.start_s, "start_background", flow.name)
            if flow.stop_s is not None:
                self._push(flow.stop_s, "stop_background", flow.name)
        self.t0 = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="testbed-schedule", daemon=True)
        self._thread.start()

    def now(self) -> float:
        """Seconds since the schedule started."""
        return time.monotonic() - self.t0

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                due = self._heap[0] if self._heap else None
                if due is not None and due.at_s <= self.now():
                    heapq.heappop(self._heap)
                    try:
                        self._do(due.action, due.arg)
                    except Exception as exc:  # keep the schedule going; the log says what failed
                        self.log.append((self.now(), f"FAILED {due.action} {due.arg}: {exc}"))
                    continue
            wait = 0.5 if due is None else min(0.5, max(0.0, due.at_s - self.now()))
            self._stop.wait(wait)

    def _do(self, action: str, arg: object) -> None:
        if action == "start_background":
            self._active.add(str(arg))
            self._flow_on(str(arg))
        elif action == "stop_background":
            self._active.discard(str(arg))
            self._flow_off(str(arg))
        elif action in ("_on", "_off"):
            if str(arg) in self._active:
                (self._flow_on if action == "_on" else self._flow_off)(str(arg))
            return
        else:
            self._apply(action, arg)
        self.log.append((self.now(), f"{action} {arg}"))

    def _flow(self, name: str) -> tuple[int, BackgroundFlow]:
        for k, flow in enumerate(self.scn.background, start=1):
            if flow.name == name:
                return k, flow
        raise KeyError(f"no background flow {name!r}")

    def _flow_on(self, name: str) -> None:
        k, flow = self._flow(name)
        self._flow_off(name)
        argv = iperf_client_args(flow, self._server(k), flow.on_s)
        self._clients[name] = self._spawn(f"bgsend{k}", argv)
        if flow.on_s is not None and flow.off_s is not None:
            self._push(self.now() + flow.on_s, "_off", name)
            self._push(self.now() + flow.on_s + flow.off_s, "_on", name)

    def _flow_off(self, name: str) -> None:
        proc = self._clients.pop(name, None)
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def start_flow(self, name: str) -> None:
        """Start a background flow now (outside the schedule)."""
        self._flow(name)
        with self._lock:
            self._do("start_background", name)

    def stop_flow(self, name: str) -> None:
        """Stop a background flow now."""
        with self._lock:
            self._do("stop_background", name)

    def stop(self) -> None:
        """Stop the thread and every background client."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        for name in list(self._clients):
            self._flow_off(name)
