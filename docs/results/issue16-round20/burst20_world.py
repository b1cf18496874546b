"""hand-bbr-shared-1g rebuilt with round 20's measured bursts (start 0.14, add 0.04, no slow
recovery): do the B20 seeds, trained on them, climb where the shipped policy sits?"""
import sys

import numpy as np

from policy.base import ControllerConfig, make_controller
from train.sim import SimConfig, fixed_params
from train.simeval import run_episodes, summarise

T = sys.argv[1] if len(sys.argv) > 1 else "/work/runs/r20/train"
specs = {"ppo": "ppo", "gd": "gd", "ppo:omit=1": "ppo:omit=1:policy/weights/default.pt"}
specs.update({f"burst20-s{s}": f"ppo:{T}/onoff-burst20-s{s}/policy.pt" for s in (4, 5, 6)})
for add in (0.0, 0.02, 0.04, 0.06):
    p = fixed_params(8, capacity=1e9, rtt=0.03, buffer=0.1, cc=1, comp_streams=2, comp_loss=0.04,
                     comp_flip_p=0.0, comp_bbr_burst=add, comp_bbr_start_burst=0.14,
                     comp_bbr_recovery=0.0)
    for name, spec in specs.items():
        r = run_episodes(lambda: make_controller(spec, ControllerConfig(max_streams=64)), p, 30, 11, SimConfig())
        rows = [summarise(r, i) for i in range(8)]
        s = "".join("0123456789abcdefghijklmnopqrstuvwxyz"[min(int(x), 35)] for x in r["streams"][:, 0])
        print(f"add {add:.2f} {name:11s} ratio {np.mean([x['utility_ratio'] for x in rows]):.3f} n {s}")
