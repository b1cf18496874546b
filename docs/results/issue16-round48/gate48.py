"""On the shipped pair's logs: the MIs at which K48's band (20-60 ms, not with our BBR, median
loss of 5 MIs >= 1 %) would be open; faithful up to the first opening (the pair decides before).

Usage, from the repository root:
    PYTHONPATH=. python3 docs/results/issue16-round48/gate48.py LOG.jsonl...
"""

import sys
from pathlib import Path

from policy.band import Band, BandConfig
from train.replay import records

if __name__ == "__main__":
    for f in sys.argv[1:]:
        recs = records(Path(f))
        b = Band(BandConfig.parse("min_rtt_ms=20,max_rtt_ms=60,not_cc=bbr,min_loss=0.01"), 3)
        opened = [i for i, r in enumerate(recs) if b.rows(r.min_rtt_ms, r.cc, r.loss_rate) == [2]]
        first = opened[0] if opened else "-"
        print(f"{Path(f).parts[-4][:26]:26s} {Path(f).name[:2]} first open MI {first} "
              f"open MIs {len(opened)} / {len(recs)}")  # fmt: skip
