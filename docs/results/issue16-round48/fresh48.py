"""What K3 (inside the shipped warm-up) decides at MIs 5-12 of a recorded run if its history
started at that MI, from the logged count (offline: its first decision only).

Usage, from the repository root:
    PYTHONPATH=. python3 docs/results/issue16-round48/fresh48.py LOG.jsonl...
"""

import sys
from pathlib import Path

from policy.base import ControllerConfig, make_controller
from train.replay import records

K3 = "warmup:cc=bbr:ppo:policy/weights/candidates/hold-kick22-s3.pt"

if __name__ == "__main__":
    for f in sys.argv[1:]:
        recs, res = records(Path(f)), []
        for start in range(4, 12):
            c = make_controller(K3, ControllerConfig(max_streams=64))
            n = recs[start].streams
            c.inner.target = n  # the warm-up's inner ppo, at the logged count
            c.current = n
            res.append(f"{n}->{c.decide(recs[start])}")
        print(Path(f).parts[-4][:24], Path(f).name, " ".join(res))
