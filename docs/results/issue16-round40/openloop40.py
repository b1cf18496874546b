"""Round 40 rule 1's open-loop replay: a judge fed another policy's logged MIs.

    python3 docs/results/issue16-round40/openloop40.py JUDGE_OPTIONS LOG [LOG ...]

Each LOG is one run's jsonl log (``.../logs/ppo/r1-t1.jsonl``). MI by MI, the logged signal
vector goes to :class:`policy.judge.AddJudge` with the next logged count as the proposal;
where the judge returns another count, the log no longer says what would have followed.
The first such MI is still taken (its verdict reads the next logged MI, a count the judge
did not choose: an approximation), and the replay stops at the second. Printed per log: the
counts and utilities that ran, the judge's counts, its mode and its paid / unpaid / kept
tallies. Rule 1 quotes its output for ``per_step=1,keep_band=0.2,hold=0`` on round 39's
runs (/work/runs/r39: gen-v7-v01, hand-lan-capped, hand-lossy-long).
"""

from __future__ import annotations

import sys
from pathlib import Path

from policy.base import ControllerConfig
from policy.judge import AddJudge, JudgeConfig
from policy.utility import utility_of
from train.replay import records


def replay(options: str, log: Path) -> str:
    """One log's line: what ran, and what the judge with ``options`` returned."""
    rows = records(log)
    judge = AddJudge(JudgeConfig.parse(options), ControllerConfig(max_streams=64), rows[0].streams)
    out: list[int] = []
    departures = 0
    for i, s in enumerate(rows[:-1]):
        out.append(judge.step(rows[i + 1].streams, s))
        if out[-1] != rows[i + 1].streams:
            departures += 1
            if departures > 1:
                break
    ran = rows[: len(out) + 1]
    return (
        f"{log.parts[-4]} ran {[r.streams for r in ran]} u {[round(utility_of(r)) for r in ran]} "
        f"judge {out} {judge.mode} paid {judge.paid} unpaid {judge.unpaid} kept {judge.kept}"
    )


if __name__ == "__main__":
    for path in sys.argv[2:]:
        print(replay(sys.argv[1], Path(path)))
