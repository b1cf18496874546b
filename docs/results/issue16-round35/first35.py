"""Round 35: what each member asks on the first MI (2 streams, nothing decided yet) of every
logged run of a set. python3 first35.py SET_DIR [SET_DIR...]"""
import glob
import json
import sys

import numpy as np
from policy.base import ControllerConfig, make_controller
from policy.ppo import ACTIONS
from policy.signals import SignalVector

FIELDS = ("t", "mi_s", "streams", "throughput_bps", "goodput_bps", "loss_rate", "rtt_ms",
          "min_rtt_ms", "rtt_gradient", "rtt_ratio", "cc")
C = "policy/weights/candidates/"
MEMBERS = {"ppo-h": C + "hold-s2.pt", "ppo-o": C + "onoff-s4.pt",
           "bo-h": C + "hold-bo32-s2.pt", "bo-o": C + "onoff-bo32-s5.pt",
           "cl-h": C + "hold-cl34-s5.pt", "cl-o": C + "onoff-cl34-s4.pt"}
ACT = np.array(ACTIONS)
print(f"{'scenario':12s} {'run':10s} {'loss%':>6s} {'rtt/min ms':>12s} " + " ".join(f"{k:>11s}" for k in MEMBERS))
print(" " * 43 + "  (each: P(+5)/P(+1) argmax)")
for d in sys.argv[1:]:
    for scen in sorted(glob.glob(d + "/*/")):
        for f in sorted(glob.glob(scen + "logs/*/r*-t1.jsonl"))[:4]:
            with open(f) as fh:
                r = next(json.loads(line) for line in fh if '"interval"' in line)
            s = SignalVector(**{k: r[k] for k in FIELDS})
            cells = []
            for _k, p in MEMBERS.items():
                c = make_controller("ppo:" + p, ControllerConfig(max_streams=64))
                pr = c.probabilities(c.features.push(s))
                cells.append(f"{pr[0]:.2f}/{pr[1]:.2f} {ACT[int(np.argmax(pr))]:+d}")
            run = ("ppo" if "/ppo/" in f else "cand") + "-" + f.split("/")[-1][:2]
            print(f"{scen.rstrip('/').split('/')[-1]:12s} {run:10s} {r['loss_rate']*100:6.2f} {r['rtt_ms']:5.2f}/{r['min_rtt_ms']:5.2f} " + " ".join(f"{x:>11s}" for x in cells))
