import numpy as np
from policy.base import ControllerConfig, make_controller
from train.sim import SimConfig, fixed_params
from train.simeval import run_episodes, summarise
cfg = SimConfig()
for rec in (1.0, 0.0):
  for burst in (0.0, 0.14):
    p = fixed_params(8, capacity=1e9, rtt=0.03, buffer=0.1, cc=1, comp_streams=2, comp_loss=0.04, comp_flip_p=0.0,
                     comp_bbr_burst=burst, comp_bbr_start_burst=0.16 if burst else 0.0, comp_bbr_recovery=rec)
    for spec in ("fixed:1", "fixed:2", "schedule:2,7,12,17", "schedule:2,3,4,5,6,7,8,9,10,11,12,13,14,15,16", "schedule:2,1,1,1,1,6,6,6,11,11,11,16", "fixed:16"):
        r = run_episodes(lambda: make_controller(spec, ControllerConfig(max_streams=64)), p, 30, 11, cfg)
        rows = [summarise(r, i) for i in range(8)]
        u = r["u"][:, 0, 0]
        print(f"rec {rec} burst {burst} {spec:45s} ratio {np.mean([x['utility_ratio'] for x in rows]):.3f} best {rows[0]['best_fixed_n']} u[:6] {np.round(u[:6],1)}")
