"""The interval record: one MI as the sender reports it, one typed object from the MI loop to
whoever consumes it (the library's ``on_interval``, the progress display, the run-log writer).
It becomes a dict only where it is written: :meth:`Interval.to_dict` for the
``--json-stream`` line, :meth:`xfer.observe.runlog.RunLog.append` for the Parquet row."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from policy.signals import SignalVector


@dataclass(frozen=True, slots=True)
class Interval:
    """What one MI measured and what was done about it."""

    signal: SignalVector
    """What the MI measured (the controller's input)."""
    utility: float | None
    """The MI's utility (``policy/utility.py``)."""
    reward: float | None
    """The change of utility from the MI before (0 for the first)."""
    action: int | None
    """Streams added (+) or removed (-) by the decision on this MI; 0 when the controller was
    not asked (a drain MI); None when it was still deciding on an earlier MI, or never
    answered."""
    bytes_done: int = 0
    """Bytes the receiver has confirmed so far."""
    cc: str | None = None
    """Congestion control the streams ran (the signal vector's ``cc``: the system default
    resolved by name; None if unknown)."""
    drain: bool = False
    """A drain MI: every block was in flight, the stream count was left alone, and the MI is
    left out of mean throughput and utility."""
    bytes_total: int | None = None
    """Bytes to move, from the sender's catalog (files only; None in memory mode)."""

    def to_dict(self) -> dict[str, Any]:
        """The ``--json-stream`` record (a contract, documented in the README): ``event``, the
        signal vector's fields, then this record's own in field order; ``bytes_total`` only
        when known. ``cc`` is written once, in this record's place."""
        d: dict[str, Any] = {"event": "interval", **self.signal.to_dict()}
        del d["cc"]
        d.update((f.name, getattr(self, f.name)) for f in fields(self) if f.name != "signal")
        if self.bytes_total is None:
            del d["bytes_total"]
        return d
