"""W and ppo in the simulator on clones of gen-v6-v01 / gen-v4-v03 (long BBR paths, BBR rival)."""
import sys
import numpy as np
from policy.base import make_controller, ControllerConfig
from train.sim import SimConfig, fixed_params
from train.simeval import run_episodes

W = "warmup:cc=bbr:ensemble:policy/weights/candidates/hold-wu28-s2.pt+policy/weights/candidates/onoff-wu28-s4.pt"
specs = {"ppo": "ppo", "W": W}
specs.update(dict(a.split("=", 1) for a in sys.argv[1:]))
worlds = {
    "v6-v01 (1243M,107ms,q.13,cap47M,6 rivals 2%)": dict(capacity=1.243e9, rtt=0.1066, buffer=0.13, cc=2, cap=47e6, comp_streams=6, comp_loss=0.02),
    "v4-v03 (649M,195ms,q.19,cap50M,4 rivals 2%)": dict(capacity=0.649e9, rtt=0.1945, buffer=0.19, cc=2, cap=50e6, comp_streams=4, comp_loss=0.02, loss=0.00032),
    "v6-v04 (143M,182ms,q.57,cap15M,5 rivals 1%)": dict(capacity=0.143e9, rtt=0.182, buffer=0.57, cc=2, cap=15e6, comp_streams=5, comp_loss=0.01, loss=0.0039),
}
cfg = SimConfig(p_comp_bbr=1.0, bbr_own_loss="r18")
for name, kw in worlds.items():
    p = fixed_params(1, comp_flip_p=0.0, bbr_own=1.0, **kw)
    for lab, spec in specs.items():
        r = run_episodes(lambda: make_controller(spec, ControllerConfig(max_streams=64)), p, 40, 0, cfg)
        u = r["u"][:, 0, :]
        best = u[:, 1:].mean(axis=0)
        ratio = u[:, 0].mean() / best.max()
        print(f"{name} {lab:4s} nopt={r['n_opt'][0]:.0f} bestfix={best.argmax()+1} ratio={ratio:.3f} path={' '.join(str(int(x)) for x in r['streams'][:, 0])}")
