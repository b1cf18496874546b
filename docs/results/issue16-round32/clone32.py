"""Round 32 diagnostic: round 30's clone of gen-v6-v01 (clone30.py: our BBR streams paced at
47 Mbit/s on 1.243 Gbit/s, 107 ms, 0.13 BDP, a 6-stream BBR rival at 1.7 % plus 0.055 x our
share) with the slow join of added streams beside the rival (comp_bbr_join, in RTTs; the
testbed's 2-3 MIs). Prints the mean count of the last 10 of 40 MIs and the path.
python3 clone32.py SPEC [SPEC ...] (CLONE_JOIN: RTTs, default 12; CLONE_SHARE: 0.055)."""
import os
import re
import sys
import numpy as np
from policy.base import make_controller
from train.gates import _RIVAL_SIM
from train.sim import Simulator, fixed_params

share = float(os.environ.get("CLONE_SHARE", "0.055"))
join = float(os.environ.get("CLONE_JOIN", "12"))
for spec in sys.argv[1:]:
    sim = Simulator(1, _RIVAL_SIM, seed=7)
    sim.reset(np.ones(1, dtype=bool), fixed_params(
        1, capacity=1.243e9, rtt=0.1066, buffer=0.13, cc=2, cap=47e6, comp_streams=6,
        comp_loss=0.017, comp_flip_p=0.0, bbr_own=1.0, comp_bbr_share=share, comp_bbr_join=join))
    c = make_controller(spec)
    n, path = c.initial(), []
    for t in range(40):
        m = sim.step(np.array([float(n)]))
        path.append(int(n))
        n = c.decide(m.signal(0, float(t + 1), 1.0))
    tail = float(np.mean(path[-10:]))
    label = re.sub(r"/work/runs/r3[0-9]/|policy/weights/candidates/|/policy[.]pt|[.]pt", "", spec)
    print(f"join={join:g} last10={tail:5.1f} path={' '.join(map(str, path))}  {label}")
