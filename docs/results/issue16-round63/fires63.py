"""Where policy.rebound would fire on logged runs, read open loop from `lab.trace` text (round
63): each run's MIs are fed to `policy.rebound.Rebound` with the logged count as the proposal,
and the MIs where it would have added streams are printed. Open loop: after the first firing
the logged counts are no longer what the rule would run, so only the first firing of a run is a
claim about that run (a closed-loop replay needs the run's logs, `train.replay --carried`).

    python3 docs/results/issue16-round63/fires63.py TRACE.txt [--min-rtt-ms 30] [KEY=VALUE,...]
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

from policy.base import ControllerConfig
from policy.rebound import Rebound, ReboundConfig
from policy.signals import SignalVector

Run = tuple[str, float, dict[str, list[float]]]


def runs(text: str) -> Iterator[Run]:
    """Each run of a trace: its name, minimum RTT (ms) and rows (N, U, T, loss%)."""
    head = re.compile(r"^(\S+): \d+ MIs, .*min RTT ([0-9.]+) ms")
    name: str | None = None
    rtt = 0.0
    rows: dict[str, list[float]] = {}
    for line in text.splitlines():
        m = head.match(line)
        if m:
            if name:
                yield name, rtt, rows
            name, rtt, rows = m.group(1), float(m.group(2)), {}
        elif name and line.strip():
            key, *vals = line.split()
            rows[key] = [float(v) for v in vals]
    if name:
        yield name, rtt, rows


def fires(rtt: float, rows: dict[str, list[float]], rc: ReboundConfig) -> list[int]:
    n, out = rows["N"], []
    rule = Rebound(rc, ControllerConfig(max_streams=64), int(n[0]))
    for k in range(len(n)):
        bps, loss = rows["T"][k] * 1e6, rows["loss%"][k] / 100
        sv = SignalVector(
            t=k + 1.0, mi_s=1.0, streams=int(n[k]), throughput_bps=bps, goodput_bps=bps,
            loss_rate=loss, rtt_ms=rtt, min_rtt_ms=rtt, rtt_gradient=0.0, rtt_ratio=1.0,
        )  # fmt: skip
        rule.current = int(n[k])
        nxt = int(n[k + 1]) if k + 1 < len(n) else int(n[k])
        if rule.step(nxt, sv) != nxt:
            out.append(k)
    return out


def main(argv: list[str]) -> int:
    opts = [a for a in argv[1:] if "=" in a]
    rc = ReboundConfig.parse(",".join(opts)) if opts else ReboundConfig()
    total = 0
    for name, rtt, rows in runs(Path(argv[0]).read_text()):
        f = fires(rtt, rows, rc)
        total += bool(f)
        print(f"{name}: {'fires at MI ' + ', '.join(map(str, f)) if f else 'never fires'}")
    print(f"{total} runs where it fires")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
