"""What a perfect start would be worth: the oracle's first K MIs spliced before a policy's rest.

    python3 docs/results/issue16-round40/splice40.py SET_DIR REFERENCE_DIR POLICY [K ...]

SET_DIR is an ``xfer evaluate --out`` set directory where ``--policy oracle`` ran beside
POLICY (round 39's /work/runs/r39/val7/gen-v7-validation: ``logs/fixed-N*`` and
``logs/ppo``); REFERENCE_DIR the stored yardstick (U*). For each scenario and each K, run i
of the oracle's MIs 1..K followed by run i of POLICY's MIs K+1.. is scored as one run
(``lab.metrics.intervals_mean_utility``: ``run_mean_utility``'s weighting over the
MIs' records) and divided by U*; runs are averaged. An offline bound,
not a run: after the splice the policy's state and the path's would differ from what its
own start left, so it says how much of the ratio the first K MIs hold, no more.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from lab.metrics import intervals_mean_utility as score
from lab.runlog import read_intervals


def main(set_dir: Path, ref: Path, policy: str, ks: list[int]) -> None:
    print(f"| scenario | N* | {policy} | " + " | ".join(f"oracle's first {k}" for k in ks) + " |")
    print("|---|---|---|" + "---|" * len(ks))
    for scenario in sorted(p for p in set_dir.iterdir() if (p / "logs").is_dir()):
        best = json.loads((ref / f"{scenario.name}.json").read_text())["scenarios"]
        (entry,) = best.values()
        n, ustar = entry["best_fixed"]["utility_streams"], entry["best_fixed"]["mean_utility"]
        oracle = [
            read_intervals(f)
            for f in sorted((scenario / "logs" / f"fixed-{n}").glob("r*-t1.jsonl"))
        ]
        mine = [read_intervals(f) for f in sorted((scenario / "logs" / policy).glob("r*-t1.jsonl"))]
        runs = list(zip(oracle, mine, strict=False))
        alone = sum(score(p) for _, p in runs) / len(runs) / ustar
        cells = [sum(score(o[:k] + p[k:]) for o, p in runs) / len(runs) / ustar for k in ks]
        print(
            f"| {scenario.name} | {n} | {alone:.3f} | "
            + " | ".join(f"{c:.3f}" for c in cells)
            + " |"
        )


if __name__ == "__main__":
    main(
        Path(sys.argv[1]),
        Path(sys.argv[2]),
        sys.argv[3],
        [int(k) for k in sys.argv[4:]] or [3, 5, 10],
    )
