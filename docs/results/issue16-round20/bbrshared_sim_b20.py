"""hand-bbr-shared-1g in the simulator: does it reproduce the testbed's 1-stream retreat?"""
import numpy as np
from policy.base import ControllerConfig, make_controller
from train.sim import SimConfig, fixed_params
from train.simeval import run_episodes, summarise
C = "policy/weights/candidates"
cfg = SimConfig()
specs = {"ppo": "ppo", "gd": "gd",
         "burst20-s4": "ppo:/work/runs/r20/train/onoff-burst20-s4/policy.pt", "burst20-s5": "ppo:/work/runs/r20/train/onoff-burst20-s5/policy.pt", "burst20-s6": "ppo:/work/runs/r20/train/onoff-burst20-s6/policy.pt"}
worlds = {
  "plain": dict(),
  "bursts": dict(comp_bbr_burst=0.14, comp_bbr_start_burst=0.16),
  "bursts+noise": dict(comp_bbr_burst=0.14, comp_bbr_start_burst=0.16, noise=0.05),
}
for wname, extra in worlds.items():
    p = fixed_params(8, capacity=1e9, rtt=0.03, buffer=0.1, cc=1, comp_streams=2, comp_loss=0.04, comp_flip_p=0.0, **extra)
    p.comp_streams[:] = 2
    for name, spec in specs.items():
        r = run_episodes(lambda: make_controller(spec, ControllerConfig(max_streams=64)), p, 30, 11, cfg)
        rows = [summarise(r, i) for i in range(8)]
        s = "".join("0123456789abcdefghijklmnopqrstuvwxyz"[min(int(x), 35)] for x in r["streams"][:, 0])
        print(f"{wname:13s} {name:9s} ratio {np.mean([x['utility_ratio'] for x in rows]):.3f} best {rows[0]['best_fixed_n']:2d} n {s}")
