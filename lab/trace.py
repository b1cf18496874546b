"""Per-MI traces of a block's runs as plain text: what a round commits beside its verdicts.

Run logs live under the block's run directory, which does not survive a change of machine
(round 59 found round 58's gone), so a claim about what a policy did MI by MI must be readable
from the repository. This prints, for every sender ``--json-stream`` log (``*.jsonl``) under a
directory, one header line (the run's path, mean utility as ``lab.metrics`` weighs it, mean
count, minimum RTT in ms) and four rows, one column per MI that is not a drain MI: the stream
count ``N``, the utility ``U`` the sender recorded,
the throughput ``T`` (Mbit/s) and the loss rate (%). ``scripts/beside.sh`` writes one beside
each block's verdict (``R/BLOCK-trace.txt``).

    python3 -m lab.trace RUN_DIR [--match SUBSTRING] > trace.txt
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lab.metrics import intervals_mean_utility
from lab.runlog import read_intervals


def _cells(values: list[float], fmt: str) -> str:
    return " ".join(format(v, fmt) for v in values)


def trace_lines(path: Path, name: str) -> list[str]:
    """One run's header and rows (see the module docstring); an empty log gives its header."""
    rows: list[dict[str, Any]] = [r for r in read_intervals(path) if not r.get("drain")]
    ns = [int(r["streams"]) for r in rows]
    loss = [float(r.get("loss_rate") or 0.0) for r in rows]
    mbps = [float(r["throughput_bps"]) / 1e6 for r in rows]
    u = [float(r["utility"]) for r in rows]  # as the sender recorded it
    rtts = [float(r["min_rtt_ms"]) for r in rows if r.get("min_rtt_ms") is not None]
    mean_u = intervals_mean_utility(rows) if rows else 0.0
    rtt = f"{min(rtts):.3f}" if rtts else "unknown"
    return [
        f"{name}: {len(rows)} MIs, mean U {mean_u:.1f}, mean N {sum(ns) / max(len(ns), 1):.1f}, "
        f"min RTT {rtt} ms",
        f"  N     {_cells([float(n) for n in ns], '5.0f')}",
        f"  U     {_cells(u, '5.0f')}",
        f"  T     {_cells(mbps, '5.0f')}",
        f"  loss% {_cells([100 * x for x in loss], '5.1f')}",
    ]


def traces(root: Path, match: str = "") -> Iterator[str]:
    """Every run log's lines under ``root`` (sorted by path), those whose path holds ``match``."""
    for f in sorted(root.rglob("*.jsonl")):
        rel = f.relative_to(root).as_posix()
        if match in rel:
            yield from trace_lines(f, rel)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m lab.trace", description=__doc__.split("\n")[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--match", default="", help="only logs whose path holds this")
    a = ap.parse_args(argv)
    if not a.run_dir.is_dir():
        print(f"lab.trace: {a.run_dir} is not a directory", file=sys.stderr)
        return 2
    n = 0
    for line in traces(a.run_dir, a.match):
        print(line)
        n += line[:1] != " "
    if n == 0:
        print(f"lab.trace: no run logs (*.jsonl) under {a.run_dir}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
