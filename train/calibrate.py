"""Calibrate the simulator against the emulated testbed: throughput and loss versus N.

Run as root (it brings testbeds up in network namespaces)::

    python3 -m train.calibrate [--scenario wan-1g-50ms --scenario lossy-1g-50ms
                               --scenario wan-1g-50ms@50Mbit] [--streams 1,2,4,8,16,32,64]
                               [--seconds 8] [--repeat R] [--json OUT.json]
    python3 -m train.calibrate --from OUT.json [--from MORE.json]   # simulator side only

For each scenario (``NAME`` or ``NAME@RATE`` for a per-stream cap, the paper's throttling)
and each N it runs ``xfer send --mem --duration S --streams N --json-stream`` from the
testbed's sender to an ``xfer recv`` on its receiver, averages throughput and loss over the
MIs after a warm-up (and before the drain that follows ``--duration``; the median of
``--repeat`` runs), and prints them next to the simulator's steady state for the same
network (capacity, RTT, loss, queue, congestion control and socket buffer of the scenario).
The verdict column says whether the simulator is within 15 % on throughput.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from train.sim import CC_NAMES, fixed_params, steady
from xfer.units import parse_rate

PORT = 5771
TOLERANCE = 0.15
MEASURED = Path(__file__).resolve().parent / "data" / "calibration-testbed.json"
"""The testbed rows of the calibration table in the README (checked by the unit tests)."""
HOLDOUT = MEASURED.with_name("calibration-holdout.json")
"""Rows of a scenario the simulator's constants were not fitted on (lossy-500m-20ms)."""
COMPETITOR = MEASURED.with_name("calibration-competitor.json")
"""Fixed-N rows beside a long-lived loss-based competitor at 0.02-4 ms RTT, where the
testbed's queue is its 64-packet floor, several BDPs (``configs/experiments/calib-comp/``)."""
LONE = MEASURED.with_name("calibration-lone.json")
"""Fixed-N rows of a transfer alone on a LAN with random loss, the same 64-packet floor
(``configs/experiments/calib-lone/``): the windows sit in the queue until they overflow it."""
COMP_CONG_SAT = 0.09
"""Congestion-loss saturation fitted on :data:`COMPETITOR` (``SimConfig.cong_loss_sat``)."""


def sim_curve(scenario: Any, cap_bps: float | None, ns: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """The simulator's steady-state throughput and loss for the scenario's first path."""
    path, sysctl = scenario.paths[0], scenario.sysctls
    cc = sysctl.congestion_control if sysctl.congestion_control in CC_NAMES else "cubic"
    p = fixed_params(
        1,
        capacity=path.rate_bps,
        rtt=path.rtt_ms / 1e3,
        loss=path.loss,
        buffer=min(max(path.queue_bytes / max(path.bdp_bytes, 1), 0.05), 2.0),
        cc=CC_NAMES.index(cc),
        wmax=float(sysctl.tcp_wmem_max),
        cap=cap_bps if cap_bps else np.inf,
    )
    grid = np.array([ns], dtype=np.float64)
    z = np.zeros(1)
    thr, loss, _, _ = steady(p, p.capacity, z, z, grid)
    return thr[0], loss[0]


def competitor_curve(
    scn: dict[str, Any], ns: list[int], floor: bool = True, sat: float = COMP_CONG_SAT
) -> tuple[np.ndarray, np.ndarray]:
    """The simulator's throughput and loss at ``ns`` for one scenario of :data:`COMPETITOR`
    (its competitor on for good): with the queue floor (``floor``: the queue the testbed
    really holds, beyond the drawn ``queue_frac``) and saturation ``sat`` as
    ``SimConfig.queue_floor_pkts`` and ``cong_loss_sat`` draw them, or as the simulator was
    before them (``floor=False, sat=inf``)."""
    thr, loss, _ = path_curve(scn, ns, floor, sat)
    return thr, loss


def path_curve(
    scn: dict[str, Any], ns: list[int], floor: bool = True, sat: float = COMP_CONG_SAT
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`competitor_curve` with the RTT (s), for a scenario of :data:`COMPETITOR` or
    :data:`LONE` (``random_loss`` on the path, ``competitor_streams`` 0 when alone)."""
    rtt = max(scn["min_rtt_ms"], 0.01) / 1e3
    total = scn["queue_bytes"] / (scn["rate_bps"] * rtt / 8)
    extra = max(total - scn["queue_frac"], 0.0) if floor else 0.0
    p = fixed_params(
        1, capacity=scn["rate_bps"], rtt=rtt, buffer=scn["queue_frac"] + extra,
        queue_extra=extra, cong_sat=sat, cc=CC_NAMES.index("cubic"),
        comp_streams=scn["competitor_streams"], loss=scn.get("random_loss", 0.0),
    )  # fmt: skip
    z = np.zeros(1)
    thr, loss, rtt_s, _ = steady(p, p.capacity, z, np.ones(1), np.array([ns], dtype=np.float64))
    return thr[0], loss[0], rtt_s[0]


def _xfer(*args: str) -> list[str]:
    return [sys.executable, "-m", "xfer.cli", *args]


def _wait_listening(proc: subprocess.Popen[str], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    assert proc.stderr is not None
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if "listening on" in line:
            return
        if proc.poll() is not None:
            break
    raise RuntimeError(f"xfer recv did not start (exit {proc.poll()})")


def run_one(
    tb: Any, n: int, seconds: float, cap: str | None, cc: str, warmup: int = 2
) -> dict[str, float]:
    """One fixed-N memory transfer; mean throughput and loss over the MIs after warm-up."""
    dst = f"{tb.hosts['receiver'].addr}:{PORT}"
    argv = _xfer("send", "--mem", "1000G", "--duration", str(seconds), "--streams", str(n),
                 "--json-stream", "-q", "--no-checksum", "--encryption", "off", "--cc", cc,
                 dst)  # fmt: skip
    if cap:
        argv[-1:-1] = ["--stream-rate", cap]
    out = tb.hosts["sender"].run(argv, timeout=seconds + 60, capture_output=True, text=True)
    events = [json.loads(x) for x in out.stdout.splitlines() if x.startswith("{")]
    # Leave out the slow-start MIs and the drain after --duration (no new blocks then).
    mis = [e for e in events if e.get("event") == "interval"][warmup:]
    mis = [e for e in mis if e["t"] <= seconds + 0.5]
    if not mis:
        raise RuntimeError(f"xfer send N={n} produced no intervals: {out.stderr.strip()[-400:]}")
    retrans = sum(e.get("retrans_segs") or 0 for e in mis)
    segs = sum(e.get("data_segs_out") or 0 for e in mis)
    return {
        "throughput_bps": float(np.mean([e["throughput_bps"] for e in mis])),
        "loss_rate": retrans / segs if segs else float("nan"),
    }


def run_median(
    tb: Any, n: int, seconds: float, cap: str | None, cc: str, repeat: int
) -> dict[str, Any]:
    """``repeat`` runs of :func:`run_one`; the median throughput and loss (under random loss a
    few streams see only tens of loss events in a run, so one run is noisy)."""
    runs = [run_one(tb, n, seconds, cap, cc) for _ in range(repeat)]
    return {
        "throughput_bps": float(np.median([r["throughput_bps"] for r in runs])),
        "loss_rate": float(np.median([r["loss_rate"] for r in runs])),
        "runs_bps": [r["throughput_bps"] for r in runs],
    }


def calibrate_scenario(
    spec: str, ns: list[int], seconds: float, repeat: int = 1
) -> list[dict[str, Any]]:
    """Measure one scenario in the testbed and in the simulator."""
    from testbeds import Testbed, load_scenario

    name, _, cap = spec.partition("@")
    sc = load_scenario(name)
    cc = sc.sysctls.congestion_control
    sim_thr, sim_loss = _sim_of(spec, ns)
    rows = []
    with (
        Testbed(sc, name=f"cal{int(time.time()) % 100000}") as tb,
        tempfile.TemporaryDirectory() as root,
    ):
        recv = tb.hosts["receiver"].popen(
            _xfer("recv", "--listen", f"{tb.hosts['receiver'].addr}:{PORT}", "--root", root, "--insecure", "--no-fsync"),
            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        try:
            _wait_listening(recv)
            for i, n in enumerate(ns):
                m = run_median(tb, n, seconds, cap or None, cc, repeat)
                measured = {"scenario": spec, "streams": n, "testbed_bps": m["throughput_bps"],
                            "testbed_loss": m["loss_rate"], "testbed_runs_bps": m["runs_bps"]}  # fmt: skip
                rows.append(_with_sim(measured, sim_thr[i], sim_loss[i]))
                print(_fmt(rows[-1]), flush=True)
        finally:
            recv.terminate()
            try:
                recv.wait(timeout=10)
            except subprocess.TimeoutExpired:
                recv.kill()
    return rows


def _sim_of(spec: str, ns: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """The simulator's throughput and loss at ``ns`` for ``NAME[@PER_STREAM_RATE]``."""
    from testbeds import load_scenario

    name, _, cap = spec.partition("@")
    return sim_curve(load_scenario(name), parse_rate(cap) if cap else None, ns)


def _with_sim(measured: dict[str, Any], sim_bps: float, sim_loss: float) -> dict[str, Any]:
    """A testbed row with the simulator's columns and the ±15 % verdict."""
    err = float(sim_bps) / measured["testbed_bps"] - 1.0
    return {**measured, "sim_bps": float(sim_bps), "sim_loss": float(sim_loss), "error": err,
            "ok": abs(err) <= TOLERANCE}  # fmt: skip


def _fmt(r: dict[str, Any]) -> str:
    return (
        f"{r['scenario']:26} N={r['streams']:3d}  testbed {r['testbed_bps'] / 1e6:8.1f} Mbit/s  "
        f"sim {r['sim_bps'] / 1e6:8.1f} Mbit/s  ({100 * r['error']:+5.1f} %)  "
        f"loss testbed {r['testbed_loss']:.2e} sim {r['sim_loss']:.2e}  {'ok' if r['ok'] else 'OFF'}"
    )


def resimulate(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The simulator's columns recomputed for testbed rows measured earlier (``--from``), so a
    change to the simulator is checked against the testbed without running it again."""
    out = []
    for spec in dict.fromkeys(r["scenario"] for r in rows):
        mine = [r for r in rows if r["scenario"] == spec]
        thr, loss = _sim_of(spec, [int(r["streams"]) for r in mine])
        out += [_with_sim(r, t, lo) for r, t, lo in zip(mine, thr, loss, strict=True)]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="Simulator vs emulated testbed: throughput and loss vs N."
    )
    ap.add_argument(
        "--scenario", action="append", help="NAME or NAME@RATE (per-stream cap); repeatable"
    )
    ap.add_argument("--streams", default="1,2,4,8,16,32,64")
    ap.add_argument("--seconds", type=float, default=8.0, help="duration of each transfer")
    ap.add_argument("--repeat", type=int, default=1, help="runs per point (median)")
    ap.add_argument("--json", dest="json_out", help="write the rows to this file")
    ap.add_argument(
        "--from", dest="from_json", action="append",
        help="recompute the simulator for testbed rows saved earlier with --json (no testbed run; repeatable)",
    )  # fmt: skip
    a = ap.parse_args(argv)
    specs = a.scenario or ["wan-1g-50ms", "lossy-1g-50ms", "wan-1g-50ms@50Mbit"]
    ns = [int(x) for x in a.streams.split(",")]
    rows: list[dict[str, Any]] = []
    if a.from_json:
        for path in a.from_json:
            with open(path) as f:
                data = json.load(f)
            rows += data["rows"] if isinstance(data, dict) else data
        rows = resimulate(rows)
        for r in rows:
            print(_fmt(r))
    for spec in [] if a.from_json else specs:
        rows += calibrate_scenario(spec, ns, a.seconds, a.repeat)
    ok = sum(r["ok"] for r in rows)
    print(f"{ok}/{len(rows)} points within {100 * TOLERANCE:.0f} % on throughput")
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(rows, f, indent=2)
    return 0 if ok == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
