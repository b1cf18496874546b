"""Action probabilities (+5,+1,0,-1,-5) of a member after a history held at N0 in a gate world."""
import sys
import numpy as np
from policy.base import make_controller
from train import gates
world = sys.argv[1]
for spec in sys.argv[2:]:
    row = []
    for n0 in (2, 4, 8):
        c = make_controller(spec)
        sim = gates.WORLDS[world]()
        for t in range(8):
            m = sim.step(np.array([float(n0)]))
            sig = m.signal(0, float(t + 1), 1.0)
            obs = c.features.push(sig)
            c.target = n0
        p = c.probabilities(obs)
        row.append(f"{n0}: " + " ".join(f"{x:.2f}" for x in p))
    print(spec.split("r30/")[-1][:40], " | ".join(row))
