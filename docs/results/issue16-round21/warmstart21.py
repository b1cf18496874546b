"""Round 21, descriptive: does the DAgger warm start (before PPO) climb beside a BBR flow where
the trained policy sits? hand-bbr-shared-1g rebuilt with the start burst and a quarter of the
add burst (calib21.txt: the testbed's scores), 8 networks x 30 MIs, seed 11.

Run: PYTHONPATH=. python3 docs/results/issue16-round21/warmstart21.py [TRAIN_DIR]
"""

import sys

import numpy as np
from world21 import HAND_BBR, play

from train.sim import fixed_params

T = sys.argv[1] if len(sys.argv) > 1 else "/work/runs/r21/train"
burst = dict(comp_bbr_burst=0.003, comp_bbr_burst_step=0.0035, comp_bbr_start_burst=0.14,
             comp_bbr_recovery=0.0)  # fmt: skip
p = fixed_params(8, **HAND_BBR, **burst)
for recipe in ("hold-burst21", "hold-burst21b"):
    for s in (2, 3, 4):
        for stage in ("warm_start", "policy"):
            ratios, n = play(f"ppo:{T}/{recipe}-s{s}/{stage}.pt", p)
            ratio = np.mean(ratios)
            print(f"{recipe:14s} s{s} {stage:10s} ratio {ratio:.3f} n {n}")
