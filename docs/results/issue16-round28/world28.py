"""Round 28, rule 0's diagnostic: stream counts in round 27's unit world (20 Mbit/s per
stream up to 1 Gbit/s, 1 % loss others cause) for the shipped policy and W, on 150-ms BBR
and cubic paths and a 40-ms BBR path. Usage: python3 world28.py W_SPEC"""

import sys

from tests.unit.test_guard import world_path

w = sys.argv[1]
for rtt, cc in ((150.0, "bbr"), (150.0, "cubic"), (40.0, "bbr"), (200.0, "bbr")):
    for name, spec in (("ppo", "ppo"), ("W", w)):
        _, path = world_path(spec, rtt, cc)
        print(f"{rtt:5.0f} ms {cc:5s} {name:3s} {' '.join(str(n) for n in path)}")
