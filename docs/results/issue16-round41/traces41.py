"""Round 41's traces: each run's counts per MI and how many of its MIs were short.

    python3 docs/results/issue16-round41/traces41.py SET_DIR [SET_DIR...] > traces41.txt

SET_DIR: ``xfer evaluate --out`` set directories (this round: /work/runs/r41/f7/gen-v7-validation,
/work/runs/r41/b7/gen-v7-validation, /work/runs/r41/fsit, /work/runs/r41/b2, /work/runs/r41/breno).
"""

from __future__ import annotations

import sys
from pathlib import Path

from lab.runlog import read_intervals


def code(n: int) -> str:
    """0-f in hex, then g = 16 ... z = 35 (35 and more read z)."""
    return f"{n:x}" if n < 16 else chr(ord("g") + min(n - 16, 19))


def main(dirs: list[str]) -> None:
    print("# counts per MI (0-f hex, g=16 ... z=35), from each run's --json-stream log; "
          "short MIs counted at the end")  # fmt: skip
    files = [f for d in dirs for f in sorted(Path(d).glob("**/logs/*/*.jsonl"))]
    if not files:  # round 45's test traces came out empty from a directory one level too high
        sys.exit(f"no run logs (*/logs/POLICY/*.jsonl) under {' '.join(dirs)}")
    for f in files:
        mis = read_intervals(f)
        counts = "".join(code(e["streams"]) for e in mis)
        short = sum(e["mi_s"] < 0.5 for e in mis)
        print(f"{f.parts[-4]:18s} {f.parts[-2]:22s} {f.name[:2]}  {counts}  mi_s<0.5: {short}")


if __name__ == "__main__":
    main(sys.argv[1:])
