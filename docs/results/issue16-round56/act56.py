"""Round 56: how the runs of one gen-v16 scenario ran (the count after each MI) and where each
would part from the other policy's decisions (train.replay.differs, closed loop).
    PYTHONPATH=. python3 docs/results/issue16-round56/act56.py /work/runs/r56/k55-test/gen-v16-test/gen-v16-t07
"""

import sys
from pathlib import Path

from train.replay import differs, records

K = "ppo:policy/weights/candidates/round55.pt"
# The pair by its file: since round 56 shipped K55, plain "ppo" is K55 (the logs keep the
# directory "ppo" they were written under, when it was round 45's bundle).
PAIR = "ppo:policy/weights/candidates/round45.pt"
D = Path(sys.argv[1])
for logs, other, who, whom in (
    ("ppo-policy-weights-candidates-round55.pt", PAIR, "K55", "ppo"),
    ("ppo", K, "pair", "K55"),
):
    for f in sorted((D / "logs" / logs).glob("r*-t*.jsonl")):
        ran = [s.streams for s in records(f, steady=True)]
        would, n = differs(other, f)
        first = next(
            (i for i, (a, b) in enumerate(zip(would, ran[1:], strict=False)) if a != b), None
        )
        print(f"{who} {f.stem}: {n} decisions differ from {whom}'s, first after MI {first}")
        print(f"  ran   {ran}")
        if first is not None:
            print(f"  other {ran[: first + 1] + would[first:]}")
