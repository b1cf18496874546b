"""Round 35: each member's first-MI answer on the simulator's own clone of gen-v2-v06 (the onoff
recipe's LAN world: 64-packet floor, saturation 0.09, 50 us jitter)."""
import numpy as np
from policy.base import ControllerConfig, make_controller
from policy.ppo import ACTIONS
from train.sim import MSS_BITS, SimConfig, Simulator, fixed_params

need = 64 * MSS_BITS / (1.676e9 * 0.00011)
kw = dict(capacity=1.676e9, rtt=0.00011, buffer=need, queue_extra=need - 0.92, cc=1, cong_sat=0.09, rtt_jitter=0.00005)
sim = Simulator(1, SimConfig(), 0)
sim.reset(np.ones(1, dtype=bool), fixed_params(1, **kw))
s = sim.step(np.array([2.0])).signal(0, 1.0, 1.0)
print(s)
C = "policy/weights/candidates/"
for m in ("onoff-s4", "onoff-bo32-s5", "onoff-cl34-s4", "hold-cl34-s5"):
    c = make_controller("ppo:" + C + m + ".pt", ControllerConfig(max_streams=64))
    pr = c.probabilities(c.features.push(s))
    print(m, " ".join(f"{a:+d}:{p:.2f}" for a, p in zip(ACTIONS, pr, strict=False)))
