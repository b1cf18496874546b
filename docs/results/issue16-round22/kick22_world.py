"""Round 22, descriptive: beside a BBR flow, does the kickstarted hold member climb where
hold-burst21b (the same recipe without the term) sits? Round 21's calibrated
hand-bbr-shared-1g world (the start burst and a quarter of the add burst, which scores the
testbed's fixed controllers within 0.06), 8 networks x 30 MIs, BBR on in every network.
The DAgger warm starts are the same for both recipes (the term acts only in PPO); round 21's
warmstart21.txt has them.

The last rows (added after the testbed runs) are the members inside E22 and F22: onoff-s4
alone and each ensemble.

Run: PYTHONPATH=. python3 docs/results/issue16-round22/kick22_world.py [TRAIN_DIR]
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "issue16-round21"))
from world21 import HAND_BBR, play  # noqa: E402

from train.sim import fixed_params  # noqa: E402

T = sys.argv[1] if len(sys.argv) > 1 else "/work/runs/r22"
C = "policy/weights/candidates"
burst = dict(comp_bbr_burst=0.003, comp_bbr_burst_step=0.0035, comp_bbr_start_burst=0.14,
             comp_bbr_recovery=0.0)  # fmt: skip
p = fixed_params(8, **HAND_BBR, **burst)
runs = [(f"hold-burst21b s{s}", f"ppo:{C}/hold-burst21b-s{s}.pt") for s in (2, 3, 4)]
runs += [(f"hold-kick22   s{s}", f"ppo:{T}/hold-kick22-s{s}/policy.pt") for s in (2, 3, 4)]
runs += [("onoff-s4", f"ppo:{C}/onoff-s4.pt")]
runs += [(f"onoff-s4 + kick22 s{s}", f"ensemble:{C}/onoff-s4.pt+{C}/hold-kick22-s{s}.pt") for s in (2, 3)]
runs += [("shipped", "ppo")]
for name, spec in runs:
    ratios, n = play(spec, p)
    print(f"{name:24s} ratio {np.mean(ratios):.3f} min {np.min(ratios):.3f} n {n}")
