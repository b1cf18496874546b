"""The NFQUEUE delay line: build it on first use, start it in a namespace, stop it cleanly.

The C source sits next to this file. :func:`binary` compiles it with gcc into
``testbeds/delayline/build/`` (or ``~/.cache/xfer/`` when the package directory is read-only),
keyed by a hash of the source, so an edited source is rebuilt automatically.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

SOURCE = Path(__file__).with_name("delayline.c")
HEADER = Path("/usr/include/libnetfilter_queue/libnetfilter_queue.h")


class DelayLineError(RuntimeError):
    """The delay line cannot be built or did not start."""


def _build_dirs() -> list[Path]:
    return [SOURCE.parent / "build", Path.home() / ".cache" / "xfer"]


def binary() -> Path:
    """Path of the compiled delay line, compiling it first if needed."""
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]
    for d in _build_dirs():
        exe = d / f"delayline-{digest}"
        if exe.exists():
            return exe
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        raise DelayLineError(
            "no C compiler: install the Debian package 'gcc' (scripts/setup.sh does)"
        )
    if not HEADER.exists():
        raise DelayLineError(
            f"{HEADER} is missing: install the Debian package 'libnetfilter-queue-dev' "
            "(scripts/setup.sh does) to build the testbed's delay line"
        )
    errors = []
    for d in _build_dirs():
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            errors.append(f"{d}: {exc}")
            continue
        exe = d / f"delayline-{digest}"
        tmp = d / f".delayline-{digest}.{os.getpid()}"
        cmd = [cc, "-O2", "-Wall", "-o", str(tmp), str(SOURCE), "-lnetfilter_queue"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise DelayLineError(f"compiling {SOURCE} failed:\n{proc.stderr.strip()}")
        os.replace(tmp, exe)  # atomic: concurrent builders never see a half-written file
        return exe
    raise DelayLineError("cannot create a build directory: " + "; ".join(errors))


def start(netns: str, queues: dict[int, float], log: Path) -> subprocess.Popen[bytes]:
    """Start one delay line in ``netns`` serving ``{queue number: one-way delay in ms}``.

    Its stderr (errors, and the packet counters it prints on exit) goes to ``log``. Returns
    once it has bound every queue (it prints "delayline: ready").
    """
    exe = binary()
    args = [f"{q}:{round(ms * 1000)}" for q, ms in sorted(queues.items())]
    with open(log, "ab") as err:
        proc = subprocess.Popen(
            ["ip", "netns", "exec", netns, str(exe), *args],
            stdout=subprocess.PIPE,
            stderr=err,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C in the terminal must not kill it before teardown
        )
    assert proc.stdout is not None
    line = proc.stdout.readline().decode(errors="replace").strip()
    proc.stdout.close()
    if line != "delayline: ready":
        proc.kill()
        proc.wait(timeout=5)
        tail = log.read_text(errors="replace").strip().splitlines()[-3:]
        raise DelayLineError(f"delay line in {netns} did not start: {' / '.join(tail)}")
    return proc


def stop_pid(pid: int, timeout: float = 5.0) -> None:
    """Stop a delay line by pid with SIGTERM (it releases held packets first), then SIGKILL."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            return
        time.sleep(0.02)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reap it if it is our child
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
