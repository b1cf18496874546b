import numpy as np
from policy.base import ControllerConfig, make_controller
from train.sim import SimConfig, fixed_params
from train.simeval import run_episodes, summarise
cfg = SimConfig()
worlds = {"start-only": dict(comp_bbr_start_burst=0.16), "add 0.05": dict(comp_bbr_burst=0.05, comp_bbr_start_burst=0.16),
          "add 0.14": dict(comp_bbr_burst=0.14, comp_bbr_start_burst=0.16)}
for wname, extra in worlds.items():
    p = fixed_params(8, capacity=1e9, rtt=0.03, buffer=0.1, cc=1, comp_streams=2, comp_loss=0.04, comp_flip_p=0.0, comp_bbr_recovery=0.0, **extra)
    for spec in ("ppo", "ppo:omit=1:policy/weights/default.pt", "gd"):
        r = run_episodes(lambda: make_controller(spec, ControllerConfig(max_streams=64)), p, 30, 11, cfg)
        rows = [summarise(r, i) for i in range(8)]
        s = "".join("0123456789abcdefghijklmnopqrstuvwxyz"[min(int(x), 35)] for x in r["streams"][:, 0])
        print(f"{wname:10s} {spec:38s} ratio {np.mean([x['utility_ratio'] for x in rows]):.3f} n {s}")
