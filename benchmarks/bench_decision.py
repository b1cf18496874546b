"""Decision latency of the ``ppo`` controller (features + network), MLP vs Transformer.

Run: ``python3 benchmarks/bench_decision.py [--n 5000] [--checkpoint PATH]``

Prints p50 / p99 / max of one ``decide()`` call (a :class:`SignalVector` in, a target out)
for the Table I MLP and the Transformer option (randomly initialised, same shapes as the
trained ones), and for the shipped checkpoint if present. The peer measured in the same run
is the feature computation alone (what any controller that uses the history would pay);
the target is p99 < 1 ms.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from policy.base import ControllerConfig
from policy.features import FeatureConfig, FeatureTracker
from policy.ppo import (
    DEFAULT_CHECKPOINT,
    ActorCritic,
    PPOController,
    mlp_arch,
    save_checkpoint,
    transformer_arch,
)
from policy.signals import SignalVector


def _signals(n: int) -> list[SignalVector]:
    rng = np.random.default_rng(0)
    out = []
    for i in range(n):
        thr = float(rng.uniform(1e8, 1e9))
        out.append(
            SignalVector(
                t=i + 1.0,
                mi_s=1.0,
                streams=int(rng.integers(1, 65)),
                throughput_bps=thr,
                goodput_bps=thr,
                loss_rate=float(rng.uniform(0, 1e-3)),
                rtt_ms=45.0,
                min_rtt_ms=40.0,
                rtt_gradient=float(rng.normal(0, 0.01)),
                rtt_ratio=1.1,
            )  # fmt: skip
        )
    return out


def _percentiles(samples: list[float]) -> tuple[float, float, float]:
    a = np.asarray(samples) * 1e3
    return float(np.percentile(a, 50)), float(np.percentile(a, 99)), float(a.max())


def time_controller(path: Path, sigs: list[SignalVector]) -> tuple[float, float, float]:
    c = PPOController(str(path), ControllerConfig())
    for s in sigs[:200]:  # warm-up
        c.decide(s)
    dt = []
    for s in sigs:
        t0 = time.perf_counter()
        c.decide(s)
        dt.append(time.perf_counter() - t0)
    return _percentiles(dt)


def time_features(sigs: list[SignalVector]) -> tuple[float, float, float]:
    tr = FeatureTracker(FeatureConfig())
    dt = []
    for s in sigs:
        t0 = time.perf_counter()
        tr.push(s)
        dt.append(time.perf_counter() - t0)
    return _percentiles(dt)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5000, help="decisions per model")
    ap.add_argument("--checkpoint", type=Path, default=DEFAULT_CHECKPOINT)
    args = ap.parse_args()
    torch.set_num_threads(1)
    sigs = _signals(args.n)
    f = FeatureConfig()
    rows: list[tuple[str, tuple[float, float, float]]] = [
        ("features only (peer)", time_features(sigs))
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for name, arch in [
            ("mlp [512, 512] tanh", mlp_arch(f)),
            ("transformer d64 x2", transformer_arch(f)),
        ]:
            p = Path(tmp) / "m.pt"
            save_checkpoint(p, ActorCritic(arch), {})
            rows.append((name, time_controller(p, sigs)))
    if args.checkpoint.exists():
        rows.append((f"shipped {args.checkpoint.name}", time_controller(args.checkpoint, sigs)))
    peer = rows[0][1][0]
    print(f"decision latency over {args.n} decide() calls, 1 torch thread")
    print(f"{'model':28} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'p50/peer':>9} {'p99<1ms':>8}")
    for name, (p50, p99, mx) in rows:
        ok = "yes" if p99 < 1.0 else "NO"
        print(f"{name:28} {p50:8.3f} {p99:8.3f} {mx:8.3f} {p50 / peer:9.1f} {ok:>8}")


if __name__ == "__main__":
    main()
