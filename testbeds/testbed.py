"""The testbed: bring a scenario up, hand out its hosts, always tear it down.

    with Testbed(load_scenario("wan-1g-50ms")) as tb:
        tb.hosts["receiver"].popen(["xfer", "recv", ...])
        tb.hosts["sender"].run(["xfer", "send", ...], timeout=60)

The state (namespaces, pids, addresses) is written to ``/run/xfer-testbed/<name>.json`` so that
another process can use it (:meth:`Testbed.attach`, ``xfer testbed exec``) and so that
``testbeds.down(name)`` can clean up after a crash.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from . import delayline
from .netns import STATE_DIR, in_ns, list_namespaces, ns_name, read_state, state_file
from .netns import down as netns_down
from .scenario import Scenario, ScenarioError, load_scenario
from .schedule import IPERF_PORT, ScheduleRunner
from .topology import Builder


class TestbedError(RuntimeError):
    """The testbed cannot be brought up (already up, not root, missing tools, ...)."""


@dataclass(frozen=True)
class Host:
    """One namespace of the testbed."""

    name: str
    """Host name (sender, receiver, router, sender2, bgsend1, ...)."""
    ns: str
    """Network namespace name."""
    addrs: tuple[str, ...] = field(default=())
    """IPv4 addresses, one per attached path, primary first (empty for the router)."""

    @property
    def addr(self) -> str:
        """Primary IPv4 address (path 1)."""
        if not self.addrs:
            raise TestbedError(f"host {self.name} has no end-host address")
        return self.addrs[0]

    def cmd(self, argv: Sequence[str]) -> list[str]:
        """``argv`` prefixed to run inside this host's namespace."""
        return in_ns(self.ns, [str(a) for a in argv])

    def popen(self, argv: Sequence[str], **kwargs: Any) -> subprocess.Popen[Any]:
        """Start ``argv`` inside the host (same keywords as :class:`subprocess.Popen`)."""
        return subprocess.Popen(self.cmd(argv), **kwargs)

    def run(
        self, argv: Sequence[str], timeout: float | None = None, **kwargs: Any
    ) -> subprocess.CompletedProcess[Any]:
        """Run ``argv`` inside the host to completion (same keywords as :func:`subprocess.run`)."""
        return subprocess.run(self.cmd(argv), timeout=timeout, **kwargs)


def _check_environment() -> None:
    if os.geteuid() != 0:
        raise TestbedError("the testbed needs root (network namespaces, tc, nftables)")
    for tool in ("ip", "tc", "nft", "iptables", "ethtool", "iperf3"):
        if not any(
            Path(d, tool).exists() for d in os.environ.get("PATH", "/usr/sbin:/usr/bin").split(":")
        ):
            raise TestbedError(f"'{tool}' is not installed (run scripts/setup.sh)")


class Testbed:
    """A scenario brought up in network namespaces (a context manager)."""

    __test__ = False  # not a pytest test class despite the name
    _live: set[str] = set()

    def __init__(self, scenario: Scenario | str, name: str | None = None) -> None:
        self.scenario = load_scenario(scenario) if isinstance(scenario, str) else scenario
        if name is None:
            name = f"{self.scenario.name}-p{os.getpid()}"
            n = 1
            while name + ("" if n == 1 else f"-{n}") in Testbed._live:
                n += 1
            name += "" if n == 1 else f"-{n}"
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,59}", name):
            raise TestbedError(f"testbed name {name!r}: use 1-60 letters, digits, '.', '_', '-'")
        self.name = name
        self.builder = Builder(name, self.scenario)
        self.hosts: dict[str, Host] = {"router": Host("router", self.builder.router)}
        for h in self.builder.hosts:
            self.hosts[h.name] = Host(h.name, self.builder.ns(h.name), tuple(h.addrs))
        self._pids: dict[str, int] = {}
        self._procs: list[subprocess.Popen[Any]] = []
        self._schedule: ScheduleRunner | None = None
        self._owner = True
        self._is_up = False
        self._old_sigterm: Any = None

    @property
    def pids(self) -> dict[str, int]:
        """Pids of the processes the testbed runs itself (delay line, background servers)."""
        return dict(self._pids)

    # -- life cycle ---------------------------------------------------------------------

    def __enter__(self) -> Testbed:
        self._old_sigterm = _sigterm_raises()
        try:
            self.up()
        except BaseException:
            _restore_sigterm(self._old_sigterm)
            raise
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            self.down()
        finally:
            _restore_sigterm(self._old_sigterm)

    def up(self) -> Testbed:
        """Create everything; on any failure, remove what was created and re-raise."""
        _check_environment()
        if read_state(self.name) is not None or list_namespaces(ns_name(self.name, "")):
            raise TestbedError(
                f"a testbed named {self.name!r} is already up; run 'xfer testbed down {self.name}'"
            )
        Testbed._live.add(self.name)
        self._is_up = True
        try:
            with _no_interrupts():
                self._write_state()  # first, so that a crash below can still be cleaned up
                self.builder.create()
                self.builder.impair()
                self._start_delay_line()
                self._start_background_servers()
                self._write_state()
        except BaseException:
            self.down()
            raise
        return self

    def _start_delay_line(self) -> None:
        queues = self.builder.delay_queues()
        if not queues:
            return
        log = STATE_DIR / f"{self.name}.log"
        proc = delayline.start(self.builder.router, queues, log)
        self._pids["delayline"] = proc.pid
        self._procs.append(proc)
        self.builder.steer_to_delay_line()

    def _start_background_servers(self) -> None:
        for k in range(1, len(self.scenario.background) + 1):
            proc = self.hosts[f"bgrecv{k}"].popen(
                ["iperf3", "-s", "-p", str(IPERF_PORT)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip
            self._pids[f"bgserver{k}"] = proc.pid
            self._procs.append(proc)

    def down(self) -> None:
        """Stop the schedule and every process, delete the namespaces (idempotent)."""
        if not self._owner or not self._is_up:
            return
        with _no_interrupts():
            if self._schedule is not None:
                self._schedule.stop()
                self._schedule = None
            if "delayline" in self._pids:
                delayline.stop_pid(self._pids["delayline"])
            netns_down(self.name)
            for proc in self._procs:
                with contextlib.suppress(Exception):
                    proc.wait(timeout=1)
            self._is_up = False
            Testbed._live.discard(self.name)

    def _write_state(self) -> None:
        STATE_DIR.mkdir(parents=True, exist_ok=True)
        state = {
            "name": self.name,
            "scenario": self.scenario.source or self.scenario.name,
            "namespaces": self.builder.namespaces,
            "hosts": {h.name: {"ns": h.ns, "addrs": list(h.addrs)} for h in self.hosts.values()},
            "pids": self._pids,
            "owner_pid": os.getpid(),
            "created": time.time(),
        }
        tmp = state_file(self.name).with_suffix(".tmp")
        tmp.write_text(json.dumps(state, indent=1))
        tmp.replace(state_file(self.name))

    @classmethod
    def attach(cls, name: str) -> Testbed:
        """A handle on a testbed brought up by another process (it will not tear it down)."""
        state = read_state(name)
        if state is None:
            raise TestbedError(f"no testbed named {name!r} is up (no {state_file(name)})")
        try:
            scn = load_scenario(state["scenario"])
        except ScenarioError as exc:
            raise TestbedError(
                f"testbed {name!r} is up but its scenario cannot be reloaded: {exc}"
            ) from exc
        tb = cls(scn, name=name)
        tb.hosts = {n: Host(n, h["ns"], tuple(h["addrs"])) for n, h in state["hosts"].items()}
        tb._pids = dict(state.get("pids", {}))
        tb._owner = False
        return tb

    # -- schedule and runtime changes ---------------------------------------------------

    def start_schedule(self) -> ScheduleRunner:
        """Start the scenario's time schedule and background flows (t = 0 now)."""
        if self._schedule is not None:
            raise TestbedError("the schedule is already running")

        def spawn(host: str, argv: list[str]) -> subprocess.Popen[bytes]:
            return self.hosts[host].popen(
                argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )

        def server(k: int) -> str:
            return self.hosts[f"bgrecv{k}"].addr

        self._schedule = ScheduleRunner(self.scenario, self._apply, spawn, server)
        self._schedule.start()
        return self._schedule

    @property
    def schedule_log(self) -> list[tuple[float, str]]:
        """(seconds since start_schedule, event) for every event applied so far."""
        return list(self._schedule.log) if self._schedule else []

    def _apply(self, action: str, arg: object) -> None:
        if action == "set_rate":
            assert isinstance(arg, tuple)
            self.set_rate(int(arg[0]), float(arg[1]))
        elif action in ("path_down", "path_up"):
            assert isinstance(arg, int)
            self.builder.set_path_state(arg, up=action == "path_up")

    def set_rate(self, path: int, rate_bps: float) -> None:
        """Change the bottleneck rate of ``path`` (1-based) now."""
        self.builder.set_rate(path, rate_bps)

    def path_down(self, path: int) -> None:
        """Blackhole ``path`` now (both directions)."""
        self.builder.set_path_state(path, up=False)

    def path_up(self, path: int) -> None:
        """Let ``path`` carry traffic again."""
        self.builder.set_path_state(path, up=True)

    @contextlib.contextmanager
    def loss_paused(self) -> Iterator[None]:
        """Temporarily lift the random loss (used by calibration to measure the rate alone)."""
        self.builder.set_loss_enabled(False)
        try:
            yield
        finally:
            self.builder.set_loss_enabled(True)


def _sigterm_raises() -> Any:
    """Inside ``with Testbed(...)``, SIGTERM (when it would simply kill us) raises SystemExit,
    so that the block unwinds and tears the testbed down. Returns what to restore."""
    if threading.current_thread() is not threading.main_thread():
        return None
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return None

    def handler(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)
    return signal.SIG_DFL


def _restore_sigterm(old: Any) -> None:
    if old is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, old)


@contextlib.contextmanager
def _no_interrupts() -> Iterator[None]:
    """Defer Ctrl-C/SIGTERM while setting up or tearing down (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    old = {
        s: signal.signal(s, lambda n, f: pending.append(n)) for s in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        if pending:
            if pending[0] == signal.SIGINT:
                raise KeyboardInterrupt
            raise SystemExit(128 + pending[0])


def down(name: str | None = None, *, include_in_use: bool = False) -> list[str]:
    """Remove testbed ``name`` (its namespaces, processes, rules, state), also after a crash.

    With None: every ``xtb-`` testbed whose owning process is gone (or all of them with
    ``include_in_use``). Returns the namespaces removed.
    """
    return netns_down(name, include_in_use=include_in_use)
