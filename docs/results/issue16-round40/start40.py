"""Round 40 rule 6's table: ``start:n=N*,mis=3:ppo`` beside ``ppo``, one JSON per scenario.

    python3 docs/results/issue16-round40/start40.py JSON [JSON ...]

Each JSON is one ``xfer evaluate --json`` output of ``start40.sh`` (one gen-v7 scenario, the
start spec and ``ppo``, 3 runs). Printed: per scenario N, each policy's ratio and runs and
mean streams, and the set's mean and minimum of each.
"""

from __future__ import annotations

import json
import statistics as st
import sys
from pathlib import Path


def _cell(c: dict) -> str:
    """One policy's ratio, its runs and its mean stream count."""
    return f"{c['utility_ratio']:.3f} {c['run_ratios']} n {c['mean_streams']:.1f}"


def main(paths: list[Path]) -> None:
    print("| scenario | N* | start (N* for 3 MIs) [runs] n | ppo [runs] n | start - ppo |")
    print("|---|---|---|---|---|")
    starts, ppos = [], []
    for path in paths:
        (row,) = json.loads(path.read_text())["scenarios"].values()
        ctl = row["controllers"]
        spec = next(k for k in ctl if k.startswith("start:"))
        s, p = ctl[spec], ctl["ppo"]
        starts.append(s["utility_ratio"])
        ppos.append(p["utility_ratio"])
        name = path.stem.removeprefix("st-")
        n = spec.split("n=")[1].split(",")[0]
        diff = s["utility_ratio"] - p["utility_ratio"]
        print(f"| gen-v7-{name} | {n} | {_cell(s)} | {_cell(p)} | {diff:+.3f} |")
    print(f"\nstart: mean {st.mean(starts):.3f} min {min(starts):.3f}; "
          f"ppo: mean {st.mean(ppos):.3f} min {min(ppos):.3f}")  # fmt: skip


if __name__ == "__main__":
    main([Path(p) for p in sys.argv[1:]])
