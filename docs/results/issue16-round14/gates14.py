"""Round 14 gates (simulator, deterministic networks; a screen for obvious breakage, not a result).

Rebuilt in round 14 (round 10's gates.py lived outside the repository and was lost); the
three checks keep round 10's meaning:

1. ramp: paper-fig1 (1 Gbit/s, 40 ms, 50 Mbit/s per stream), nothing else on it: from the initial count the first
   four decisions are +5 (2, 7, 12, 17, 22: fig1's ramp).
2. frees: the same path for 40 MIs: the mean stream count of the last 10 MIs lies within
   [0.5, 1.5] x the simulator's utility-optimal fixed N (it does not keep every stream it
   ramped to, nor collapse).
3. adds: the same path with a history held at N0 in {1, 2, 6, 12, 16} for 8 MIs (every
   decision ignored), then the policy decides from target N0: its first decision must add.
   (fig3's failure: a third transfer kept at 2 streams on a stationary history.)
4. fig3 in miniature: tests/unit/test_ppo.py's ``_shared_link`` sequence (a link another
   transfer fills for 15 MIs, free afterwards): the count after 45 MIs is 18-24.

Usage: PYTHONPATH=/work/main python3 gates14.py SPEC [SPEC ...]; exit 1 if any fails.
"""

from __future__ import annotations

import sys

import numpy as np

from policy.base import make_controller
from tests.unit.test_ppo import _shared_link
from train.sim import SimConfig, Simulator, fixed_params

CFG = SimConfig()


def _sim(seed: int = 7) -> Simulator:
    sim = Simulator(1, CFG, seed=seed)
    sim.reset(np.ones(1, dtype=bool), fixed_params(1, cap=50e6))
    return sim


def run(spec: str, hold: int | None = None, mis: int = 40) -> list[int]:
    """Streams per MI (the count in force during that MI)."""
    c = make_controller(spec)
    sim = _sim()
    n = c.initial()
    if hold is not None:
        n = hold
    out = []
    for t in range(mis):
        m = sim.step(np.array([float(n)]))
        out.append(int(n))
        d = c.decide(m.signal(0, float(t + 1), CFG.mi_s))
        if hold is not None and t < 7:
            c.target = hold  # type: ignore[attr-defined]
            continue
        n = d
    return out


def gates(spec: str) -> tuple[bool, str]:
    ramp = run(spec, mis=6)
    ok_ramp = all(b - a == 5 for a, b in zip(ramp[:5], ramp[1:5], strict=False))
    sim = _sim()
    n_opt = float(sim.optimum()[0][0])
    long = run(spec, mis=40)
    tail = float(np.mean(long[-10:]))
    ok_free = 0.5 * n_opt <= tail <= 1.5 * n_opt
    adds = {}
    for n0 in (1, 2, 6, 12, 16):
        h = run(spec, hold=n0, mis=9)
        adds[n0] = h[8] - n0
    ok_add = all(v > 0 for v in adds.values())
    c = make_controller(spec)
    n = c.initial()
    for t in range(1, 46):
        n = c.decide(_shared_link(n, t))
    ok_mini = 18 <= n <= 24
    text = (
        f"ramp {ramp[:5]} {'ok' if ok_ramp else 'FAIL'}; "
        f"frees: last-10 mean {tail:.1f} (optimum {n_opt:.0f}) {'ok' if ok_free else 'FAIL'}; "
        f"adds after hold {adds} {'ok' if ok_add else 'FAIL'}; "
        f"fig3 in miniature ends at {n} {'ok' if ok_mini else 'FAIL'}"
    )
    return ok_ramp and ok_free and ok_add and ok_mini, text


def main() -> int:
    bad = 0
    for spec in sys.argv[1:]:
        ok, text = gates(spec)
        print(f"{'PASS' if ok else 'FAIL'} {spec}: {text}")
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
