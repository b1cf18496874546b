"""Round 55: which stored runs a candidate would have made, decision for decision (rule 17).
Each log under DIR/**/logs/POLICY_DIR/ (every transfer of every run) is replayed closed-loop
under SPEC (``train.replay.differs``); a run whose logs all replay with 0 differing decisions is
the candidate's run. Printed per scenario: runs carried / runs, then the differing decisions of
the rest (per transfer).

    PYTHONPATH=. python3 docs/results/issue16-round55/carry55.py SPEC POLICY_DIR DIR [DIR ...]
"""

import re
import sys
from collections import defaultdict
from pathlib import Path

from train.replay import differs

spec, logs, dirs = sys.argv[1], sys.argv[2], sys.argv[3:]
for d in map(Path, dirs):
    runs: dict[tuple[str, str], list[int]] = defaultdict(list)
    for f in sorted(d.rglob(f"{logs}/r*-t*.jsonl")):
        scen = f.parents[2].name if f.parents[1].name == "logs" else d.name
        run = re.match(r"r(\d+)-", f.name)
        runs[(scen, run.group(1) if run else f.name)].append(differs(spec, f)[1])
    byscen: dict[str, list[tuple[str, list[int]]]] = defaultdict(list)
    for (scen, r), n in sorted(runs.items()):
        byscen[scen].append((r, n))
    for scen, rs in byscen.items():
        same = sum(1 for _, n in rs if not any(n))
        rest = " ".join(f"r{r}:{'+'.join(map(str, n))}" for r, n in rs if any(n))
        print(f"{d.name:16s} {scen:26s} carried {same}/{len(rs)} {rest}")
