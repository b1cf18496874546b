"""Round 58 (README.md here), round 52's carry rule: which of K55's round-55 runs a candidate
would have made, decision for decision. Each K55 log (every transfer of every run) is replayed
closed-loop under the candidate (``train.replay.differs``); a run whose logs all replay with 0
differing decisions is the candidate's run. Printed per block and scenario: runs carried / runs,
and the differing decisions of the rest.

    PYTHONPATH=. python3 docs/results/issue16-round58/carry58.py SPEC K55_DIR [K55_DIR ...]
"""

import re
import sys
from collections import defaultdict
from pathlib import Path

from train.replay import differs

spec, dirs = sys.argv[1], sys.argv[2:]
for d in map(Path, dirs):
    runs: dict[tuple[str, str], list[int]] = defaultdict(list)
    for f in sorted(d.rglob("ppo-policy-weights-candidates-round55.pt/r*-t*.jsonl")):
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
