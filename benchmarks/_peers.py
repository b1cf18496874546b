"""Start, stop and measure the programs a benchmark runs side by side: the peers (iperf3,
GridFTP) and xfer itself (from a snapshot of its packages); and the file tree they move.

Every process started here is stopped by its own PID (never by name). CPU time is measured
per process: a client through ``os.wait4`` (its own rusage, reaped children included), a
long-running server through ``psutil`` deltas of user + system + reaped children's time.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import psutil

PEER_PACKAGES = {
    "iperf3": "iperf3",
    "globus-gridftp-server": "globus-gridftp-server-progs",
    "globus-url-copy": "globus-gass-copy-progs",
}
"""Peer program -> the Debian package that ships it (all listed in scripts/setup.sh)."""

XFER = [sys.executable, "-P", "-c", "from xfer.cli import main; main()"]
"""How to run the xfer CLI from the interpreter that runs the benchmark (``-P``: the current
directory is not put first on the path, so ``PYTHONPATH`` decides which xfer runs)."""


def check_peers(install: bool) -> dict[str, bool]:
    """Which peer programs are present; with ``install`` (and root), apt-get the missing ones.

    Prints one clear line per missing program: the benchmark then skips what needs it."""
    missing = [p for p in PEER_PACKAGES if _which(p) is None]
    if missing and install:
        pkgs = sorted({PEER_PACKAGES[p] for p in missing})
        if os.geteuid() == 0 and shutil.which("apt-get"):
            print(f"bench: installing {' '.join(pkgs)} with apt-get", file=sys.stderr)
            env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
            subprocess.run(["apt-get", "update", "-qq"], check=False, env=env)
            subprocess.run(
                ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *pkgs],
                check=False,
                env=env,
            )
        else:
            print("bench: --install needs root and apt-get", file=sys.stderr)
        missing = [p for p in PEER_PACKAGES if _which(p) is None]
    for p in missing:
        print(
            f"bench: peer {p!r} not found: install the Debian package {PEER_PACKAGES[p]} "
            "(scripts/setup.sh does, or rerun with --install as root); its rows are skipped",
            file=sys.stderr,
        )
    return {p: p not in missing for p in PEER_PACKAGES}


def _which(prog: str) -> str | None:
    return shutil.which(prog) or shutil.which(prog, path="/usr/sbin:/usr/bin:/sbin:/bin")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """Wait until ``proc`` listens on ``port`` (seen from the kernel's socket table, never by
    connecting: a probe connection would count as a test for iperf3), or fail naming it."""
    deadline = time.monotonic() + timeout
    ps = psutil.Process(proc.pid)
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args!r} exited with {proc.returncode} before listening")
        conns = ps.net_connections(kind="tcp")
        if any(c.status == psutil.CONN_LISTEN and c.laddr and c.laddr[1] == port for c in conns):
            return
        time.sleep(0.05)
    raise RuntimeError(f"{proc.args!r} is not listening on port {port} after {timeout} s")


# --------------------------------------------------------------------------- servers


@dataclass
class Server:
    """A long-running server process started by the benchmark."""

    name: str
    proc: subprocess.Popen[bytes]
    port: int
    log: IO[bytes]

    def cpu(self, settle: float = 2.0) -> float:
        """CPU seconds used so far (self + reaped children), after waiting up to ``settle``
        seconds for forked per-connection children to exit and be reaped."""
        p = psutil.Process(self.proc.pid)
        deadline = time.monotonic() + settle
        while time.monotonic() < deadline:
            try:
                if not p.children(recursive=True):
                    break
            except psutil.NoSuchProcess:
                break
            time.sleep(0.02)
        t = p.cpu_times()
        return t.user + t.system + t.children_user + t.children_system

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.log.close()


def _spawn(
    name: str,
    cmd: list[str],
    port: int,
    popen: Callable[..., subprocess.Popen[bytes]] = subprocess.Popen,
    ready: Callable[[subprocess.Popen[bytes]], None] | None = None,
) -> Server:
    """Start a server (``popen``), wait until it is ``ready`` (default: listening on ``port``
    on loopback), stop it if it never is."""
    log = tempfile.TemporaryFile()  # noqa: SIM115 (owned by the Server, closed by stop())
    proc = popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    srv = Server(name, proc, port, log)
    try:
        if ready is None:
            wait_port(port, proc)
        else:
            ready(proc)
    except BaseException:
        srv.stop()
        raise
    return srv


def wait_listen_ns(
    proc: subprocess.Popen[bytes], addr: str, port: int, timeout: float = 20
) -> None:
    """Wait until ``proc`` (started with ``ip netns exec``) listens on ``addr:port``, read from
    its own ``/proc/PID/net/tcp`` (its namespace's table; psutil reads the caller's)."""
    want = f"{socket.inet_aton(addr)[::-1].hex().upper()}:{port:04X}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args!r} exited with {proc.returncode} before listening")
        try:
            rows = Path(f"/proc/{proc.pid}/net/tcp").read_text().splitlines()[1:]
        except OSError:
            rows = []
        if any(f[1] == want and f[3] == "0A" for f in (r.split() for r in rows)):
            return
        time.sleep(0.05)
    raise RuntimeError(f"{proc.args!r} is not listening on {addr}:{port} after {timeout} s")


def ns_server(host: Any, name: str, argv: list[str], port: int) -> Server:
    """A server started inside a testbed host (``host.popen``), once it listens there."""
    return _spawn(name, argv, port, popen=host.popen,
                  ready=lambda proc: wait_listen_ns(proc, host.addr, port))  # fmt: skip


def start_iperf3() -> Server:
    """``iperf3 -s`` on loopback (serves one test at a time, many tests in a row)."""
    port = free_port()
    return _spawn("iperf3", ["iperf3", "-s", "-B", "127.0.0.1", "-p", str(port)], port)


def start_gridftp() -> Server:
    """A local ``globus-gridftp-server`` in anonymous mode mapped to ``nobody`` (it refuses
    root), forking one child per connection, in the foreground so that its PID is ours."""
    port = free_port()
    cmd = [
        _which("globus-gridftp-server") or "globus-gridftp-server",
        "-aa",
        "-anonymous-user",
        "nobody",
        "-p",
        str(port),
        "-control-interface",
        "127.0.0.1",
        "-data-interface",
        "127.0.0.1",
        "-s",
    ]
    return _spawn("gridftp", cmd, port)


def start_xfer_recv(root: str, fsync: bool) -> Server:
    """``xfer recv --listen 127.0.0.1:0`` (a long-running receiver); reads the port it printed."""
    fd, path = tempfile.mkstemp(prefix="xfer-recv-", suffix=".log")
    os.close(fd)
    # O_APPEND: our reads below never move the child's write offset
    log = open(path, "a+b")  # noqa: SIM115 (owned by the Server, closed by stop())
    os.unlink(path)
    cmd = [*XFER, "recv", "--listen", "127.0.0.1:0", "--root", root]
    if not fsync:
        cmd.append("--no-fsync")
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    m = None
    while m is None and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
        m = re.search(rb"listening on [^\s,]*:(\d+)", os.pread(log.fileno(), 4096, 0))
    if m is None:
        proc.kill()
        proc.wait()
        tail = os.pread(log.fileno(), 4096, 0)
        log.close()
        raise RuntimeError(f"xfer recv did not report its address: {tail[-500:]!r}")
    srv = Server("xfer-fsync" if fsync else "xfer", proc, int(m.group(1)), log)
    wait_port(srv.port, proc)
    return srv


# --------------------------------------------------------------------------- clients


@dataclass(frozen=True)
class ClientRun:
    """What one client process did."""

    returncode: int
    stdout: str
    stderr: str
    wall: float
    """Seconds from spawn to exit."""
    cpu: float
    """User + system seconds of the process and its reaped children (wait4 rusage)."""


def run_client(cmd: list[str], timeout: float = 300.0) -> ClientRun:
    """Run a client to completion; its CPU time comes from ``wait4``."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        deadline = t0 + timeout
        while True:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                pid, status, ru = os.wait4(proc.pid, 0)
                break
            time.sleep(0.005)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return ClientRun(
            proc.returncode,
            out.read().decode(errors="replace"),
            err.read().decode(errors="replace")[-2000:],
            wall,
            ru.ru_utime + ru.ru_stime,
        )


def load_average() -> tuple[float, float, float]:
    return os.getloadavg()


def machine() -> dict[str, str]:
    """Host facts for the results table."""
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    u = os.uname()
    return {
        "host": u.nodename,
        "kernel": u.release,
        "cpu": cpu,
        "cores": str(os.cpu_count()),
        "mem_gib": f"{psutil.virtual_memory().total / 2**30:.1f}",
        "python": sys.version.split()[0],
    }


# ------------------------------------------------------------------------ the engine


def snapshot_engine(source: Path, work: Path) -> dict[str, Any]:
    """Copy the engine's packages (``xfer``, ``policy``) from ``source`` into ``work`` and put
    the copy first on every child's ``PYTHONPATH``: every xfer process of the run then runs the
    same code, even while others edit the tree. Returns where it came from (commit, dirty)."""
    dest = work / "engine"
    for pkg in ("xfer", "policy"):
        if not (source / pkg).is_dir():
            raise SystemExit(
                f"bench: {source / pkg} not found: give --engine the directory "
                "that holds the xfer/ and policy/ packages"
            )
        shutil.copytree(source / pkg, dest / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(dest), os.environ.get("PYTHONPATH", "")) if p
    )
    where = subprocess.run(
        [*XFER[:2], "-c", "import xfer; print(xfer.__file__)"], capture_output=True, text=True
    ).stdout.strip()
    if not where.startswith(str(dest)):
        raise SystemExit(f"bench: the xfer processes would import {where!r}, not the snapshot")
    info: dict[str, Any] = {"source": str(source)}
    git = ["git", "-C", str(source)]
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    if head.returncode == 0:
        dirty = subprocess.run(
            [*git, "status", "--porcelain", "--", "xfer", "policy"], capture_output=True, text=True
        ).stdout.split("\n")
        info["commit"] = head.stdout.strip()
        info["dirty_files"] = sorted(line[3:] for line in dirty if line.strip())
    return info


# ------------------------------------------------------------------------------ the tree


def make_tree(root: Path, total: int) -> tuple[int, int]:
    """A tree of mixed sizes (about half the bytes in 4 large files, a quarter in 16 MiB files,
    a fifth in 1 MiB files, the rest in ~300 small files 1 B..64 KiB, plus an empty file),
    readable by everyone (the GridFTP server reads it as ``nobody``). Returns (files, bytes)."""
    pattern = os.urandom(16 << 20)
    sizes: list[tuple[str, int]] = [(f"large/big{i}.bin", total // 8) for i in range(4)]
    sizes += [(f"medium/m{i:03d}.dat", 16 << 20) for i in range(max(1, total // 4 // (16 << 20)))]
    sizes += [
        (f"small/d{i % 8}/s{i:04d}.dat", 1 << 20) for i in range(max(1, total // 5 // (1 << 20)))
    ]
    sizes += [(f"tiny/t{i:03d}.txt", 1 + (i * 7919) % (64 << 10)) for i in range(300)]
    sizes.append(("tiny/empty", 0))
    n = 0
    for k, (rel, size) in enumerate(sizes):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as f:
            off = (k * 4099) % len(pattern)
            left = size
            while left > 0:
                chunk = pattern[off : off + left]
                f.write(chunk)
                left -= len(chunk)
                off = 0
        n += size
    for d, _dirs, files in os.walk(root):
        os.chmod(d, 0o755)
        for name in files:
            os.chmod(os.path.join(d, name), 0o644)
    return len(sizes), n


def tree_size(root: Path) -> tuple[int, int]:
    files = total = 0
    for d, _dirs, names in os.walk(root):
        for name in names:
            files += 1
            total += os.lstat(os.path.join(d, name)).st_size
    return files, total
