"""Round 21: which add burst makes the simulator's hand-bbr-shared-1g score the testbed's
fixed controllers as the testbed did (M20, round 20: S+5 0.717, S+1 0.519, SJ 0.469, GD 0.702;
the shipped policy 0.31-0.39)? The start burst 0 or 0.14, the add burst at 0, 1/4 and 1/2 of
M20's loss fit (0.012 + 0.014 x added). 8 networks x 30 MIs, seed 11.

Run: PYTHONPATH=. python3 docs/results/issue16-round21/calib21.py
"""

import numpy as np
from world21 import HAND_BBR, play

from train.sim import fixed_params

S5 = "schedule:1,1,1,1,1,1,6,6,6,6,6,6,11,11,11,11,11,11,16,16,16,16,16,16,21,21,21,21,21,21"
S1 = "schedule:1,1,1,1,2,2,2,2,3,3,3,3,4,4,4,4,5,5,5,5,6,6,6,6,7,7,7,7,8,8,8,8"
SJ = "schedule:2,2,2,2,2,2,2,2,2,2,12,12,12,12,12,12,12,12,12,12,2,2,2,2,2,2,2,2,2,2"
print("testbed: S+5 0.717 S+1 0.519 SJ 0.469 gd 0.702 ppo 0.31-0.39")
for sb in (0.0, 0.14):
    for scale in (0.0, 0.25, 0.5):
        b = dict(
            comp_bbr_burst=0.012 * scale,
            comp_bbr_burst_step=0.014 * scale,
            comp_bbr_start_burst=sb,
            comp_bbr_recovery=0.0,
        )
        p = fixed_params(8, **HAND_BBR, **b)
        out = []
        for name, spec in (("S+5", S5), ("S+1", S1), ("SJ", SJ), ("gd", "gd"), ("ppo", "ppo")):
            ratios, counts = play(spec, p)
            s = counts if name == "ppo" else ""
            out.append(f"{name} {np.mean(ratios):.3f}")
        print(f"start {sb} addscale {scale}", " ".join(out), s)
