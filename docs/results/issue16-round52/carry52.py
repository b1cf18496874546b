"""Round 52's carry rule (README.md here): which of round 51's K51 runs K52 would have made, decision
for decision. Each K51 log (every transfer of every run) is replayed closed-loop under K52
(``train.replay.differs``); a run whose logs all replay with 0 differing decisions is K52's run.
Printed per block and scenario: runs carried / runs, and the differing decisions of the rest.

    PYTHONPATH=. python3 docs/results/issue16-round52/carry52.py K52_SPEC K51_DIR [K51_DIR ...]
"""

import re
import sys
from collections import defaultdict
from pathlib import Path

from train.replay import differs

spec, dirs = sys.argv[1], sys.argv[2:]
for d in map(Path, dirs):
    runs: dict[tuple[str, str], list[int]] = defaultdict(list)
    for f in sorted(d.rglob("ppo-policy-weights-candidates-round51.pt/r*-t*.jsonl")):
        scen = f.parents[2].name if f.parents[1].name == "logs" else d.name
        run = re.match(r"r(\d+)-", f.name)
        runs[(scen, run.group(1) if run else f.name)].append(differs(spec, f)[1])
    byscen: dict[str, list[tuple[str, list[int]]]] = defaultdict(list)
    for (scen, r), n in sorted(runs.items()):
        byscen[scen].append((r, n))
    for scen, rs in byscen.items():
        same = sum(1 for _, n in rs if not any(n))
        rest = " ".join(f"r{r}:{'+'.join(map(str, n))}" for r, n in rs if any(n))
        print(f"{d.name:14s} {scen:24s} carried {same}/{len(rs)} {rest}")
