"""``xfer recv``, ``xfer send`` and ``xfer demo``: thin click layers over the library API."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from typing import Any

import click

from xfer.cli_options import config_options, config_values
from xfer.config import DEFAULT_POLICY, ReceiverConfig, SenderConfig, parse_size
from xfer.errors import Exit, XferError

_token_file_option = click.option(
    "--token-file",
    type=click.Path(exists=True, dir_okay=False),
    help="Shared secret (else $XFER_TOKEN).",
)
"""``--token-file`` for ``send`` and ``recv``: a secret is read, never typed."""


def _token(token_file: str | None) -> bytes | None:
    if token_file:
        with open(token_file, "rb") as f:
            tok = f.read().strip()
        if not tok:
            raise click.BadParameter(f"{token_file} is empty", param_hint="--token-file")
        return tok
    env = os.environ.get("XFER_TOKEN")
    return env.encode() if env else None


def _run(coro: Any) -> Any:
    try:
        import uvloop

        return uvloop.run(coro)
    except ImportError:  # pragma: no cover
        return asyncio.run(coro)


def _logging(verbose: int) -> None:
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(message)s", stream=sys.stderr)


# ------------------------------------------------------------------------------ recv


@click.command("recv")
@config_options(ReceiverConfig)
@_token_file_option
@click.option(
    "--stdio",
    is_flag=True,
    help="Started over SSH by `xfer send`: read the token from stdin, print the port on "
    "stdout, serve one session, exit when stdin closes.",
)
@click.option("-v", "--verbose", count=True, help="More log output (-vv for debug).")
def recv_cmd(token_file: str | None, stdio: bool, verbose: int, **fields: Any) -> None:
    """Run a receiver that writes under --root and serves several senders at once."""
    from xfer.rx.receiver import Receiver
    from xfer.ssh import PORT_LINE, read_token, watch_eof

    _logging(verbose)
    try:
        values = config_values(ReceiverConfig, fields)
        values["once"] = values["once"] or stdio
        token = read_token(sys.stdin.buffer) if stdio else _token(token_file)
        cfg = ReceiverConfig(token=token, **values)
    except XferError as exc:
        click.echo(f"xfer: {exc}", err=True)
        sys.exit(int(exc.exit))
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    rx = Receiver(cfg)
    try:
        host, port = rx.bind()
    except OSError as exc:
        raise click.ClickException(
            f"cannot listen on {cfg.listen}: {exc.strerror or exc}"
        ) from None

    async def main() -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            loop.add_signal_handler(sig, rx.shutdown)
        root = os.path.realpath(cfg.root)
        click.echo(f"xfer: listening on {host}:{port}, root {root}", err=True)
        if stdio:  # the sender's SSH channel: our port out, its EOF ends us
            click.echo(f"{PORT_LINE} {port}")
            sys.stdout.flush()
            watch_eof(sys.stdin.buffer, lambda: loop.call_soon_threadsafe(rx.shutdown))
        await rx.serve()

    _run(main())
    click.echo(f"xfer: receiver stopped after {rx.completed_sessions} session(s)", err=True)


# ------------------------------------------------------------------------------ send


@click.command("send")
@click.argument("args", nargs=-1, required=True, metavar="PATH... [USER@]HOST:DIR|HOST:PORT")
@config_options(SenderConfig)
@_token_file_option
@click.option(
    "--remote-xfer",
    default="xfer",
    show_default=True,
    metavar="CMD",
    help="USER@HOST:DIR destinations: the xfer command on the far host (e.g. a venv's path).",
)
@click.option(
    "--ssh",
    "ssh_cmd",
    default="ssh",
    show_default=True,
    metavar="CMD",
    help="USER@HOST:DIR destinations: the ssh command to use (e.g. 'ssh -F ./config').",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object at the end.")
@click.option(
    "--json-stream", is_flag=True, help="Print one JSON object per MI, then the end object."
)
@click.option(
    "--log",
    "log_path",
    type=click.Path(dir_okay=False),
    help="Write a Parquet run log (one row per MI).",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress display.")
@click.option("-v", "--verbose", count=True, help="More log output.")
def send_cmd(
    args: tuple[str, ...],
    token_file: str | None,
    remote_xfer: str,
    ssh_cmd: str,
    as_json: bool,
    json_stream: bool,
    log_path: str | None,
    quiet: bool,
    verbose: int,
    **fields: Any,
) -> None:
    """Send files and directory trees (or generated data) to USER@HOST:DIR (xfer is started
    there over SSH) or to a running `xfer recv` at HOST:PORT."""
    from xfer.ssh import Direct, RemoteReceiver, SshConfig, parse_destination

    _logging(verbose)
    *paths, address = args
    remote: RemoteReceiver | None = None
    try:
        target = parse_destination(address)
        if not isinstance(target, Direct):
            if token_file:
                raise ValueError("--token-file is for HOST:PORT; over SSH a key is made per run")
            remote = RemoteReceiver(target, SshConfig(remote_xfer, ssh_cmd))
            host = remote.data_host()
            remote.listen = "[::]:0" if ":" in host else "0.0.0.0:0"
            address = f"[{host}]:0" if ":" in host else f"{host}:0"  # the port comes later
        else:
            address = target.address
        values = config_values(SenderConfig, fields)
        mem = values["mem_size"] is not None or values["duration"] is not None
        cfg = SenderConfig(
            address=address, paths=tuple(paths), mem=mem, token=_token(token_file), **values
        )
        from policy.base import ControllerConfig, check_spec

        check_spec(
            cfg.policy_spec,
            ControllerConfig(cfg.min_streams, cfg.max_streams, cfg.streams, cfg.mi),
        )
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    show = not (quiet or as_json or json_stream) and sys.stderr.isatty()
    if remote is None:
        summary = run_send(cfg, log_path, json_stream=json_stream, progress=show)
    else:
        summary = _send_over_ssh(remote, cfg, log_path, json_stream=json_stream, progress=show)
    if as_json or json_stream:
        click.echo(json.dumps(summary))
    else:
        _print_summary(summary)
    sys.exit(summary["exit_code"])


def _send_over_ssh(
    remote: Any, cfg: SenderConfig, log_path: str | None, **outputs: bool
) -> dict[str, Any]:
    """Start the far side, run the transfer to it with the token it was handed, end it."""
    try:
        port, token = remote.start()
    except XferError as exc:
        remote.close()
        return {"event": "end", "exit_code": int(exc.exit), "verified": False, "error": str(exc)}
    host = cfg.address.rpartition(":")[0]
    try:
        return run_send(replace(cfg, address=f"{host}:{port}", token=token), log_path, **outputs)
    finally:
        remote.close()


def run_send(
    cfg: SenderConfig, log_path: str | None, *, json_stream: bool = False, progress: bool = False
) -> dict[str, Any]:
    """Run one transfer with the chosen outputs; returns the summary."""
    from xfer.api import transfer
    from xfer.observe.interval import Interval
    from xfer.observe.progress import Progress

    prog = Progress(cfg) if progress else None

    def on_interval(rec: Interval) -> None:
        if json_stream:
            click.echo(json.dumps(rec.to_dict()))
        if prog is not None:
            prog.update(rec)

    async def main() -> dict[str, Any]:
        task = asyncio.ensure_future(transfer(cfg, on_interval=on_interval, log=log_path))
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, task.cancel)
        try:
            return await task
        except asyncio.CancelledError:
            return {
                "event": "end",
                "exit_code": int(Exit.INTERRUPTED),
                "verified": False,
                "error": "interrupted (re-run the same command to resume)",
            }

    if prog is not None:
        with prog:
            return _run(main())
    return _run(main())


def _print_summary(s: dict[str, Any]) -> None:
    gb = s.get("bytes", 0) / 1e9
    rate = s.get("throughput_bps", 0) / 1e9
    if s["exit_code"] == 0:
        click.echo(
            f"xfer: {gb:.3f} GB, {s.get('files', 0)} files in {s.get('seconds', 0):.1f} s "
            f"({rate:.2f} Gbit/s, up to {s.get('streams_max', 0)} streams), "
            f"verified={s['verified']}, resent {s.get('bytes_resent', 0)} B, "
            f"encryption {s.get('encryption', 'off')}",
            err=True,
        )
    else:
        click.echo(f"xfer: FAILED (exit {s['exit_code']}): {s.get('error')}", err=True)
        for path in s.get("files_missing", [])[:20]:
            click.echo(f"  not verified: {path}", err=True)
    for what in s.get("skipped", [])[:20]:
        click.echo(f"  skipped: {what}", err=True)


# ------------------------------------------------------------------------------ demo


@click.command("demo")
@click.option(
    "--size", default="2GiB", show_default=True, help="Approximate size of the generated dataset."
)
@click.option("--policy", default=None, help=f"Stream controller [default: {DEFAULT_POLICY}].")
@click.option("--keep", is_flag=True, help="Keep the dataset and the received copy.")
@click.option(
    "--workdir",
    type=click.Path(file_okay=False),
    help="Where to put the dataset and the received copy.",
)
def demo_cmd(size: str, policy: str | None, keep: bool, workdir: str | None) -> None:
    """Generate a dataset (large, small and empty files, nested and empty directories), start
    `xfer recv` on this host, send the dataset to it with live progress, and compare."""
    from xfer.dataset import generate, trees_equal

    nbytes = parse_size(size)
    work = workdir or tempfile.mkdtemp(prefix="xfer-demo-", dir=_scratch(3 * nbytes))
    src, dst = os.path.join(work, "src", "dataset"), os.path.join(work, "dst")
    n = generate(src, nbytes)
    click.echo(f"xfer demo: generated {n} files in {src}", err=True)
    rx = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "xfer.cli",
            "recv",
            "--listen",
            "127.0.0.1:0",
            "--root",
            dst,
            "--once",
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert rx.stderr is not None
        line = rx.stderr.readline()
        if "listening on" not in line:
            raise click.ClickException(f"receiver did not start: {line.strip()}")
        address = line.split("listening on ")[1].split(",")[0]
        cfg = SenderConfig(address=address, paths=(src,), policy=policy)
        t = time.monotonic()
        summary = run_send(cfg, None, progress=sys.stderr.isatty())
        _print_summary(summary)
        same = trees_equal(src, os.path.join(dst, "dataset"))
        click.echo(
            f"xfer demo: {'identical' if same else 'DIFFERENT'} trees after "
            f"{time.monotonic() - t:.1f} s ({work}{'' if keep or workdir else ', removed'})",
            err=True,
        )
    finally:
        if rx.poll() is None:
            try:
                rx.wait(10)
            except subprocess.TimeoutExpired:
                rx.terminate()
        if not keep and not workdir:
            shutil.rmtree(work, ignore_errors=True)
    sys.exit(summary["exit_code"] or (0 if same else int(Exit.INCOMPLETE)))


def _scratch(need: int) -> str | None:
    """tmpfs when it has room (the demo shows the network engine, not this host's disk)."""
    try:
        st = os.statvfs("/dev/shm")
    except OSError:
        return None
    return "/dev/shm" if st.f_bavail * st.f_frsize > need else None
