"""Round 21, descriptive: does the DAgger warm start (before PPO) climb beside a BBR flow where
the trained policy sits? hand-bbr-shared-1g rebuilt with the start burst and a quarter of the
add burst (calib21.txt: the testbed's scores), 8 networks x 30 MIs, seed 11.

Run: PYTHONPATH=. python3 docs/results/issue16-round21/warmstart21.py [TRAIN_DIR]
"""

import sys

import numpy as np

from policy.base import ControllerConfig, make_controller
from train.sim import SimConfig, fixed_params
from train.simeval import run_episodes, summarise

T = sys.argv[1] if len(sys.argv) > 1 else "/work/runs/r21/train"
net = dict(capacity=1e9, rtt=0.03, buffer=0.1, cc=1, comp_streams=2, comp_loss=0.04,
           comp_flip_p=0.0, comp_bbr_burst=0.003, comp_bbr_burst_step=0.0035,
           comp_bbr_start_burst=0.14, comp_bbr_recovery=0.0)  # fmt: skip
p = fixed_params(8, **net)
for recipe in ("hold-burst21", "hold-burst21b"):
    for s in (2, 3, 4):
        for stage in ("warm_start", "policy"):
            spec = f"ppo:{T}/{recipe}-s{s}/{stage}.pt"
            r = run_episodes(
                lambda spec=spec: make_controller(spec, ControllerConfig(max_streams=64)),
                p, 30, 11, SimConfig(p_competing_at_start=1.0),
            )  # fmt: skip
            ratio = np.mean([summarise(r, i)["utility_ratio"] for i in range(8)])
            n = "".join(
                "0123456789abcdefghijklmnopqrstuvwxyz"[min(int(x), 35)] for x in r["streams"][:, 0]
            )
            print(f"{recipe:14s} s{s} {stage:10s} ratio {ratio:.3f} n {n}")
