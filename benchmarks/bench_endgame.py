"""The end of a transfer, before and after the endgame (issue #14), on emulated paths.

For each path a file on tmpfs is sent with ``--no-endgame`` (fixed blocks, no copies, the
controller asked to the last MI: the engine before 0.2) and with the endgame (the default),
alternating within each repetition so both share the machine's noise. Every run goes to a
fresh destination and is checked byte for byte.

What it reports, per path and mode (median over repetitions, min-max in brackets):

- **done s**: completion time (session start to the receiver's summary);
- **ideal s**: ``bytes x 8 / steady throughput``, the steady throughput being the mean rate
  between 10 % and 90 % of the bytes (from the per-MI ``bytes_done``);
- **done/ideal**: how much longer than the bytes and the rate explain (1.0 is perfect);
- **tail**: time for the last 10 % of the bytes / mean time of a 10 % slice between 10 % and
  90 % (issue #14's criterion: at most 1.5);
- **tail/all**: time for the last 10 % / mean time of the nine 10 % slices before it (0-90 %,
  slow start included): the issue's words read literally ("the average time of a 10 % slice
  before them"); **tail** leaves the first slice out and is the stricter of the two;
- **tail/prev**: time for the last 10 % / time for the 10 % before it (80-90 %): the end
  against the rate the transfer had just before it (on lossy paths cubic's rate decays over a
  transfer, after its slow-start overshoot, so the 10-90 % mean flatters the early part);
- **slowest mid slice**: the slowest 10 % slice between 10 % and 90 %, in the same unit: how
  much a slice varies by itself on this path (the noise floor of **tail**);
- **redundant MB**: endgame copies sent; **drain s**: time with every block in flight.

    sudo python3 benchmarks/bench_endgame.py [--reps 2] [--paths clean,lossy-long,capped]
        [--policies fixed:16,ppo] [--size 500MB] [--json OUT]

Needs root (network namespaces) and the delay line (``scripts/setup.sh``).
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._peers import XFER, ns_server  # noqa: E402
from policy.base import split_specs  # noqa: E402
from testbeds import Testbed  # noqa: E402
from testbeds.scenario import Scenario, parse_scenario  # noqa: E402
from xfer.units import parse_size  # noqa: E402


@dataclass(frozen=True)
class PathSpec:
    name: str
    scenario: dict[str, Any]
    stream_rate: str | None = None


PATHS = {
    "clean": PathSpec(
        "clean",
        {"description": "clean: 500 Mbit/s, 40 ms", "sysctl": {"congestion_control": "cubic"},
         "path": [{"rate": "500mbit", "rtt_ms": 40, "queue": "1bdp"}]},
    ),
    "lossy-long": PathSpec(
        "lossy-long",
        {"description": "issue #14: 300 Mbit/s, 120 ms, 0.05 % loss",
         "sysctl": {"congestion_control": "cubic"},
         "path": [{"rate": "300mbit", "rtt_ms": 120, "loss": 0.0005, "queue": "1bdp"}]},
    ),
    "capped": PathSpec(
        "capped",
        {"description": "1 Gbit/s, 20 ms, every stream capped at 40 Mbit/s",
         "sysctl": {"congestion_control": "cubic"},
         "path": [{"rate": "1gbit", "rtt_ms": 20, "queue": "1bdp"}]},
        stream_rate="40Mbit",
    ),
}  # fmt: skip


XFER_PORT = 5301
EVENTS_DIR: str | None = None
"""--events DIR: every run's --json-stream output is kept there as DEST.jsonl."""


def scenario(spec: PathSpec) -> Scenario:
    return parse_scenario(dict(spec.scenario), f"bench_endgame:{spec.name}", f"eg-{spec.name}")


def time_at(points: list[tuple[float, int]], target: float) -> float:
    """When ``bytes_done`` reached ``target`` (linear between MI ends)."""
    prev_t, prev_b = 0.0, 0
    for t, b in points:
        if b >= target:
            if b == prev_b:
                return t
            return prev_t + (t - prev_t) * (target - prev_b) / (b - prev_b)
        prev_t, prev_b = t, b
    return points[-1][0]


def analyse(events: list[dict[str, Any]]) -> dict[str, Any]:
    end = events[-1]
    total = end["bytes"]
    points = [(e["t"], e["bytes_done"]) for e in events if e.get("event") == "interval"]
    points.append((end["seconds"], total))
    t10, t90 = time_at(points, 0.1 * total), time_at(points, 0.9 * total)
    steady_bps = 0.8 * total * 8 / max(t90 - t10, 1e-9)
    slice_s = (t90 - t10) / 8
    marks = [time_at(points, k / 10 * total) for k in range(1, 10)]
    slowest_mid = max(b - a for a, b in zip(marks, marks[1:], strict=False)) / slice_s
    return {
        "done_s": end["seconds"],
        "ideal_s": total * 8 / steady_bps,
        "done_ratio": end["seconds"] / (total * 8 / steady_bps),
        "tail": (end["seconds"] - t90) / slice_s,
        "tail_all": (end["seconds"] - t90) / max(t90 / 9, 1e-9),
        "slowest_mid": slowest_mid,
        "tail_prev": (end["seconds"] - t90) / max(t90 - marks[-2], 1e-9),
        "steady_mbit": steady_bps / 1e6,
        "redundant_mb": end.get("bytes_redundant", 0) / 1e6,
        "drain_s": end.get("drain_seconds", 0.0),
        "streams_max": end["streams_max"],
        "exit_code": end["exit_code"],
    }


def one_run(
    tb: Testbed, address: str, src: str, dest: str, policy: str, endgame: bool, rate: str | None
) -> dict[str, Any]:
    argv = [*XFER, "send", src, address, "--dest", dest, "--json-stream", "-q",
            "--encryption", "off", "--endgame" if endgame else "--no-endgame"]  # fmt: skip
    argv += (
        ["--streams", policy.split(":")[1]] if policy.startswith("fixed:") else ["--policy", policy]
    )
    if rate:
        argv += ["--stream-rate", rate]
    p = tb.hosts["sender"].run(argv, timeout=600, capture_output=True, text=True)
    events = [json.loads(ln) for ln in p.stdout.splitlines() if ln.startswith("{")]
    if not events or events[-1].get("event") != "end":
        raise RuntimeError(f"xfer send failed ({p.returncode}): {p.stderr[-800:]}")
    if EVENTS_DIR:
        Path(EVENTS_DIR, f"{dest}.jsonl").write_text(p.stdout)
    return analyse(events)


def run_path(spec: PathSpec, policies: list[str], reps: int, size: int, tmp: str) -> list[dict]:
    src = os.path.join(tmp, "src")
    os.makedirs(src, exist_ok=True)
    with open(os.path.join(src, "data"), "wb") as f:
        for _ in range(size // (8 << 20)):
            f.write(os.urandom(8 << 20))
        f.write(os.urandom(size % (8 << 20)))
    root = os.path.join(tmp, "root")
    rows = []
    with Testbed(scenario(spec), name="bench-eg") as tb:
        address = f"{tb.hosts['receiver'].addr}:{XFER_PORT}"
        recv = ns_server(
            tb.hosts["receiver"], "xfer",
            [*XFER, "recv", "--listen", address, "--root", root, "--insecure", "--no-fsync"],
            XFER_PORT,
        )  # fmt: skip
        try:
            for rep in range(reps):
                for policy in policies:
                    modes = [False, True] if rep % 2 == 0 else [True, False]
                    for endgame in modes:
                        dest = f"{spec.name}-r{rep}-{policy.replace(':', '')}-{int(endgame)}"
                        r = one_run(tb, address, src, dest, policy, endgame, spec.stream_rate)
                        same = filecmp.cmp(
                            os.path.join(src, "data"),
                            os.path.join(root, dest, "src", "data"),
                            shallow=False,
                        )
                        shutil.rmtree(os.path.join(root, dest), ignore_errors=True)
                        r.update(path=spec.name, policy=policy, endgame=endgame, rep=rep,
                                 verified=same)  # fmt: skip
                        print(f"  {spec.name:<11} {policy:<9} {'endgame' if endgame else 'before':<8}"
                              f" rep {rep}: done {r['done_s']:.1f} s, ideal {r['ideal_s']:.1f} s,"
                              f" tail {r['tail']:.2f}, redundant {r['redundant_mb']:.1f} MB,"
                              f" identical={same}", flush=True)  # fmt: skip
                        rows.append(r)
        finally:
            recv.stop()
    return rows


def table(rows: list[dict]) -> None:
    def med(xs: list[float]) -> str:
        return f"{statistics.median(xs):.2f} [{min(xs):.2f}-{max(xs):.2f}]"

    print("\npath        policy    mode      runs  done s             done/ideal         "
          "tail (<= 1.5)      tail/all           tail/prev          slowest mid slice  redundant MB  drain s  "
          "verified")  # fmt: skip
    keys = sorted({(r["path"], r["policy"], r["endgame"]) for r in rows}, key=str)
    for path, policy, endgame in keys:
        rs = [r for r in rows if (r["path"], r["policy"], r["endgame"]) == (path, policy, endgame)]
        print(
            f"{path:<11} {policy:<9} {'endgame' if endgame else 'before':<8} {len(rs):>4}  "
            f"{med([r['done_s'] for r in rs]):<18} {med([r['done_ratio'] for r in rs]):<18} "
            f"{med([r['tail'] for r in rs]):<18} "
            f"{med([r['tail_all'] for r in rs]):<18} "
            f"{med([r['tail_prev'] for r in rs]):<18} "
            f"{med([r['slowest_mid'] for r in rs]):<18} "
            f"{statistics.median([r['redundant_mb'] for r in rs]):>12.1f}  "
            f"{statistics.median([r['drain_s'] for r in rs]):>7.2f}  "
            f"{all(r['verified'] and r['exit_code'] == 0 for r in rs)}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--paths", default="clean,lossy-long,capped")
    ap.add_argument("--policies", default="fixed:16")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--size", default="500MB")
    ap.add_argument("--tmpfs", default="/dev/shm")
    ap.add_argument("--json", dest="json_out")
    ap.add_argument("--events", help="keep each run's per-MI events in this directory")
    a = ap.parse_args()
    global EVENTS_DIR
    EVENTS_DIR = a.events
    if a.events:
        os.makedirs(a.events, exist_ok=True)
    if os.geteuid() != 0:
        sys.exit("bench_endgame: needs root (network namespaces)")
    size = int(parse_size(a.size))
    rows: list[dict] = []
    started = time.time()
    for name in a.paths.split(","):
        spec = PATHS[name]
        print(f"{name}: {spec.scenario['description']}", flush=True)
        tmp = tempfile.mkdtemp(prefix="xfer-bench-eg-", dir=a.tmpfs)
        try:
            rows += run_path(spec, list(split_specs(a.policies)), a.reps, size, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    table(rows)
    print(f"\n{len(rows)} runs in {time.time() - started:.0f} s; load average {os.getloadavg()}")
    if a.json_out:
        Path(a.json_out).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
