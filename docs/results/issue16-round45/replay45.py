"""Round 45: replay L45's two logged gen-v2-t04 runs (round 44) MI by MI under a ledger spec,
up to the first MI where it would have asked another count than the one that ran.

    python3 docs/results/issue16-round45/replay45.py /work/runs/r44/l45-test
"""

from __future__ import annotations

import sys
from pathlib import Path

from policy.base import ControllerConfig, make_controller
from train.replay import records

SPECS = ("ledger:seek=1,max_rtt_ms=20:ppo", "ledger:seek=1,max_rtt_ms=20,noise=2:ppo")


def main(run_dir: str) -> None:
    logs = Path(run_dir) / "gen-v2-t04" / "logs" / "ledger-seek-1-max_rtt_ms-20-ppo"
    for f in sorted(logs.glob("r*-t1.jsonl")):
        rows = records(f)
        ran = [s.streams for s in rows]
        for spec in SPECS:
            c = make_controller(spec, ControllerConfig(max_streams=64))
            asked: list[int] = []
            for i, s in enumerate(rows):
                asked.append(c.decide(s))
                if i + 1 < len(rows) and asked[-1] != ran[i + 1]:
                    break
            r = c.rule  # type: ignore[attr-defined]
            print(f"{f.name[:2]} {spec:42s} same for {len(asked) - 1:2d} MIs; ran "
                  f"{ran[: len(asked) + 1]} asked {asked}; undos {r.undos} vetoes {r.vetoes} "
                  f"seeks {r.seeks} dev {r.dev:.1f}")  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1])
