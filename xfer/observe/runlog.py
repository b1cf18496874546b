"""Run logs: one Parquet row per MI, run metadata in the Parquet schema metadata (the writer;
the readers, for the lab, are in :mod:`lab.runlog`).

The schema (:data:`SCHEMA`) is a contract documented in ``docs/runlog-and-report.md``. Unknown
values are nulls. The file at ``path`` is always a complete, readable Parquet file: rows are
buffered and every ``flush_every`` rows (and at :meth:`RunLog.close`) the whole log is written to
``path + ".partial"`` with a :class:`pyarrow.parquet.ParquetWriter` and atomically renamed over
``path``. A run that is killed (even with SIGKILL) therefore leaves a readable file holding every
row up to its last flush. (Appending row groups to one open file would not: a Parquet file is
unreadable until its footer is written at close.) Rewriting costs O(rows) per flush, about a
few milliseconds for an hour of 1 s MIs
(3,600 rows) and about 50 ms for a day (86,400 rows).
"""

from __future__ import annotations

import datetime as _dt
import os
import socket
import uuid
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from xfer.observe.interval import Interval

RUNLOG_VERSION = "1"
"""Version of the run-log schema, stored as metadata key ``xfer_runlog``."""

PATH_TYPE = pa.struct(
    [
        ("path_id", pa.string()),
        ("subflows", pa.int32()),
        ("throughput_bps", pa.float64()),
        ("loss_rate", pa.float64()),
        ("rtt_ms", pa.float64()),
    ]
)
"""One element of the ``paths`` column (a :class:`policy.signals.PathSignal`)."""

SCHEMA = pa.schema(
    [
        ("t", pa.float64()),
        ("mi_s", pa.float64()),
        ("streams", pa.int32()),
        ("throughput_bps", pa.float64()),
        ("goodput_bps", pa.float64()),
        ("loss_rate", pa.float64()),
        ("rtt_ms", pa.float64()),
        ("min_rtt_ms", pa.float64()),
        ("rtt_gradient", pa.float64()),
        ("rtt_ratio", pa.float64()),
        ("utility", pa.float64()),
        ("reward", pa.float64()),
        ("action", pa.int32()),
        ("cpu_percent", pa.float64()),
        ("bytes_acked", pa.int64()),
        ("retrans_segs", pa.int64()),
        ("data_segs_out", pa.int64()),
        ("paths", pa.list_(PATH_TYPE)),
        ("drain", pa.bool_()),
    ]
)
"""Columns of a run log, in order (metadata is added per file)."""

REQUIRED_META = ("policy", "scenario", "host", "run_id", "started_at")
"""Metadata keys every run log has (filled with defaults when not given)."""


def _now_iso() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds")


class RunLog:
    """Writes one Parquet row per MI; use as a context manager or call :meth:`close`."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        meta: Mapping[str, str] | None = None,
        *,
        flush_every: int = 10,
    ) -> None:
        if flush_every < 1:
            raise ValueError(f"flush_every must be >= 1, got {flush_every}")
        self.path = Path(path)
        self.flush_every = flush_every
        m = {str(k): str(v) for k, v in (meta or {}).items()}
        m.setdefault("policy", "unknown")
        m.setdefault("scenario", "")
        m.setdefault("host", socket.gethostname())
        m.setdefault("run_id", uuid.uuid4().hex[:12])
        m.setdefault("started_at", _now_iso())
        m["xfer_runlog"] = RUNLOG_VERSION
        self.meta = m
        self._schema = SCHEMA.with_metadata(m)
        self._rows: dict[str, list[Any]] = {f.name: [] for f in SCHEMA}
        self._table = self._schema.empty_table()
        self._closed = False
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._write()  # an empty but valid log exists from the start

    @property
    def rows(self) -> int:
        """Rows appended so far."""
        return int(self._table.num_rows) + len(self._rows["t"])

    def append(self, interval: Interval) -> None:
        """Add the row of one MI: what it measured, its utility and reward, the action taken,
        and whether it was a drain MI (all data in flight; the stream count was left alone).
        The record's fields outside :data:`SCHEMA` (``bytes_done``, ``cc``) are not stored."""
        if self._closed:
            raise RuntimeError(f"run log {self.path} is closed; append() after close()")
        row = interval.to_dict()
        for name, col in self._rows.items():
            col.append(row.get(name))
        if len(self._rows["t"]) >= self.flush_every:
            self.flush()

    def flush(self) -> None:
        """Make every appended row durable in the file at ``path``."""
        if self._rows["t"]:
            new = pa.Table.from_pydict(self._rows, schema=self._schema)
            self._table = pa.concat_tables([self._table, new]).combine_chunks()
            self._rows = {f.name: [] for f in SCHEMA}
            self._write()

    def close(self) -> None:
        """Flush the remaining rows; further appends raise."""
        if not self._closed:
            self.flush()
            self._closed = True

    def __enter__(self) -> RunLog:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _write(self) -> None:
        tmp = self.path.with_name(self.path.name + ".partial")
        with pq.ParquetWriter(tmp, self._schema, compression="zstd") as w:
            w.write_table(self._table)
        os.replace(tmp, self.path)
