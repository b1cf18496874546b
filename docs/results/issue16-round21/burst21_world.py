"""Round 21, descriptive: three worlds rebuilt in the simulator with the graded bursts beside a
BBR flow that round 20 measured (an add's burst 0.012 + 0.014 x added for one MI, start 0.14,
no slow recovery; full size at 500 packets of BDP and above, smaller below), and what each
policy does there. 8 networks x 30 MIs each (seed 11), mean utility ratio and one run's counts.

  hand-bbr-shared-1g  1 Gbit/s, 30 ms, 0.1 BDP, 2 BBR streams holding 4 % from the start
  hand-bbr-1/4        the same with the add burst at a quarter (calib21.txt: the testbed's scores)
  v04-like            798 Mbit/s, 1.8 ms, 0.3 BDP, 3 BBR streams holding 5 %, from the start
  v08-like            1.16 Gbit/s, 0.5 ms, 0.8 BDP, 50 Mbit/s per stream, 1 BBR stream at 1 %

Run: PYTHONPATH=. python3 docs/results/issue16-round21/burst21_world.py [TRAIN_DIR [RECIPE]]
(RECIPE: hold-burst21, the default, or hold-burst21b; the ensemble is onoff-s4 + its seeds)
"""

import sys

import numpy as np
from world21 import HAND_BBR, play

from train.sim import fixed_params

T = sys.argv[1] if len(sys.argv) > 1 else "/work/runs/r21/train"
C = "policy/weights/candidates"
RECIPE = sys.argv[2] if len(sys.argv) > 2 else "hold-burst21"
seeds = [f"{T}/{RECIPE}-s{s}/policy.pt" for s in (2, 3, 4)]
specs = {
    "ppo": "ppo",
    "gd": "gd",
    "hold-s2": f"ppo:{C}/hold-s2.pt",
    **{f"{RECIPE[4:]}-s{s}": f"ppo:{p}" for s, p in zip((2, 3, 4), seeds, strict=True)},
    "onoff-s4+3": "ensemble:" + "+".join([f"{C}/onoff-s4.pt", *seeds]),
}
burst = dict(comp_bbr_burst=0.012, comp_bbr_burst_step=0.014, comp_bbr_start_burst=0.14,
             comp_bbr_recovery=0.0, comp_bbr_burst_bdp=500.0, comp_flip_p=0.0)  # fmt: skip
worlds = {
    "hand-bbr-shared-1g": HAND_BBR,
    "hand-bbr-1/4": dict(**HAND_BBR, comp_bbr_burst=0.003, comp_bbr_burst_step=0.0035),
    "v04-like": dict(capacity=798e6, rtt=0.0018, buffer=0.3, cc=1, comp_streams=3, comp_loss=0.05),
    "v08-like": dict(capacity=1.161e9, rtt=0.0005, buffer=0.8, cc=1, comp_streams=1,
                     comp_loss=0.01, cap=50e6),
}  # fmt: skip
for world, net in worlds.items():
    p = fixed_params(8, **{**burst, **net})
    for name, spec in specs.items():
        ratios, s = play(spec, p)
        print(f"{world:19s} {name:13s} ratio {np.mean(ratios):.3f} min {min(ratios):.3f} n {s}")
