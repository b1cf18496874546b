"""Round 39: where the shipped policy loses against the oracle, by time: its mean utility over
MIs 1-10 (the start-up, before any rival's phase is steady) and over MIs 11-30, each divided
by the oracle's (the stored best fixed N run again, same scenario, same invocation) in the
same MIs, runs pooled. Read from the runs' --json-stream logs.
python3 window39.py RUN_DIR [RUN_DIR ...]   (an xfer evaluate --out SET directory)"""

import json
import sys
from pathlib import Path

from lab.metrics import intervals_mean_utility
from lab.runlog import read_intervals

SPLIT = 10


def windows(logs: Path) -> tuple[float, float, float, float]:
    """Mean utility over MIs 1..SPLIT, SPLIT+1.., and all, runs pooled; and the mean stream
    count over MIs SPLIT+1.. (each log read once)."""
    first: list[dict] = []
    rest: list[dict] = []
    for f in sorted(logs.glob("r*-t1.jsonl")):
        mis = read_intervals(f)
        first += mis[:SPLIT]
        rest += mis[SPLIT:]
    streams = sum(e["streams"] for e in rest) / len(rest)
    return (
        intervals_mean_utility(first),
        intervals_mean_utility(rest),
        intervals_mean_utility(first + rest),
        streams,
    )


print(
    f"| scenario | N* | oracle U, MIs 1-{SPLIT} / {SPLIT + 1}- | ppo / oracle, MIs 1-{SPLIT} "
    f"| MIs {SPLIT + 1}- | whole run | ppo streams, MIs {SPLIT + 1}- |"
)
print("|---|---|---|---|---|---|---|")
for d in sys.argv[1:]:
    # the stored U* of each scenario (the set's evaluate.json): U* < 10 is not scored, as in
    # every table of the rounds
    rows = json.loads((Path(d) / "evaluate.json").read_text())["scenarios"]
    ustar = {Path(k).stem: r["best_fixed"]["mean_utility"] for k, r in rows.items()}
    for scn in sorted(p for p in Path(d).iterdir() if (p / "summary.json").is_file()):
        if ustar[scn.name] < 10:
            continue
        ev = json.loads((scn / "experiment.json").read_text())
        fixed = [p for p in ev["policies"] if p.startswith("fixed:")]
        if len(fixed) != 1 or "ppo" not in ev["policies"]:
            continue
        n = fixed[0].partition(":")[2]
        o = windows(scn / "logs" / f"fixed-{n}")
        p = windows(scn / "logs" / "ppo")
        print(
            f"| {scn.name} | {n} | {o[0]:.1f} / {o[1]:.1f} | {p[0] / o[0]:.2f} "
            f"| {p[1] / o[1]:.2f} | {p[2] / o[2]:.2f} | {p[3]:.1f} |"
        )
