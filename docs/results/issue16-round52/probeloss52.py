"""Round 52: the 5-MI median loss when each ledger probe started, replaying SPEC on logs (``P`` in
``replay50.py``'s output), and the MI where a probe was kept. From the repository root:

    PYTHONPATH=. python3 docs/results/issue16-round52/probeloss52.py SPEC 'GLOB' ['GLOB' ...]
"""

import glob
import statistics as st
import sys
from pathlib import Path

from policy.base import ControllerConfig, make_controller
from train.replay import records

spec = sys.argv[1]
for pat in sys.argv[2:]:
    for f in sorted(glob.glob(pat)):
        recs = records(Path(f), steady=True)
        c = make_controller(spec, ControllerConfig(max_streams=64))
        led = c.ledger
        for i, r in enumerate(recs):
            b = (led.probes, led.kept)
            c.decide(r)
            a = (led.probes, led.kept)
            if a[0] > b[0]:
                L = [x.loss_rate for x in recs[max(0, i - 4) : i + 1]]
                print(
                    f.split("/work/runs/")[1][:48],
                    "MI",
                    i,
                    "n",
                    r.streams,
                    f"med5 loss {st.median(L) * 100:.3f}% rtt_ratio {r.rtt_ratio:.3f}",
                )
            if a[1] > b[1]:
                print("   kept at MI", i)
