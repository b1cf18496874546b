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

``--emulated`` (root) measures the issue's second target instead: on a testbed path
(``testbeds``: sender, router, receiver namespaces, a ``tbf`` bottleneck of ``--rate``, default
1 Gbit/s, ``--rtt-ms`` 0 by default so no userspace delay line runs), ``iperf3 -P N -n BYTES``,
``xfer send --mem BYTES --encryption on`` and ``--encryption off``, the same bytes, N = 1, 4,
16, alternating within each repetition; Gbit/s medians, ratios to iperf3 and CPU s/GB of the
sender and receiver. Target: encrypted >= 0.9 x iperf3 at N = 4, printed PASS or MISS.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
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
from _peers import XFER, Server, make_tree, ns_server, snapshot_engine, tree_size  # noqa: E402
from bench_engine import (  # noqa: E402
    BenchConfig,
    Sample,
    _cells,
    _measure,
    _median,
    _parse_iperf3,
    _parse_xfer,
    _progress,
    machine_line,
    run_section,
)

MODES = ("clear", "aes-gcm")
"""The two tools compared: ``--encryption off`` and ``--encryption on``."""
FLAG = {"clear": "off", "aes-gcm": "on"}
TARGET = 0.8
"""Issue 15: encrypted >= 0.8 x clear at N = 4."""


@dataclass(frozen=True)
class CryptoBenchConfig(BenchConfig):
    """One benchmark run: bench_engine's fields (run_section reads them), smaller defaults."""

    mem_bytes: int = 2_000_000_000
    """Bytes per memory-to-memory run."""
    tree_bytes: int = 1 << 30
    """Approximate size of the file tree."""


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


# ------------------------------------------------------------------ emulated 1 Gbit/s path

EMU_TOOLS = ("iperf3", "clear", "aes-gcm")
"""Compared on the emulated path: ``iperf3 -P N`` and xfer ``--encryption off`` / ``on``."""
EMU_TARGET = 0.9
"""Issue 15: encrypted >= 0.9 x ``iperf3 -P 4`` at 1 Gbit/s emulated."""
IPERF_PORT, XFER_PORT = 5211, 5311


@dataclass(frozen=True)
class EmuConfig:
    """The emulated comparison (``reps`` and ``streams`` as run_section reads them)."""

    reps: int = 3
    streams: tuple[int, ...] = (1, 4, 16)
    bytes: int = 1_000_000_000
    """Bytes per run, the same for every tool (about 8.5 s at 1 Gbit/s)."""
    rate: str = "1gbit"
    rtt_ms: float = 0.0
    """0: no delay line (it costs CPU on the shared cores); the tbf queue is then 64 packets."""
    queue: str = "1bdp"
    tmpfs: str = "/dev/shm"


def emu_scenario(cfg: EmuConfig) -> Any:
    from testbeds.scenario import parse_scenario

    return parse_scenario(
        {
            "description": f"bench_crypto: {cfg.rate}, {cfg.rtt_ms:g} ms RTT",
            "sysctl": {"congestion_control": "cubic"},
            "path": [{"rate": cfg.rate, "rtt_ms": cfg.rtt_ms, "queue": cfg.queue}],
        },
        "bench_crypto:emulated",
        "crypto-emu",
    )


def bench_emulated(
    cfg: EmuConfig, progress: Callable[[Sample], None], work: Path
) -> tuple[list[Sample], dict[str, Any]]:
    from testbeds import Testbed

    scn = emu_scenario(cfg)
    samples: list[Sample] = []
    with Testbed(scn, name="bench-crypto") as tb:
        snd, rcv = tb.hosts["sender"], tb.hosts["receiver"]
        addr = rcv.addr
        iperf = ns_server(rcv, "iperf3", ["iperf3", "-s", "-B", addr, "-p", str(IPERF_PORT)],
                           IPERF_PORT)  # fmt: skip
        recv = None
        try:
            recv = ns_server(
                rcv,
                "xfer",
                [*XFER, "recv", "--listen", f"{addr}:{XFER_PORT}", "--root", str(work / "root"),
                 "--insecure", "--no-fsync"],
                XFER_PORT,
            )  # fmt: skip

            def one(tool: str, n: int, rep: int) -> Sample:
                s = Sample("emu", tool, n, rep)
                if tool == "iperf3":
                    cmd = ["iperf3", "-c", addr, "-p", str(IPERF_PORT), "-P", str(n),
                           "-n", str(cfg.bytes), "-J"]  # fmt: skip
                    return _measure(s, iperf, snd.cmd(cmd), _parse_iperf3)
                cmd = [*XFER, "send", "--mem", str(cfg.bytes), f"{addr}:{XFER_PORT}",
                       "--streams", str(n), "--encryption", FLAG[tool], "--json", "-q"]  # fmt: skip
                return _measure(s, recv, snd.cmd(cmd), _parse_xfer)

            samples = run_section("emu", cfg, one, list(EMU_TOOLS), progress)  # type: ignore[arg-type]
        finally:
            if recv is not None:
                recv.stop()
            iperf.stop()
    path = scn.paths[0]
    return samples, {"goodput_gbps": path.goodput_bps / 1e9, "queue_bytes": path.queue_bytes}


def summarize_emulated(samples: list[Sample], cfg: EmuConfig) -> list[dict[str, Any]]:
    ok = [s for s in samples if s.ok]
    by_rep = {(s.tool, s.streams, s.rep): s for s in ok}
    rows = []
    for n in cfg.streams:
        peer = [s.gbps for s in ok if s.tool == "iperf3" and s.streams == n]
        peer_med = statistics.median(peer) if peer else None
        for tool in EMU_TOOLS:
            mine = [s for s in ok if s.tool == tool and s.streams == n]
            med = statistics.median([s.gbps for s in mine]) if mine else None
            pairs = [
                by_rep[(tool, n, k)].gbps / by_rep[("iperf3", n, k)].gbps
                for k in range(cfg.reps)
                if (tool, n, k) in by_rep and ("iperf3", n, k) in by_rep
            ]
            ratio = med / peer_med if med and peer_med else None

            def per_gb(cpu: Callable[[Sample], float], mine: list[Sample] = mine) -> float | None:
                xs = [cpu(s) / (s.bytes / 1e9) for s in mine if s.bytes]
                return statistics.median(xs) if xs else None

            rows.append(
                {
                    "streams": n,
                    "tool": tool,
                    "runs": len(mine),
                    "failed": sum(1 for s in samples if s.tool == tool and s.streams == n)
                    - len(mine),
                    "gbps_median": med,
                    "gbps": [s.gbps for s in mine],
                    "ratio_to_iperf3": ratio,
                    "paired": _median(pairs),
                    "cpu_send_per_gb": per_gb(lambda s: s.cpu_send),
                    "cpu_recv_per_gb": per_gb(lambda s: s.cpu_recv),
                    "pass": None
                    if tool != "aes-gcm" or n != 4 or ratio is None
                    else ratio >= EMU_TARGET,
                }
            )
    return rows


def print_emulated(rows: list[dict[str, Any]], cfg: EmuConfig, info: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    con = Console(width=None if sys.stdout.isatty() else 120)

    def fmt(v: float | None, spec: str = ".3f") -> str:
        return "-" if v is None else format(v, spec)

    t = Table(
        title=f"emulated {cfg.rate}, RTT {cfg.rtt_ms:g} ms: medians of {cfg.reps} runs "
        f"of {cfg.bytes / 1e9:g} GB"
    )
    for col in ("N", "tool", "Gbit/s", "min-max", "/iperf3", "paired", "send s/GB", "recv s/GB"):
        t.add_column(col, justify="left" if col == "tool" else "right")
    for i, r in enumerate(rows):
        fail = f" ({r['failed']} failed)" if r["failed"] else ""
        spread = f"{min(r['gbps']):.3f}-{max(r['gbps']):.3f}" if r["gbps"] else "-"
        verdict = {True: " PASS", False: " MISS", None: ""}[r["pass"]]
        t.add_row(
            str(r["streams"]),
            r["tool"],
            fmt(r["gbps_median"]) + fail,
            spread,
            fmt(r["ratio_to_iperf3"]) + verdict,
            fmt(r["paired"]),
            fmt(r["cpu_send_per_gb"], ".2f"),
            fmt(r["cpu_recv_per_gb"], ".2f"),
            end_section=i + 1 < len(rows) and rows[i + 1]["streams"] != r["streams"],
        )
    con.print(t)
    eng = info.get("engine", {})
    con.print(
        f"target: aes-gcm / iperf3 >= {EMU_TARGET} at N=4; path goodput ceiling "
        f"{info['path']['goodput_gbps']:.3f} Gbit/s (tbf rate less Ethernet/IP/TCP overhead), "
        f"queue {info['path']['queue_bytes']} B; engine {eng.get('commit', '?')}"
    )
    con.print(machine_line(info))


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
    con.print(machine_line(info))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="0.5 GB / 256 MiB per run")
    ap.add_argument("--json", metavar="OUT", help="also write every sample and the summary here")
    ap.add_argument("--reps", type=int, help="repetitions (default 3)")
    ap.add_argument("--only", choices=["mem", "files"], help="run one section")
    ap.add_argument("--engine", metavar="DIR", default=str(REPO), help="xfer/ and policy/ to run")
    ap.add_argument("--tmpfs", default="/dev/shm", help="tmpfs directory (default /dev/shm)")
    emu = ap.add_argument_group("--emulated: xfer vs iperf3 on a testbed path (root)")
    emu.add_argument("--emulated", action="store_true", help="run the emulated comparison only")
    emu.add_argument("--rate", default="1gbit", help="bottleneck rate (default 1gbit)")
    emu.add_argument("--rtt-ms", type=float, default=0.0, help="RTT; 0 (default): no delay line")
    emu.add_argument("--bytes", default="1GB", help="bytes per run, every tool (default 1GB)")
    emu.add_argument("--streams", default="1,4,16", help="stream counts (default 1,4,16)")
    a = ap.parse_args(argv)
    if a.emulated:
        return main_emulated(a)
    base = QUICK if a.quick else CryptoBenchConfig()
    cfg = CryptoBenchConfig(
        **{
            **asdict(base),
            "tmpfs": a.tmpfs,
            "reps": a.reps or base.reps,
            "sections": (a.only,) if a.only else base.sections,
        }
    )
    info, samples = _timed(cfg, a.engine, lambda work: bench(cfg, _progress, work))
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


def _timed(cfg: Any, engine: str, body: Callable[[Path], Any]) -> tuple[dict[str, Any], Any]:
    """Run ``body(work dir)`` on a snapshot of the engine; the run's facts and its result."""
    info: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": _peers.machine(),
        "load_before": [round(x, 2) for x in os.getloadavg()],
        "config": asdict(cfg),
    }
    t0 = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="xfer-bench-crypto-", dir=cfg.tmpfs))
    try:
        info["engine"] = snapshot_engine(Path(engine).resolve(), work)
        result = body(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    info["load_after"] = [round(x, 2) for x in os.getloadavg()]
    info["elapsed_s"] = time.monotonic() - t0
    return info, result


def main_emulated(a: argparse.Namespace) -> int:
    from xfer.units import parse_size

    if os.geteuid() != 0:
        sys.exit("bench_crypto --emulated: needs root (network namespaces)")
    cfg = EmuConfig(
        reps=a.reps or 3,
        streams=tuple(int(x) for x in a.streams.split(",")),
        bytes=int(parse_size(a.bytes)),
        rate=a.rate,
        rtt_ms=a.rtt_ms,
        tmpfs=a.tmpfs,
    )
    info, (samples, path) = _timed(cfg, a.engine, lambda w: bench_emulated(cfg, _progress, w))
    info["path"] = path
    rows = summarize_emulated(samples, cfg)
    if a.json:
        out = [{**asdict(s), "gbps": s.gbps, "cpu_per_gb": s.cpu_per_gb} for s in samples]
        with open(a.json, "w") as f:
            json.dump({**info, "rows": rows, "samples": out}, f, indent=1)
    print_emulated(rows, cfg, info)
    return 0


if __name__ == "__main__":
    sys.exit(main())
