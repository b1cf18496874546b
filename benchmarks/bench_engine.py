"""The engine against its peers, side by side in one run (issue 2's benchmark, issue 3's
checksum cost).

Run: ``python3 benchmarks/bench_engine.py [--quick] [--json OUT] [--install]``

- memory-to-memory: ``xfer send --mem`` (checksum on and off) vs ``iperf3 -P N -n BYTES``,
  the same bytes, N = 1, 4, 16;
- files: a tree of mixed sizes on tmpfs, ``xfer send`` (receiver with ``--no-fsync`` and with
  fsync) vs ``globus-url-copy -p N -fast -tcp-bs 8M -r`` from a local ``globus-gridftp-server``;
- CPU seconds per GB of each tool, sender + receiver processes (children included).

Tools alternate within each repetition (the order rotates) so that they share the noise of
a busy machine; the table shows medians. Targets (issue 2 and 3): memory-to-memory >= 0.95 x
iperf3 at every N, files >= 1.2 x GridFTP, checksum cost <= 10 % at 4 streams. Each target
is printed PASS or MISS; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import operator
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
REPO = Path(__file__).resolve().parent.parent

import _peers  # noqa: E402
from _peers import XFER, ClientRun, Server, make_tree, run_client, snapshot_engine, tree_size  # noqa: E402


@dataclass(frozen=True)
class BenchConfig:
    """One benchmark run."""

    reps: int = 3
    """Repetitions of every (tool, N); the table shows medians."""
    streams: tuple[int, ...] = (1, 4, 16)
    """Stream counts N compared."""
    mem_bytes: int = 3_000_000_000
    """Bytes per memory-to-memory run (same for xfer and iperf3)."""
    tree_bytes: int = 3 << 29
    """Approximate size of the file tree."""
    tmpfs: str = "/dev/shm"
    """A tmpfs directory for the tree and the destinations."""
    sections: tuple[str, ...] = ("mem", "files")
    """Which comparisons to run."""


QUICK = BenchConfig(reps=3, mem_bytes=500_000_000, tree_bytes=256 << 20)

MEM_TOOLS = ("xfer", "xfer-nocksum", "iperf3")
FILE_TOOLS = ("xfer", "xfer-fsync", "gridftp")
PEER_OF = {"mem": "iperf3", "files": "gridftp"}


@dataclass
class Sample:
    """One transfer by one tool."""

    section: str
    tool: str
    streams: int
    rep: int
    bytes: int = 0
    seconds: float = 0.0
    """The tool's own transfer time (xfer and iperf3 report it; GridFTP: client wall time)."""
    wall: float = 0.0
    """Client process wall time, spawn to exit (includes interpreter start-up)."""
    cpu_send: float = 0.0
    """CPU seconds of the process that sends the data (the GridFTP server, xfer send, iperf3 -c)."""
    cpu_recv: float = 0.0
    """CPU seconds of the process that receives the data."""
    ok: bool = False
    error: str = ""
    load1: float = 0.0

    @property
    def gbps(self) -> float:
        return self.bytes * 8 / self.seconds / 1e9 if self.ok and self.seconds > 0 else 0.0

    @property
    def wall_gbps(self) -> float:
        return self.bytes * 8 / self.wall / 1e9 if self.ok and self.wall > 0 else 0.0

    @property
    def cpu_per_gb(self) -> float:
        return (
            (self.cpu_send + self.cpu_recv) / (self.bytes / 1e9) if self.ok and self.bytes else 0.0
        )


# -------------------------------------------------------------------------- one transfer


def _measure(
    s: Sample, server: Server, cmd: list[str], parse: Callable[[ClientRun, Sample], None]
) -> Sample:
    before = server.cpu(settle=0.0)
    s.load1 = os.getloadavg()[0]
    run = run_client(cmd)
    s.wall, s.cpu_send = run.wall, run.cpu
    s.cpu_recv = server.cpu() - before
    if run.returncode != 0:
        s.error = f"exit {run.returncode}: {run.stderr.strip()[-300:]}"
    try:
        parse(run, s)
    except (ValueError, KeyError, TypeError) as exc:
        s.ok = False
        s.error = s.error or f"unreadable output ({exc}): {run.stdout[-200:]!r}"
    return s


def _parse_xfer(run: ClientRun, s: Sample) -> None:
    end = json.loads(run.stdout.strip().splitlines()[-1])
    s.bytes, s.seconds = int(end["bytes"]), float(end["seconds"])
    s.ok = end["exit_code"] == 0 and run.returncode == 0
    if not s.ok:
        s.error = s.error or str(end.get("error"))


def _parse_iperf3(run: ClientRun, s: Sample) -> None:
    out = json.loads(run.stdout)
    if out.get("error"):
        s.error = str(out["error"])
        return
    rx = out["end"]["sum_received"]
    s.bytes, s.seconds = int(rx["bytes"]), float(rx["seconds"])
    s.ok = run.returncode == 0


def mem_run(tool: str, n: int, rep: int, cfg: BenchConfig, servers: dict[str, Server]) -> Sample:
    s = Sample("mem", tool, n, rep)
    if tool == "iperf3":
        srv = servers["iperf3"]
        cmd = [
            "iperf3",
            "-c",
            "127.0.0.1",
            "-p",
            str(srv.port),
            "-P",
            str(n),
            "-n",
            str(cfg.mem_bytes),
            "-J",
        ]
        return _measure(s, srv, cmd, _parse_iperf3)
    srv = servers["xfer"]
    cmd = [
        *XFER,
        "send",
        "--mem",
        str(cfg.mem_bytes),
        f"127.0.0.1:{srv.port}",
        "--streams",
        str(n),
        "--json",
        "-q",
    ]
    if tool == "xfer-nocksum":
        cmd.append("--no-checksum")
    return _measure(s, srv, cmd, _parse_xfer)


def files_run(
    tool: str,
    n: int,
    rep: int,
    src: Path,
    work: Path,
    servers: dict[str, Server],
    expect: tuple[int, int],
) -> Sample:
    s = Sample("files", tool, n, rep)
    dest = f"r{rep}-n{n}"
    if tool == "gridftp":
        out = work / "gftp" / dest
        out.mkdir(parents=True)
        srv = servers["gridftp"]
        cmd = [
            "globus-url-copy",
            "-p",
            str(n),
            "-fast",
            "-tcp-bs",
            "8M",
            "-r",
            "-cd",
            f"ftp://127.0.0.1:{srv.port}{src}/",
            f"file://{out}/",
        ]

        def parse(run: ClientRun, smp: Sample) -> None:
            smp.bytes, smp.seconds, smp.ok = expect[1], run.wall, run.returncode == 0

        _measure(s, srv, cmd, parse)
        # the data flows server -> client here: report CPU by role, like for xfer
        s.cpu_send, s.cpu_recv = s.cpu_recv, s.cpu_send
    else:
        srv = servers[tool]
        out = work / tool / dest
        cmd = [
            *XFER,
            "send",
            str(src),
            f"127.0.0.1:{srv.port}",
            "--streams",
            str(n),
            "--dest",
            dest,
            "--json",
            "-q",
        ]
        _measure(s, srv, cmd, _parse_xfer)
    got = tree_size(out)
    if s.ok and got != expect:
        s.ok, s.error = False, f"destination has {got} (files, bytes), expected {expect}"
    shutil.rmtree(out, ignore_errors=True)
    return s


# ---------------------------------------------------------------------------- the runs


def _rotated(tools: tuple[str, ...], k: int) -> list[str]:
    k %= len(tools)
    return list(tools[k:] + tools[:k])


def run_section(
    name: str,
    cfg: BenchConfig,
    one: Callable[[str, int, int], Sample],
    tools: list[str],
    progress: Callable[[Sample], None],
) -> list[Sample]:
    samples = []
    for rep in range(cfg.reps):
        for i, n in enumerate(cfg.streams):
            for tool in _rotated(tuple(tools), rep + i):
                s = one(tool, n, rep)
                progress(s)
                samples.append(s)
    return samples


def bench_mem(
    cfg: BenchConfig, have: dict[str, bool], progress: Callable[[Sample], None], work: Path
) -> list[Sample]:
    tools = [t for t in MEM_TOOLS if t != "iperf3" or have["iperf3"]]
    servers: dict[str, Server] = {}
    try:
        servers["xfer"] = _peers.start_xfer_recv(str(work / "mem-root"), fsync=False)
        if have["iperf3"]:
            servers["iperf3"] = _peers.start_iperf3()
        return run_section(
            "mem", cfg, lambda t, n, r: mem_run(t, n, r, cfg, servers), tools, progress
        )
    finally:
        for srv in servers.values():
            srv.stop()


def bench_files(
    cfg: BenchConfig, have: dict[str, bool], progress: Callable[[Sample], None], work: Path
) -> list[Sample]:
    gridftp = have["globus-gridftp-server"] and have["globus-url-copy"]
    tools = [t for t in FILE_TOOLS if t != "gridftp" or gridftp]
    src = work / "src"
    t0 = time.monotonic()
    expect = make_tree(src, cfg.tree_bytes)
    print(
        f"bench: tree of {expect[0]} files, {expect[1] / 2**30:.2f} GiB on {src} "
        f"({time.monotonic() - t0:.1f} s)",
        file=sys.stderr,
    )
    servers: dict[str, Server] = {}
    try:
        servers["xfer"] = _peers.start_xfer_recv(str(work / "xfer"), fsync=False)
        servers["xfer-fsync"] = _peers.start_xfer_recv(str(work / "xfer-fsync"), fsync=True)
        if gridftp:
            servers["gridftp"] = _peers.start_gridftp()
        return run_section(
            "files",
            cfg,
            lambda t, n, r: files_run(t, n, r, src, work, servers, expect),
            tools,
            progress,
        )
    finally:
        for srv in servers.values():
            srv.stop()
        shutil.rmtree(src, ignore_errors=True)


# ----------------------------------------------------------------------------- summary


def _median(xs: list[float]) -> float | None:
    return statistics.median(xs) if xs else None


def _cells(samples: list[Sample]) -> dict[str, Any]:
    """Per (section, tool, N): every sample's Gbit/s, wall Gbit/s and CPU s/GB, and medians."""
    cells: dict[str, Any] = {}
    for s in samples:
        key = f"{s.section}/{s.tool}/{s.streams}"
        c = cells.setdefault(
            key,
            {
                "section": s.section,
                "tool": s.tool,
                "streams": s.streams,
                "gbps": [],
                "wall_gbps": [],
                "cpu_per_gb": [],
                "failed": 0,
            },
        )
        if not s.ok:
            c["failed"] += 1
            continue
        for k in ("gbps", "wall_gbps", "cpu_per_gb"):
            c[k].append(getattr(s, k))
    for c in cells.values():
        for k in ("gbps", "wall_gbps", "cpu_per_gb"):
            c[f"{k}_median"] = _median(c[k])
    return cells


def _target(
    name: str,
    value: float | None,
    paired: float | None,
    want: str,
    ok: Callable[[float], bool] | None,
) -> dict[str, Any]:
    verdict = None if value is None or ok is None else ok(value)
    return {"target": name, "value": value, "paired": paired, "want": want, "pass": verdict}


def summarize(samples: list[Sample], cfg: BenchConfig) -> dict[str, Any]:
    """Medians per (section, tool, N), ratios against the peer, and the targets."""
    cells = _cells(samples)
    by_rep = {(s.section, s.tool, s.streams, s.rep): s.gbps for s in samples if s.ok}

    def med(section: str, tool: str, n: int, what: str = "gbps_median") -> float | None:
        return cells.get(f"{section}/{tool}/{n}", {}).get(what)

    def ratio(x: float | None, y: float | None) -> float | None:
        return x / y if x and y else None

    def paired(section: str, a: str, b: str, n: int) -> float | None:
        """Median over repetitions of a/b measured back to back (shares the machine's noise)."""
        return _median(
            [
                r
                for r in (
                    ratio(by_rep.get((section, a, n, k)), by_rep.get((section, b, n, k)))
                    for k in range(cfg.reps)
                )
                if r is not None
            ]
        )

    targets = []
    for section, want in (("mem", 0.95), ("files", 1.2)):
        peer = PEER_OF[section]
        for n in cfg.streams:
            targets.append(
                _target(
                    f"{section}: xfer / {peer} at N={n}",
                    ratio(med(section, "xfer", n), med(section, peer, n)),
                    paired(section, "xfer", peer, n),
                    f">= {want}",
                    partial(operator.le, want),  # want <= v
                )
            )
    on_off = ratio(med("mem", "xfer", 4), med("mem", "xfer-nocksum", 4))
    pc = paired("mem", "xfer", "xfer-nocksum", 4)
    targets.append(
        _target(
            "checksum cost at N=4 (1 - on/off)",
            None if on_off is None else 1 - on_off,
            None if pc is None else 1 - pc,
            "<= 0.10",
            lambda v: v <= 0.10,
        )
    )
    cpu = ratio(
        med("mem", "xfer", 4, "cpu_per_gb_median"),
        med("mem", "xfer-nocksum", 4, "cpu_per_gb_median"),
    )
    targets.append(
        _target(
            "checksum CPU cost at N=4 (s/GB on/off - 1)",
            None if cpu is None else cpu - 1,
            None,
            "(info)",
            None,
        )
    )
    return {"cells": list(cells.values()), "targets": targets}


def print_tables(summary: dict[str, Any], cfg: BenchConfig, info: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    con = Console(width=None if sys.stdout.isatty() else 110)
    cells = {(c["section"], c["tool"], c["streams"]): c for c in summary["cells"]}

    def fmt(v: float | None, spec: str = ".2f") -> str:
        return "-" if v is None else format(v, spec)

    titles = {"mem": "memory-to-memory", "files": "files on tmpfs"}
    for section, tools, peer in (("mem", MEM_TOOLS, "iperf3"), ("files", FILE_TOOLS, "gridftp")):
        if section not in cfg.sections:
            continue
        t = Table(title=f"{titles[section]}: medians of {cfg.reps} runs")
        for col in ("N", "tool", "Gbit/s", "min-max", f"/ {peer}", "wall Gbit/s", "CPU s/GB"):
            t.add_column(col, justify="left" if col == "tool" else "right")
        for n in cfg.streams:
            p = cells.get((section, peer, n), {}).get("gbps_median")
            for tool in tools:
                c = cells.get((section, tool, n))
                if c is None:
                    continue
                g = c["gbps_median"]
                spread = f"{min(c['gbps']):.2f}-{max(c['gbps']):.2f}" if c["gbps"] else "-"
                fail = f" ({c['failed']} failed)" if c["failed"] else ""
                t.add_row(
                    str(n),
                    tool,
                    fmt(g) + fail,
                    spread,
                    fmt(g / p if g and p else None),
                    fmt(c["wall_gbps_median"]),
                    fmt(c["cpu_per_gb_median"]),
                    end_section=tool == tools[-1],
                )
        con.print(t)
    tt = Table(title="targets")
    for col in ("target", "of medians", "paired", "want", "verdict"):
        tt.add_column(col)
    for tg in summary["targets"]:
        if tg["target"].split(":")[0] not in cfg.sections and "checksum" not in tg["target"]:
            continue
        verdict = {True: "[green]PASS", False: "[red]MISS", None: ""}[tg["pass"]]
        if tg["pass"] is None and tg["want"] != "(info)":
            verdict = "[yellow]n/a"
        tt.add_row(
            tg["target"], fmt(tg["value"], ".3f"), fmt(tg.get("paired"), ".3f"), tg["want"], verdict
        )
    con.print(tt)
    eng = info.get("engine", {})
    con.print(
        f"engine {eng.get('commit', '?')} from {eng.get('source', '?')}"
        f"{' + uncommitted ' + ', '.join(eng['dirty_files']) if eng.get('dirty_files') else ''}"
    )
    con.print(machine_line(info))


def machine_line(info: dict[str, Any]) -> str:
    """The run's load, machine and duration, for the end of a table."""
    return (
        f"load average {info['load_before']} before, {info['load_after']} after; "
        f"{info['machine']['cores']} cores ({info['machine']['cpu']}); "
        f"{info['elapsed_s']:.0f} s"
    )


def _progress(s: Sample) -> None:
    what = (
        f"{s.gbps:6.2f} Gbit/s  cpu {s.cpu_send:5.2f}+{s.cpu_recv:5.2f} s"
        if s.ok
        else f"FAILED {s.error}"
    )
    print(
        f"  {s.section:5} {s.tool:13} N={s.streams:<2} rep {s.rep}: {what}  (load {s.load1:.1f})",
        file=sys.stderr,
        flush=True,
    )


def reprint(path: Path) -> int:
    """The tables of a run saved with ``--json``."""
    saved = json.loads(path.read_text())
    names = {f.name for f in fields(Sample)}
    samples = [Sample(**{k: v for k, v in row.items() if k in names}) for row in saved["samples"]]
    c = saved["config"]
    cfg = BenchConfig(**{**c, "streams": tuple(c["streams"]), "sections": tuple(c["sections"])})
    print(f"{path}: {saved['date']}, {saved['machine']}", file=sys.stderr)
    print_tables(summarize(samples, cfg), cfg, saved)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--quick", action="store_true", help="0.5 GB / 256 MiB per run instead of 3 GB / 1.5 GiB"
    )
    ap.add_argument("--json", metavar="OUT", help="also write every sample and the summary here")
    ap.add_argument("--install", action="store_true", help="apt-get missing peers (root)")
    ap.add_argument("--reps", type=int, help="repetitions (default 3)")
    ap.add_argument(
        "--engine",
        metavar="DIR",
        default=str(REPO),
        help="directory holding the xfer/ and policy/ packages to measure "
        "(default: this repository); copied once at the start",
    )
    ap.add_argument("--from-json", metavar="FILE", help="print the tables of a saved run")
    ap.add_argument("--only", choices=["mem", "files"], help="run one section")
    ap.add_argument(
        "--tmpfs", default="/dev/shm", help="tmpfs directory for trees (default /dev/shm)"
    )
    a = ap.parse_args(argv)
    cfg = QUICK if a.quick else BenchConfig()
    cfg = BenchConfig(
        **{
            **asdict(cfg),
            "tmpfs": a.tmpfs,
            "reps": a.reps or cfg.reps,
            "sections": (a.only,) if a.only else cfg.sections,
        }
    )
    if a.from_json:
        return reprint(Path(a.from_json))
    have = _peers.check_peers(a.install)
    info: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": _peers.machine(),
        "load_before": [round(x, 2) for x in os.getloadavg()],
        "config": asdict(cfg),
    }
    t0 = time.monotonic()
    samples: list[Sample] = []
    work = Path(tempfile.mkdtemp(prefix="xfer-bench-", dir=cfg.tmpfs))
    os.chmod(work, 0o755)  # the GridFTP server (as nobody) must reach the tree
    try:
        info["engine"] = snapshot_engine(Path(a.engine).resolve(), work)
        if "mem" in cfg.sections:
            samples += bench_mem(cfg, have, _progress, work)
        if "files" in cfg.sections:
            samples += bench_files(cfg, have, _progress, work)
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
