"""Round 30 rule T2: 40 MIs from the policy's initial count in gen-v6-v01's simulated clone
with the share term (our BBR streams paced at 47 Mbit/s on 1.243 Gbit/s, 107 ms, 0.13 BDP,
a 6-stream BBR rival holding 1.7 % plus 0.055 x our share of the link). Prints the path and
the mean count of the last 10 MIs. python3 clone30.py SPEC [SPEC ...] (share: CLONE_SHARE)."""
import os
import re
import sys
import numpy as np
from policy.base import make_controller
from train.gates import _RIVAL_SIM
from train.sim import Simulator, fixed_params

share = float(os.environ.get("CLONE_SHARE", "0.055"))
for spec in sys.argv[1:]:
    sim = Simulator(1, _RIVAL_SIM, seed=7)
    sim.reset(np.ones(1, dtype=bool), fixed_params(
        1, capacity=1.243e9, rtt=0.1066, buffer=0.13, cc=2, cap=47e6, comp_streams=6,
        comp_loss=0.017, comp_flip_p=0.0, bbr_own=1.0, comp_bbr_share=share))
    c = make_controller(spec)
    n, path, loss = c.initial(), [], []
    for t in range(40):
        m = sim.step(np.array([float(n)]))
        path.append(int(n)); loss.append(float(m.loss_rate[0]))
        n = c.decide(m.signal(0, float(t + 1), 1.0))
    tail = float(np.mean(path[-10:]))
    print(f"{'ok  ' if tail >= 8 else 'FAIL'} last10={tail:5.1f} loss@end={loss[-1]*100:.1f}% "
          f"path={' '.join(map(str, path))}  {re.sub(r'/work/runs/r30/|policy/weights/candidates/|/policy[.]pt|[.]pt', '', spec)}")
