"""Run-log readers: a run log (written by :class:`xfer.observe.runlog.RunLog`) read back as a :class:`Run`.

The schema is :data:`xfer.observe.runlog.SCHEMA`, documented in ``docs/runlog-and-report.md``.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


@dataclass(frozen=True)
class Run:
    """One run log read back: the table and its metadata."""

    path: str
    """File it was read from."""
    table: pa.Table
    """One row per MI, columns as in :data:`xfer.observe.runlog.SCHEMA`."""
    meta: dict[str, str]
    """Run metadata (policy, scenario, host, run_id, started_at, and any ``--meta``)."""

    @property
    def policy(self) -> str:
        """The ``label`` metadata if given, else the policy spec (``fixed:20``, ``gd``, ...)."""
        return self.meta.get("label") or self.meta.get("policy", "unknown")

    @property
    def scenario(self) -> str:
        return self.meta.get("scenario", "")

    @property
    def group(self) -> str | None:
        """Runs sharing a ``group`` ran concurrently (competing transfers)."""
        return self.meta.get("group") or None

    @property
    def started_at(self) -> float:
        """Start time as a POSIX timestamp (from the ISO ``started_at`` metadata)."""
        ts = _dt.datetime.fromisoformat(self.meta["started_at"])
        if ts.tzinfo is None:
            ts = ts.replace(tzinfo=_dt.UTC)
        return ts.timestamp()

    def col(self, name: str) -> np.ndarray:
        """A numeric column as float64, nulls as NaN."""
        return np.asarray(self.table.column(name).to_numpy(zero_copy_only=False), dtype=np.float64)

    def steady(self) -> np.ndarray:
        """True for the rows that are not drain MIs (logs older than the column: every row)."""
        if "drain" not in self.table.column_names:
            return np.ones(len(self), dtype=bool)
        return np.asarray([x is not True for x in self.table.column("drain").to_pylist()])

    def __len__(self) -> int:
        return int(self.table.num_rows)


def read_run(path: str | os.PathLike[str]) -> Run:
    """Read one run log; raise ValueError if the file is not an xfer run log."""
    table = pq.read_table(path)
    raw = table.schema.metadata or {}
    meta = {k.decode(): v.decode() for k, v in raw.items() if not k.startswith(b"ARROW:")}
    if "xfer_runlog" not in meta:
        raise ValueError(f"{path}: not an xfer run log (no 'xfer_runlog' schema metadata)")
    missing = [c for c in ("t", "throughput_bps", "streams") if c not in table.column_names]
    if missing:
        raise ValueError(f"{path}: run log lacks column(s) {', '.join(missing)}")
    return Run(path=str(path), table=table.replace_schema_metadata(None), meta=meta)


def read_runs(paths: Iterable[str | os.PathLike[str]]) -> list[Run]:
    """Read several run logs, in the order given."""
    return [read_run(p) for p in paths]


def read_intervals(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The ``interval`` events of a sender's ``--json-stream`` log (the ``.jsonl`` an
    experiment keeps beside each run's ``.parquet``), one dict per MI, in order."""
    with open(path) as f:
        events = [json.loads(line) for line in f]
    return [e for e in events if e.get("event") == "interval"]
