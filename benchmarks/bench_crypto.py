"""What encryption costs: xfer with AES-256-GCM against xfer in clear, side by side in one run
(issue 15).

Run: ``python3 benchmarks/bench_crypto.py [--quick] [--json OUT]``

- memory-to-memory: ``xfer send --mem BYTES --encryption on`` vs ``--encryption off``;
- files: a tree of mixed sizes on tmpfs (bench_engine's tree), the same two ways;
- N = 1, 4, 16 streams; CPU seconds per GB of sender + receiver.

Both modes talk to one long-running ``xfer recv --no-fsync`` on loopback (it follows what each
sender asks). Within a repetition the two modes run back to back and their order rotates, so
they share the noise of a busy machine; the table shows medians and a paired ratio (the median
over repetitions of encrypted / clear measured back to back). Target (issue 15): encrypted >=
0.8 x clear throughput at N = 4 on loopback, printed PASS or MISS; nothing is asserted.
Reuses bench_engine's sample, measurement and summary helpers and _peers' process helpers.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
REPO = Path(__file__).resolve().parent.parent

import _peers  # noqa: E402
from _peers import XFER, Server, make_tree, snapshot_engine, tree_size  # noqa: E402
from bench_engine import Sample, _cells, _measure, _median, _parse_xfer, run_section  # noqa: E402

MODES = ("clear", "aes-gcm")
"""The two tools compared: ``--encryption off`` and ``--encryption on``."""
FLAG = {"clear": "off", "aes-gcm": "on"}
TARGET = 0.8
"""Issue 15: encrypted >= 0.8 x clear at N = 4."""


@dataclass(frozen=True)
class CryptoBenchConfig:
    """One benchmark run (the fields run_section reads are named as in bench_engine)."""

    reps: int = 3
    """Repetitions of every (mode, N); the table shows medians."""
    streams: tuple[int, ...] = (1, 4, 16)
    """Stream counts N compared."""
    mem_bytes: int = 2_000_000_000
    """Bytes per memory-to-memory run."""
    tree_bytes: int = 1 << 30
    """Approximate size of the file tree."""
    tmpfs: str = "/dev/shm"
    """A tmpfs directory for the tree and the destination."""
    sections: tuple[str, ...] = ("mem", "files")
    """Which comparisons to run."""


QUICK = CryptoBenchConfig(mem_bytes=500_000_000, tree_bytes=256 << 20)


def xfer_run(
    section: str, mode: str, n: int, rep: int, srv: Server, src: Path | None, bytes_: int
) -> Sample:
    s = Sample(section, mode, n, rep)
    what = [str(src)] if src is not None else ["--mem", str(bytes_)]
    dest = f"{mode}-r{rep}-n{n}"
    cmd = [
        *XFER,
        "send",
        *what,
        f"127.0.0.1:{srv.port}",
        "--streams",
        str(n),
        "--encryption",
        FLAG[mode],
        "--json",
        "-q",
    ]
    if src is not None:
        cmd += ["--dest", dest]
    _measure(s, srv, cmd, _parse_xfer)
    return s


def bench(cfg: CryptoBenchConfig, progress: Callable[[Sample], None], work: Path) -> list[Sample]:
    samples: list[Sample] = []
    root = work / "root"
    srv = _peers.start_xfer_recv(str(root), fsync=False)
    try:
        if "mem" in cfg.sections:
            samples += run_section(
                "mem",
                cfg,  # type: ignore[arg-type]
                lambda t, n, r: xfer_run("mem", t, n, r, srv, None, cfg.mem_bytes),
                list(MODES),
                progress,
            )
        if "files" in cfg.sections:
            src = work / "src"
            expect = make_tree(src, cfg.tree_bytes)
            print(f"bench: tree of {expect[0]} files, {expect[1] / 2**30:.2f} GiB", file=sys.stderr)

            def one(mode: str, n: int, rep: int) -> Sample:
                s = xfer_run("files", mode, n, rep, srv, src, 0)
                out = root / f"{mode}-r{rep}-n{n}"
                got = tree_size(out)
                if s.ok and got != expect:
                    s.ok, s.error = False, f"destination has {got} (files, bytes), want {expect}"
                shutil.rmtree(out, ignore_errors=True)
                return s

            samples += run_section("files", cfg, one, list(MODES), progress)  # type: ignore[arg-type]
    finally:
        srv.stop()
    return samples


def summarize(samples: list[Sample], cfg: CryptoBenchConfig) -> dict[str, Any]:
    cells = _cells(samples)
    by_rep = {(s.section, s.tool, s.streams, s.rep): s for s in samples if s.ok}

    def med(section: str, mode: str, n: int, what: str = "gbps_median") -> float | None:
        return cells.get(f"{section}/{mode}/{n}", {}).get(what)

    rows = []
    for section in cfg.sections:
        for n in cfg.streams:
            on, off = med(section, "aes-gcm", n), med(section, "clear", n)
            pairs = [
                by_rep[(section, "aes-gcm", n, k)].gbps / by_rep[(section, "clear", n, k)].gbps
                for k in range(cfg.reps)
                if (section, "aes-gcm", n, k) in by_rep and (section, "clear", n, k) in by_rep
            ]
            cpu_on = med(section, "aes-gcm", n, "cpu_per_gb_median")
            cpu_off = med(section, "clear", n, "cpu_per_gb_median")
            ratio = on / off if on and off else None
            rows.append(
                {
                    "section": section,
                    "streams": n,
                    "ratio": ratio,
                    "paired": _median(pairs),
                    "cpu_ratio": cpu_on / cpu_off if cpu_on and cpu_off else None,
                    "pass": None if n != 4 or ratio is None else ratio >= TARGET,
                }
            )
    return {"cells": list(cells.values()), "ratios": rows}


def print_tables(summary: dict[str, Any], cfg: CryptoBenchConfig, info: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    con = Console(width=None if sys.stdout.isatty() else 110)
    cells = {(c["section"], c["tool"], c["streams"]): c for c in summary["cells"]}
    ratios = {(r["section"], r["streams"]): r for r in summary["ratios"]}

    def fmt(v: float | None, spec: str = ".2f") -> str:
        return "-" if v is None else format(v, spec)

    for section in cfg.sections:
        t = Table(title=f"{section}: medians of {cfg.reps} runs, encrypted vs clear")
        for col in ("N", "mode", "Gbit/s", "min-max", "CPU s/GB", "enc/clear", "paired", "CPU x"):
            t.add_column(col, justify="left" if col == "mode" else "right")
        for n in cfg.streams:
            r = ratios.get((section, n), {})
            for mode in MODES:
                c = cells.get((section, mode, n))
                if c is None:
                    continue
                spread = f"{min(c['gbps']):.2f}-{max(c['gbps']):.2f}" if c["gbps"] else "-"
                fail = f" ({c['failed']} failed)" if c["failed"] else ""
                last = mode == MODES[-1]
                verdict = {True: " PASS", False: " MISS", None: ""}[r.get("pass")] if last else ""
                t.add_row(
                    str(n),
                    mode,
                    fmt(c["gbps_median"]) + fail,
                    spread,
                    fmt(c["cpu_per_gb_median"]),
                    fmt(r.get("ratio"), ".3f") + verdict if last else "",
                    fmt(r.get("paired"), ".3f") if last else "",
                    fmt(r.get("cpu_ratio")) if last else "",
                    end_section=last,
                )
        con.print(t)
    eng = info.get("engine", {})
    con.print(f"target: enc/clear >= {TARGET} at N=4; engine {eng.get('commit', '?')}")
    con.print(
        f"load average {info['load_before']} before, {info['load_after']} after; "
        f"{info['machine']['cores']} cores ({info['machine']['cpu']}); {info['elapsed_s']:.0f} s"
    )


def _progress(s: Sample) -> None:
    what = (
        f"{s.gbps:6.2f} Gbit/s  cpu {s.cpu_send:5.2f}+{s.cpu_recv:5.2f} s"
        if s.ok
        else f"FAILED {s.error}"
    )
    print(
        f"  {s.section:5} {s.tool:8} N={s.streams:<2} rep {s.rep}: {what}  (load {s.load1:.1f})",
        file=sys.stderr,
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="0.5 GB / 256 MiB per run")
    ap.add_argument("--json", metavar="OUT", help="also write every sample and the summary here")
    ap.add_argument("--reps", type=int, help="repetitions (default 3)")
    ap.add_argument("--only", choices=["mem", "files"], help="run one section")
    ap.add_argument("--engine", metavar="DIR", default=str(REPO), help="xfer/ and policy/ to run")
    ap.add_argument("--tmpfs", default="/dev/shm", help="tmpfs directory (default /dev/shm)")
    a = ap.parse_args(argv)
    base = QUICK if a.quick else CryptoBenchConfig()
    cfg = CryptoBenchConfig(
        **{
            **asdict(base),
            "tmpfs": a.tmpfs,
            "reps": a.reps or base.reps,
            "sections": (a.only,) if a.only else base.sections,
        }
    )
    info: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": _peers.machine(),
        "load_before": [round(x, 2) for x in os.getloadavg()],
        "config": asdict(cfg),
    }
    t0 = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="xfer-bench-crypto-", dir=cfg.tmpfs))
    try:
        info["engine"] = snapshot_engine(Path(a.engine).resolve(), work)
        samples = bench(cfg, _progress, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    info["load_after"] = [round(x, 2) for x in os.getloadavg()]
    info["elapsed_s"] = time.monotonic() - t0
    summary = summarize(samples, cfg)
    if a.json:
        rows = [
            {**asdict(s), "gbps": s.gbps, "wall_gbps": s.wall_gbps, "cpu_per_gb": s.cpu_per_gb}
            for s in samples
        ]
        with open(a.json, "w") as f:
            json.dump({**info, **summary, "samples": rows}, f, indent=1)
    print_tables(summary, cfg, info)
    return 0


if __name__ == "__main__":
    sys.exit(main())
