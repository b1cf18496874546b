"""The simulator's steady state (loss, our throughput) against N on the calibration worlds."""
import numpy as np
from train.sim import fixed_params, steady
W = {
 "gen-v6-v01": dict(capacity=1.243e9, rtt=0.1066, buffer=0.13, cc=2, cap=47e6, comp_streams=6, comp_loss=0.02, bbr_own=1.0),
 "1g-100ms-q0.13": dict(capacity=1e9, rtt=0.1, buffer=0.13, cc=2, comp_streams=6, comp_loss=0.02, bbr_own=1.0),
 "gen-v6-v04": dict(capacity=0.143e9, rtt=0.182, buffer=0.57, cc=2, cap=15e6, comp_streams=5, comp_loss=0.01, loss=0.0039, bbr_own=1.0),
}
ns = np.array([[1, 2, 4, 8, 12, 16]], dtype=float)
for k, kw in W.items():
    p = fixed_params(1, **kw)
    thr, loss, rtt, _ = steady(p, p.capacity, np.zeros(1), np.ones(1), ns)
    print(k, " | ".join(f"{int(n):>3}: {l*100:5.1f}% {t/1e6:5.0f}M" for n, l, t in zip(ns[0], loss[0], thr[0])))
