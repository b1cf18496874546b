"""A small layer over asyncssh: run commands on a campaign host, start long-lived processes
that can be killed by PID, and copy files with SFTP.

Remote processes are started as ``echo $$; exec CMD`` so the first line of their stdout is
their PID: closing an SSH channel does not reliably stop a process without a terminal, so
:meth:`RemoteProcess.kill` sends signals over a second channel instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import asyncssh

from testbeds.campaign.schema import HostSpec


class RemoteError(RuntimeError):
    """A command on a campaign host failed (the host's or the network's fault, not the file's)."""


@dataclass(frozen=True, slots=True)
class Completed:
    """What a finished remote command left behind."""

    exit_status: int
    """The command's exit status (-1 when killed or unknown)."""
    stdout: str
    """Everything it printed on stdout (for started processes: without the PID line)."""
    stderr: str
    """Everything it printed on stderr."""


def shell(argv: Sequence[str] | str) -> str:
    """A command line for the remote shell (strings pass through; lists are quoted)."""
    return argv if isinstance(argv, str) else shlex.join(argv)


class RemoteProcess:
    """A process started on a host, with its output collected in the background."""

    def __init__(
        self, host: RemoteHost, proc: asyncssh.SSHClientProcess, pid: int, cmd: str
    ) -> None:
        self.host = host
        self.pid = pid
        self.cmd = cmd
        self._proc = proc
        self._stdout: list[str] = []
        self._stderr: list[str] = []
        self._ready = asyncio.Event()
        self._ready_text: str | None = None
        self._pumps = [
            asyncio.create_task(self._pump(proc.stdout, self._stdout)),
            asyncio.create_task(self._pump(proc.stderr, self._stderr)),
        ]

    async def _pump(self, stream: asyncssh.SSHReader[str], sink: list[str]) -> None:
        async for line in stream:
            sink.append(line)
            if self._ready_text is not None and self._ready_text in line:
                self._ready.set()
        self._ready.set()  # EOF: wake a waiter so it can see the process died

    async def wait_ready(self, text: str, timeout: float) -> None:
        """Wait until ``text`` appears on stdout or stderr; raise if the process exits first."""
        self._ready_text = text
        if any(text in line for line in self._stdout + self._stderr):
            return
        try:
            await asyncio.wait_for(self._ready.wait(), timeout)
        except TimeoutError:
            raise RemoteError(
                f"{self.host.name}: {self.cmd!r} did not print {text!r} within {timeout:.0f} s; "
                f"stderr: {self.stderr[-800:]!r}"
            ) from None
        if not any(text in line for line in self._stdout + self._stderr):
            raise RemoteError(
                f"{self.host.name}: {self.cmd!r} exited early; stderr: {self.stderr[-800:]!r}"
            )

    @property
    def stdout(self) -> str:
        """Output so far."""
        return "".join(self._stdout)

    @property
    def stderr(self) -> str:
        """Error output so far."""
        return "".join(self._stderr)

    async def wait(self, timeout: float | None) -> Completed:
        """Wait for the process to exit; on timeout kill it and raise ``TimeoutError``."""
        try:
            result = await asyncio.wait_for(self._proc.wait(check=False), timeout)
        except TimeoutError:
            await self.kill()
            raise
        await asyncio.gather(*self._pumps, return_exceptions=True)
        status = result.exit_status if result.exit_status is not None else -1
        return Completed(status, self.stdout, self.stderr)

    async def kill(self, grace_s: float = 3.0) -> None:
        """SIGTERM, then SIGKILL after ``grace_s``; never raises."""
        for sig in ("TERM", "KILL"):
            with contextlib.suppress(Exception):
                await self.host.run(f"kill -{sig} {self.pid} 2>/dev/null || true", timeout=15)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._proc.wait(check=False), grace_s)
                break
        self._proc.close()
        for pump in self._pumps:
            pump.cancel()


class RemoteHost:
    """One SSH connection to a campaign host."""

    def __init__(self, spec: HostSpec, conn: asyncssh.SSHClientConnection, workdir: str) -> None:
        self.spec = spec
        self.name = spec.name
        self.conn = conn
        self.workdir = workdir
        """Absolute path of the host's campaign directory."""

    @classmethod
    async def connect(cls, spec: HostSpec, *, timeout: float = 30.0) -> RemoteHost:
        """Open the SSH connection and create (and resolve) the host's workdir."""
        known: object = () if spec.known_hosts is None else spec.known_hosts
        if spec.known_hosts == "none":
            known = None
        try:
            conn = await asyncssh.connect(
                spec.host,
                port=spec.port,
                username=spec.user,
                client_keys=[spec.key] if spec.key else (),
                known_hosts=known,
                connect_timeout=timeout,
                keepalive_interval=15,
            )
        except (OSError, asyncssh.Error) as exc:
            raise RemoteError(
                f"{spec.name}: cannot SSH to {spec.user or ''}@{spec.host}:{spec.port}: {exc}"
            ) from exc
        host = cls(spec, conn, spec.workdir)
        res = await host.run(
            f"mkdir -p {shlex.quote(spec.workdir)} && cd {shlex.quote(spec.workdir)} && pwd"
        )
        host.workdir = res.stdout.strip()
        return host

    def path(self, *parts: str) -> str:
        """An absolute path under the host's workdir."""
        return "/".join([self.workdir.rstrip("/"), *parts])

    async def run(
        self, argv: Sequence[str] | str, *, check: bool = True, timeout: float | None = 120
    ) -> Completed:
        """Run a command to completion; with ``check`` raise :class:`RemoteError` on failure."""
        cmd = shell(argv)
        try:
            res = await self.conn.run(cmd, check=False, timeout=timeout)
        except asyncssh.TimeoutError as exc:
            raise RemoteError(f"{self.name}: {cmd!r} timed out after {timeout} s") from exc
        except (OSError, asyncssh.Error) as exc:
            raise RemoteError(f"{self.name}: {cmd!r} failed: {exc}") from exc
        status = res.exit_status if res.exit_status is not None else -1
        out = Completed(status, str(res.stdout or ""), str(res.stderr or ""))
        if check and status != 0:
            raise RemoteError(f"{self.name}: {cmd!r} exited {status}: {out.stderr.strip()[-800:]}")
        return out

    async def start(
        self, argv: Sequence[str] | str, *, pidfile: str | None = None
    ) -> RemoteProcess:
        """Start a command in the background and return it once its PID is known.

        With ``pidfile``, a process left by an earlier controller that died without cleaning
        up (its PID is in the file and its command line mentions the file's directory) is
        stopped first, and the new PID is written there.
        """
        cmd = shell(argv)
        prefix = ""
        if pidfile:
            pf, mark = shlex.quote(pidfile), shlex.quote(pidfile.rsplit("/", 1)[0])
            await self.run(
                f"p=$(cat {pf} 2>/dev/null); "
                f'if [ -n "$p" ] && grep -qF {mark} /proc/$p/cmdline 2>/dev/null; '
                f"then kill $p; sleep 1; kill -9 $p 2>/dev/null; fi; rm -f {pf}; true"
            )
            prefix = f"echo $$ > {pf}; "
        launch = asyncio.ensure_future(self._launch(cmd, prefix))
        try:
            return await asyncio.shield(launch)
        except asyncio.CancelledError:
            # Cancelled (SIGTERM, Ctrl-C) while the process was starting: the caller will
            # never hold its handle, so stop it here before passing the cancellation on.
            with contextlib.suppress(Exception):
                proc = await asyncio.wait_for(launch, 30)
                await proc.kill(grace_s=2.0)
            raise

    async def _launch(self, cmd: str, prefix: str) -> RemoteProcess:
        proc = await self.conn.create_process(f"{prefix}echo $$; exec {cmd}")
        line = ""
        try:
            line = await asyncio.wait_for(proc.stdout.readline(), 30)
            pid = int(str(line).strip())
        except (TimeoutError, ValueError):
            proc.close()
            raise RemoteError(f"{self.name}: could not start {cmd!r} (got {line!r})") from None
        return RemoteProcess(self, proc, pid, cmd)

    async def put(self, local: Path, remote: str) -> None:
        """Copy a local file to the host."""
        async with self.conn.start_sftp_client() as sftp:
            await sftp.put(str(local), remote)

    async def get(self, remote: str, local: Path) -> None:
        """Copy a file from the host (to ``local.part``, then renamed, so partial copies never
        look finished)."""
        local.parent.mkdir(parents=True, exist_ok=True)
        part = local.with_name(local.name + ".part")
        try:
            async with self.conn.start_sftp_client() as sftp:
                await sftp.get(remote, str(part))
        except (OSError, asyncssh.Error) as exc:
            raise RemoteError(f"{self.name}: cannot fetch {remote}: {exc}") from exc
        part.replace(local)

    async def close(self) -> None:
        """Close the connection."""
        self.conn.close()
        with contextlib.suppress(Exception):
            await self.conn.wait_closed()
