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

from policy.base import ControllerConfig, make_controller
from train.sim import SimConfig, fixed_params
from train.simeval import run_episodes, summarise

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
    "hand-bbr-shared-1g": dict(capacity=1e9, rtt=0.03, buffer=0.1, cc=1, comp_streams=2,
                               comp_loss=0.04),
    "hand-bbr-1/4": dict(capacity=1e9, rtt=0.03, buffer=0.1, cc=1, comp_streams=2,
                         comp_loss=0.04, comp_bbr_burst=0.003, comp_bbr_burst_step=0.0035),
    "v04-like": dict(capacity=798e6, rtt=0.0018, buffer=0.3, cc=1, comp_streams=3, comp_loss=0.05),
    "v08-like": dict(capacity=1.161e9, rtt=0.0005, buffer=0.8, cc=1, comp_streams=1,
                     comp_loss=0.01, cap=50e6),
}  # fmt: skip
for world, net in worlds.items():
    p = fixed_params(8, **{**burst, **net})
    for name, spec in specs.items():
        r = run_episodes(
            lambda spec=spec: make_controller(spec, ControllerConfig(max_streams=64)),
            p, 30, 11, SimConfig(p_competing_at_start=1.0),
        )  # fmt: skip
        rows = [summarise(r, i) for i in range(8)]
        ratios = [x["utility_ratio"] for x in rows]
        s = "".join(
            "0123456789abcdefghijklmnopqrstuvwxyz"[min(int(x), 35)] for x in r["streams"][:, 0]
        )
        print(f"{world:19s} {name:13s} ratio {np.mean(ratios):.3f} min {min(ratios):.3f} n {s}")
