"""What the testbed's delay line costs, and how fast a path this machine can emulate.

    python3 benchmarks/bench_delayline.py [--seconds 8] [--rates 1,2,3,4,5,6] [--rtt-ms 10]

1. CPU of the delay line at 1 Gbit/s: ``wan-1g-50ms`` loaded by ``iperf3 -P 4`` (BBR);
   CPU seconds per second of traffic from ``/proc/<pid>/stat`` of the delay line, printed next
   to the iperf3 sender's own CPU (the peer, measured in the same run) as a ratio.
2. The highest rate at which ``calibrate`` still passes: a one-path scenario at each rate
   (RTT ``--rtt-ms``, queue 0.5 BDP) brought up and calibrated in turn.

Needs root. Prints one JSON line per measurement and a summary; numbers go to docs/testbed.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time

from testbeds import Testbed, load_scenario
from testbeds.calibrate import _iperf, _received_twice, calibrate
from testbeds.scenario import parse_scenario

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


LOADS = {
    # name: iperf3 arguments; both fill the 1 Gbit/s bottleneck of wan-1g-50ms
    "4 bbr streams": ["-P", "4", "-C", "bbr"],
    # paper-fig1 style: paced streams make TCP send small GSO packets, i.e. more packets
    "24 cubic streams paced at 50 Mbit/s": ["-P", "24", "-C", "cubic", "--fq-rate", "50M"],
}


def delay_line_cost(seconds: float, label: str, iperf_args: list[str]) -> dict:
    """CPU seconds per second of the delay line (and of the iperf3 sender) at 1 Gbit/s.

    The delay line's CPU includes the kernel's work on the packets it releases (the rest of
    forwarding, the qdisc, and often the receiver's stack) since that runs in its verdict call.
    """
    with Testbed(load_scenario("wan-1g-50ms"), name="bench-dl") as tb:
        pid = int(tb.pids["delayline"])
        rcv = tb.hosts["receiver"]
        total = int(seconds + 8)
        with _iperf(tb, 1, [*iperf_args, "-t", str(total)], total) as run:
            time.sleep(3)
            peer = run["client"].pid  # `ip netns exec` execs iperf3, so this is iperf3's own pid
            c0, p0, t0 = cpu_seconds(pid), cpu_seconds(peer), time.monotonic()
            nbytes, span = _received_twice(rcv, 0, seconds)
            c1, p1, t1 = cpu_seconds(pid), cpu_seconds(peer), time.monotonic()
    dl, ip = (c1 - c0) / (t1 - t0), (p1 - p0) / (t1 - t0)
    return {
        "measure": "delay_line_cpu_at_1gbit",
        "load": label,
        "goodput_mbps": round(nbytes * 8 / span / 1e6, 1),
        "delay_line_cpu_s_per_s": round(dl, 3),
        "iperf3_sender_cpu_s_per_s": round(ip, 3),
        "ratio_delay_line_to_iperf3": round(dl / ip, 3) if ip else None,
    }


def calibration_at(rate_gbit: float, rtt_ms: float) -> dict:
    """Calibrate a one-path scenario at ``rate_gbit``; returns the checks and a verdict."""
    name = f"bench-{rate_gbit:g}g"
    data = {"name": name, "path": [{"rate": f"{rate_gbit}gbit", "rtt_ms": rtt_ms}]}
    scn = parse_scenario(data, f"<{name}>", name)
    with Testbed(scn, name=name) as tb:
        checks = calibrate(tb)
    return {
        "measure": "calibration",
        "rate_gbit": rate_gbit,
        "rtt_ms": rtt_ms,
        "ok": all(c.ok for c in checks),
        "checks": {c.quantity: round(c.measured, 5) for c in checks},
        "goodput_ratio": round(checks[1].measured / checks[1].configured, 4),
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--rates", default="1,2,3,4,5,6", help="Gbit/s to try, comma-separated")
    ap.add_argument("--rtt-ms", type=float, default=10.0)
    args = ap.parse_args()
    load = os.getloadavg()[0]
    print(
        json.dumps({"measure": "machine", "cpus": os.cpu_count(), "loadavg_1m": load}), flush=True
    )
    costs = [delay_line_cost(args.seconds, label, a) for label, a in LOADS.items()]
    for cost in costs:
        print(json.dumps(cost), flush=True)
    best = None
    for rate in (float(r) for r in args.rates.split(",")):
        res = calibration_at(rate, args.rtt_ms)
        print(json.dumps(res), flush=True)
        if res["ok"]:
            best = rate
    kernel = subprocess.run(["uname", "-r"], capture_output=True, text=True).stdout.strip()
    for cost in costs:
        print(
            f"summary: delay line {cost['delay_line_cpu_s_per_s']:.3f} CPU-s/s at {cost['goodput_mbps']} "
            f"Mbit/s with {cost['load']} (iperf3 sender: {cost['iperf3_sender_cpu_s_per_s']:.3f}, "
            f"ratio {cost['ratio_delay_line_to_iperf3']})"
        )
    print(
        f"summary: highest rate passing calibration at {args.rtt_ms:g} ms RTT: {best} Gbit/s "
        f"(kernel {kernel}, {os.cpu_count()} CPUs, load {load:.1f} at start)"
    )


if __name__ == "__main__":
    main()
