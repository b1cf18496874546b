"""The library API for workflow engines: the same engine and summary as the CLI.

import xfer
rx = xfer.Receiver(root="/srv/in", listen="127.0.0.1:0"); host, port = rx.start()
summary = xfer.send(["/data/run42"], f"{host}:{port}", policy="gd")
rx.stop()
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from xfer.config import ReceiverConfig, SenderConfig
from xfer.observe.interval import Interval
from xfer.tx.sender import Sender

if TYPE_CHECKING:  # the receiver's modules load when one is built, not on every send
    from xfer.rx.receiver import Receiver as _Receiver

__all__ = ["Interval", "Receiver", "send", "send_async", "transfer"]

Callback = Callable[[Interval], None]


async def send_async(
    paths: Iterable[str] | str = (),
    address: str = "",
    *,
    on_interval: Callback | None = None,
    log: str | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Send ``paths`` (or ``mem=True, mem_size=...``) to ``address``; returns the summary
    (the ``--json`` object). ``options`` are :class:`xfer.config.SenderConfig` fields;
    ``on_interval`` gets each MI's :class:`xfer.observe.interval.Interval` (``.to_dict()`` is the
    ``--json-stream`` record); ``log`` writes a Parquet run log."""
    if isinstance(paths, str):
        paths = [paths]
    cfg = SenderConfig(address=address, paths=tuple(paths), **options)
    return await transfer(cfg, on_interval=on_interval, log=log)


async def transfer(
    cfg: SenderConfig, *, on_interval: Callback | None = None, log: str | None = None
) -> dict[str, Any]:
    """Run the transfer ``cfg`` describes (as :func:`send_async`, from a config built once,
    e.g. by the command line); returns the summary."""
    runlog = None
    if log:
        from xfer.observe.runlog import RunLog

        runlog = RunLog(log, {"policy": cfg.policy_spec, **cfg.meta})

    def record(rec: Interval) -> None:
        if runlog is not None:
            runlog.append(rec)
        if on_interval is not None:
            on_interval(rec)

    sender = Sender(cfg, record)
    try:
        return await sender.run()
    finally:
        if runlog is not None:
            runlog.close()


def send(paths: Iterable[str] | str = (), address: str = "", **options: Any) -> dict[str, Any]:
    """Blocking :func:`send_async` (runs its own event loop)."""
    return asyncio.run(send_async(paths, address, **options))


class Receiver:
    """A receiver you start and stop from Python; it serves in a background thread."""

    def __init__(self, root: str, listen: str = "127.0.0.1:0", **options: Any) -> None:
        from xfer.rx.receiver import Receiver as _Receiver

        self._rx: _Receiver = _Receiver(ReceiverConfig(root=root, listen=listen, **options))

    def start(self) -> tuple[str, int]:
        """Start serving; returns the bound (host, port)."""
        return self._rx.start()

    @property
    def address(self) -> str:
        assert self._rx.address is not None, "start() the receiver first"
        host, port = self._rx.address
        return f"{host}:{port}"

    def stop(self) -> None:
        """Stop serving (sessions in progress end; their verified data stays resumable)."""
        self._rx.stop()

    def __enter__(self) -> Receiver:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
