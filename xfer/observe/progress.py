"""Live progress for people (rich): bytes, rate, ETA, streams, loss, RTT. Scripts use --json."""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.progress import (
    Progress as RichProgress,
)

from xfer.config import SenderConfig
from xfer.observe.interval import Interval


class Progress:
    """One progress bar for a transfer, updated once per MI."""

    def __init__(self, cfg: SenderConfig) -> None:
        self.total: int | None = cfg.mem_size if cfg.mem else None
        """Bytes to move: the memory size, or for files the sender catalog's ``bytes_total``
        (from the first interval record on; the tree is not scanned a second time)."""
        self._p = RichProgress(
            TextColumn("[bold]xfer"),
            BarColumn(),
            DownloadColumn(binary_units=False),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            TextColumn("{task.fields[info]}"),
            console=Console(stderr=True),
            transient=False,
        )
        self._task = self._p.add_task("send", total=self.total, info="connecting")

    def __enter__(self) -> Progress:
        self._p.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._p.__exit__(None, None, None)

    def update(self, rec: Interval) -> None:
        sig, loss, rtt = rec.signal, rec.signal.loss_rate, rec.signal.rtt_ms
        info = (
            f"{sig.streams:>3} streams  {sig.throughput_bps / 1e9:6.2f} Gbit/s  "
            f"loss {'?' if loss is None else f'{loss * 100:.3f}%'}  "
            f"rtt {'?' if rtt is None else f'{rtt:.1f} ms'}"
        )
        if self.total is None and rec.bytes_total is not None:
            self.total = rec.bytes_total
        self._p.update(self._task, total=self.total, completed=rec.bytes_done, info=info)
