"""Screen table (round 32) (mean of class medians) with readable labels: python3 screentab32.py JSON."""
import json
import re
import sys

for f in sys.argv[1:]:
    d = json.load(open(f))
    for pol, v in d["screen"].items():
        m = v["median"]
        label = re.sub(r"/work/runs/r3[12]/|policy/weights/candidates/|/policy[.]pt|[.]pt", "", pol)
        cls = " ".join(f"{k[:8]}={x:.3f}" for k, x in m.items())
        print(f"{label:60s} {cls} mean={sum(m.values()) / len(m):.3f}")
