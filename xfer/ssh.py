"""Start the far side over SSH, as ``scp`` and ``rsync`` do: ``xfer send DATA user@host:dir``.

The user's own ``ssh`` client runs ``exec xfer recv --stdio --root DIR`` on the far host, so
``~/.ssh/config``, the agent, keys and jump hosts work as they do for ssh itself. Over the SSH
channel, never on a command line, the sender hands the receiver a fresh random token (the
session's secret, from which the encryption keys are derived); the receiver answers with the
port it listens on; the data streams then connect to that port directly over TCP (they are not
squeezed through the SSH connection). The receiver serves that one session and exits; it also
exits as soon as its stdin (the SSH channel) reaches EOF, which is what happens when the sender
ends or dies, so no receiver is ever left behind.

Destinations (:func:`parse_destination`):

* ``HOST:PORT`` (digits only after the last colon, no slash), ``[V6]:PORT``: a receiver that is
  already running (``xfer recv``), as before;
* ``[USER@]HOST:[DIR]`` (scp style; an empty DIR is the login directory, a relative one is
  relative to it) and ``ssh://[USER@]HOST[:PORT][/DIR]`` (URL style; the path is absolute):
  start one over SSH. ``USER@HOST:5000`` is refused as ambiguous.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import re
import secrets
import select
import shlex
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

from xfer.errors import Exit, XferError

log = logging.getLogger("xfer.ssh")

PORT_LINE = "XFER-LISTEN"
"""What ``xfer recv --stdio`` prints on stdout, followed by its port, once it listens."""

NOT_FOUND = (126, 127)
"""Exit codes of a remote shell that cannot find or run the command (POSIX)."""


@dataclass(frozen=True, slots=True)
class Direct:
    """A receiver already listening at ``address`` (HOST:PORT)."""

    address: str


@dataclass(frozen=True, slots=True)
class SshTarget:
    """A receiver to start over SSH."""

    host: str
    """Host name, alias from ~/.ssh/config, or address (no brackets)."""
    path: str
    """Directory on the far host ('' is the login directory)."""
    user: str | None = None
    """Login name (None: ssh's default, e.g. from ~/.ssh/config)."""
    port: int | None = None
    """SSH port (None: ssh's default)."""

    def __str__(self) -> str:
        who = f"{self.user}@" if self.user else ""
        return f"{who}{self.host}" + (f":{self.port}" if self.port else "")


_HOST = re.compile(r"^[A-Za-z0-9_.%:-]+$")


def _check_host(host: str, dest: str) -> str:
    if not host or host.startswith("-") or not _HOST.match(host):
        raise ValueError(f"{dest!r}: {host!r} is not a host name or address")
    return host


def _check_user(user: str | None, dest: str) -> str | None:
    if user is not None and (not user or user.startswith("-") or "/" in user):
        raise ValueError(f"{dest!r}: bad user name {user!r}")
    return user


def _split_user(s: str) -> tuple[str | None, str]:
    user, at, rest = s.rpartition("@")
    return (user, rest) if at else (None, s)


def parse_destination(dest: str) -> Direct | SshTarget:
    """What the last argument of ``xfer send`` names (see the module docstring); ValueError
    with a message saying what is accepted."""
    if dest.startswith("ssh://"):
        return _parse_url(dest)
    user, rest = _split_user(dest)
    if rest.startswith("["):  # [v6]:PORT or [v6]:DIR
        end = rest.find("]")
        if end < 0 or rest[end + 1 : end + 2] != ":":
            raise ValueError(f"{dest!r}: expected [ADDRESS]:PORT or [USER@][ADDRESS]:DIR")
        host, tail = rest[1:end], rest[end + 2 :]
    else:
        host, colon, tail = rest.partition(":")
        if not colon:
            raise ValueError(
                f"{dest!r}: expected HOST:PORT (a running xfer recv) or [USER@]HOST:DIR "
                "(start one over SSH)"
            )
    if tail.isdigit() and "/" not in tail:
        if user is not None:
            raise ValueError(
                f"{dest!r} is ambiguous: write {user}@{host}:./{tail} for a directory named "
                f"{tail!r}, or {host}:{tail} for a receiver listening on port {tail}"
            )
        _check_host(host, dest)
        return Direct(f"[{host}]:{tail}" if ":" in host else f"{host}:{tail}")
    return SshTarget(_check_host(host, dest), tail, _check_user(user, dest))


def _parse_url(dest: str) -> SshTarget:
    rest = dest[len("ssh://") :]
    auth, slash, path = rest.partition("/")
    user, hostport = _split_user(auth)
    m = re.fullmatch(r"\[([^\]]+)\](?::(\d+))?|([^:\[\]]+)(?::(\d+))?", hostport)
    if m is None:
        raise ValueError(f"{dest!r}: expected ssh://[USER@]HOST[:PORT][/DIR]")
    host = m.group(1) or m.group(3)
    port = m.group(2) or m.group(4)
    if port is not None and not 0 < int(port) < 65536:
        raise ValueError(f"{dest!r}: port {port} outside 1..65535")
    return SshTarget(
        _check_host(host, dest),
        "/" + path if slash else "",
        _check_user(user, dest),
        int(port) if port else None,
    )


# -------------------------------------------------------------------- the sender's side


@dataclass(frozen=True, slots=True)
class SshConfig:
    """How the far side is started (``xfer send`` options)."""

    remote_xfer: str = "xfer"
    """The xfer command on the far host; split into words like a shell does (so
    ``"/opt/venv/bin/xfer"`` and ``"python3 -m xfer.cli"`` both work)."""
    ssh: str = "ssh"
    """The ssh command here, split the same way (e.g. ``"ssh -F ./ssh_config"``)."""
    start_timeout: float = 60.0
    """Seconds the far side has to log in, start and report its port."""


def remote_dir(path: str) -> str:
    """The receiver's --root on the far host: ``~`` and ``~/x`` are the login directory (the
    remote command runs there), an empty path too."""
    if path in ("", "~", "~/"):
        return "."
    return path[2:] if path.startswith("~/") else path


class RemoteReceiver:
    """``xfer recv --stdio`` on the far host, through one ``ssh`` process. ``start()`` returns
    (port, token); ``close()`` ends it (closing its stdin) and reaps ssh."""

    def __init__(self, target: SshTarget, cfg: SshConfig, listen: str = "0.0.0.0:0") -> None:
        self.target = target
        self.cfg = cfg
        self.listen = listen
        self.proc: subprocess.Popen[bytes] | None = None
        self.stderr: collections.deque[str] = collections.deque(maxlen=20)
        self._drain: threading.Thread | None = None

    def _ssh_base(self) -> list[str]:
        argv = [*shlex.split(self.cfg.ssh)]
        if self.target.port:
            argv += ["-p", str(self.target.port)]
        if self.target.user:
            argv += ["-l", self.target.user]
        return argv

    def data_host(self) -> str:
        """The address the data streams connect to: the host name ssh itself would use
        (``ssh -G`` resolves aliases from ~/.ssh/config), else the name as given."""
        try:
            out = subprocess.run(
                [*self._ssh_base(), "-G", "--", self.target.host],
                capture_output=True,
                text=True,
                timeout=10,
                stdin=subprocess.DEVNULL,
            ).stdout
        except (OSError, subprocess.TimeoutExpired):
            return self.target.host
        for line in out.splitlines():
            key, _, value = line.partition(" ")
            if key == "hostname" and value.strip():
                return value.strip()
        return self.target.host

    def command(self) -> list[str]:
        """The ssh command line (no secret in it)."""
        remote = [
            "exec",
            *shlex.split(self.cfg.remote_xfer),
            "recv",
            "--stdio",
            f"--listen={self.listen}",
            f"--root={remote_dir(self.target.path)}",  # one word: a DIR such as -x stays a DIR
        ]
        return [*self._ssh_base(), "-T", "--", self.target.host, shlex.join(remote)]

    def start(self) -> tuple[int, bytes]:
        """Start the far side; returns its port and the session's token."""
        token = secrets.token_bytes(32)
        try:
            self.proc = subprocess.Popen(
                self.command(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # Ctrl-C reaches us, and we end ssh ourselves
            )
        except OSError as exc:
            msg = f"cannot run {self.cfg.ssh!r}: {exc.strerror or exc}"
            raise XferError(msg, Exit.USAGE) from None
        assert self.proc.stdin and self.proc.stdout and self.proc.stderr
        self._drain = threading.Thread(target=self._read_stderr, args=(self.proc.stderr,))
        self._drain.daemon = True
        self._drain.start()
        try:
            self.proc.stdin.write(token.hex().encode() + b"\n")  # over the channel, not argv
            self.proc.stdin.flush()
        except OSError:
            pass  # ssh already gone: _port() says why
        return self._port(self.proc.stdout), token

    def _read_stderr(self, f: IO[bytes]) -> None:
        for raw in f:
            line = raw.decode(errors="replace").rstrip()
            if line:
                self.stderr.append(line)
                log.info("%s: %s", self.target.host, line)

    def _port(self, out: IO[bytes]) -> int:
        """Read stdout until the port line (login scripts may print other lines first)."""
        assert self.proc is not None
        deadline = time.monotonic() + self.cfg.start_timeout
        buf = b""
        while time.monotonic() < deadline:
            ready, _, _ = select.select([out], [], [], 0.2)
            if ready:
                chunk = out.read1(4096)  # type: ignore[attr-defined]
                if not chunk:
                    break
                buf += chunk
                m = re.search(rb"^" + PORT_LINE.encode() + rb" (\d+)\s*$", buf, re.M)
                if m:
                    return int(m.group(1))
            elif self.proc.poll() is not None:
                break
        raise self._failure()

    def _failure(self) -> XferError:
        assert self.proc is not None
        try:
            code = self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.close()
            return XferError(
                f"{self.target}: the remote receiver did not report its port within "
                f"{self.cfg.start_timeout:g} s",
                Exit.NETWORK,
            )
        if self._drain is not None:
            self._drain.join(2)
        last = self.stderr[-1] if self.stderr else "no message"
        if code in NOT_FOUND:
            return XferError(
                f"{self.cfg.remote_xfer!r} not found or not runnable on {self.target} ({last}); "
                "install xfer there or give --remote-xfer PATH",
                Exit.USAGE,
            )
        if code == 255:
            return XferError(f"ssh to {self.target} failed: {last}", Exit.NETWORK)
        return XferError(
            f"the remote receiver on {self.target} exited with {code} before listening: {last}",
            Exit.USAGE,
        )

    def close(self, timeout: float = 15.0) -> int | None:
        """End the far side (EOF on its stdin), wait for ssh to exit; returns its code."""
        proc = self.proc
        if proc is None:
            return None
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        try:
            return proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                return proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                return proc.wait()
        finally:
            if proc.stdout is not None:
                proc.stdout.close()

    def __enter__(self) -> RemoteReceiver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -------------------------------------------------------------------- the receiver's side


def read_token(stream: IO[bytes]) -> bytes:
    """The token line ``xfer send`` writes first on the SSH channel (64 hex digits)."""
    line = stream.readline().strip()
    try:
        token = bytes.fromhex(line.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        token = b""
    if len(token) < 16:
        raise XferError("--stdio: expected a hex token on the first line of stdin", Exit.USAGE)
    return token


def watch_eof(stream: IO[bytes], on_eof: Callable[[], object]) -> threading.Thread:
    """Call ``on_eof()`` (from a daemon thread) once ``stream`` reaches EOF or fails: the
    sender ended or died, and the SSH channel closed."""

    def run() -> None:
        with contextlib.suppress(OSError, ValueError):
            while stream.read(4096):
                pass
        on_eof()

    t = threading.Thread(target=run, name="xfer-stdin-eof", daemon=True)
    t.start()
    return t
