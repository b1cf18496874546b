"""Round 35: the simulator's clone of gen-v2-v01/v06/v15 at fixed N (first MIs and steady),
with default parameters, and v06 again as the onoff recipe's LAN worlds are drawn (floor.toml:
a 64-packet queue floor, the testbed's, and congestion loss saturating at 0.09)."""
import numpy as np
from train.sim import MSS_BITS, SimConfig, Simulator, fixed_params

need = 64 * MSS_BITS / (1.676e9 * 0.00011)  # the testbed's 64-packet floor, in BDPs
W = {"v06": dict(capacity=1.676e9, rtt=0.00011, buffer=0.92, cc=1),
     "v06-floor": dict(capacity=1.676e9, rtt=0.00011, buffer=need, queue_extra=need - 0.92, cc=1, cong_sat=0.09),
     "v01": dict(capacity=2.604e9, rtt=0.00167, buffer=0.86, cc=2, bbr_own=1.0),
     "v15": dict(capacity=0.158e9, rtt=0.004, buffer=1.9, cc=0, loss=0.0023)}
for w, kw in W.items():
    for n in (1, 2, 3, 7):
        sim = Simulator(1, SimConfig(), 0)
        sim.reset(np.ones(1, dtype=bool), fixed_params(1, **kw))
        rows = []
        for t in range(12):
            m = sim.step(np.array([float(n)]))
            s = m.signal(0, float(t + 1), 1.0)
            rows.append(s)
        print(w, n, " ".join(f"{s.loss_rate*100:.2f}%/{s.throughput_bps/1e6:.0f}/{s.rtt_ratio:.2f}" for s in rows[:4]), "| steady", f"{np.mean([s.loss_rate for s in rows[4:]])*100:.2f}%", f"{np.mean([s.throughput_bps for s in rows[4:]])/1e6:.0f}")
