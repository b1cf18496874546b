"""Round 51's amended rule 3: the scenarios of an ``xfer evaluate`` block where a candidate played
the shipped pair in every MI of every run (its logs replayed closed-loop under plain ``ppo``
reproduce every count, ``train.replay.differs``: an A/A reading). One name per line.

    PYTHONPATH=. python3 docs/results/issue16-round51/aa51.py BLOCK_DIR CAND_LOG_DIRNAME
"""

import sys
from pathlib import Path

from train.replay import differs

block, cand = Path(sys.argv[1]), sys.argv[2]
for scen in sorted(p for p in block.iterdir() if (p / "logs" / cand).is_dir()):
    logs = sorted((scen / "logs" / cand).glob("r*-t1.jsonl"))
    if logs and all(differs("ppo", f)[1] == 0 for f in logs):
        print(scen.name)
