"""scripts/chain-lib.sh: a failed block whose runs all replay as the shipped policy is that
policy's reading (evaluation rule 21), and one run it would not make keeps it the candidate's."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.unit.test_motion_replay import own_rows, write_log

ROOT = Path(__file__).resolve().parents[2]


def _reading(tmp_path: Path, run: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "R": str(tmp_path / "r"), "WT": str(ROOT), "H": "ppo"}
    (tmp_path / "r").mkdir(exist_ok=True)
    cmd = f'cd {ROOT} && source scripts/chain-lib.sh && shipped_reading fig3x "{run}" cand'
    return subprocess.run(["bash", "-c", cmd], env=env, capture_output=True, text=True, check=False)


def test_a_block_the_shipped_policy_made_is_its_reading(tmp_path: Path) -> None:
    rows = own_rows()
    logs = tmp_path / "run" / "fig3x" / "logs" / "cand"
    write_log(logs / "r1-t1.jsonl", rows)
    write_log(logs / "r1-t2.jsonl", rows)
    p = _reading(tmp_path, tmp_path / "run")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "its reading (rule 21)" in (tmp_path / "r" / "verdicts.txt").read_text()
    # one transfer at counts the shipped policy would not choose: the candidate's block
    write_log(logs / "r1-t2.jsonl", [{**r, "streams": 3} for r in rows])
    assert _reading(tmp_path, tmp_path / "run").returncode == 1
