"""scripts/chain-lib.sh: a failed block whose runs all replay as the shipped policy is that
policy's reading (evaluation rule 21), and one run it would not make keeps it the candidate's."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from policy.base import ControllerConfig, make_controller
from policy.signals import SignalVector

ROOT = Path(__file__).resolve().parents[2]


def _log(path: Path, rows: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"event": "interval", **r}) + "\n" for r in rows))


def _shipped_rows() -> list[dict[str, object]]:
    """A 20-MI transfer whose counts are the shipped policy's own answers."""
    c = make_controller("ppo", ControllerConfig(max_streams=64))
    n, rows = c.initial(), []
    for t, loss in enumerate([0.0] * 6 + [0.05] * 8 + [0.0] * 6):
        s = SignalVector(
            t=t + 1.0, mi_s=1.0, streams=n, throughput_bps=1e7 * n, goodput_bps=1e7 * n,
            loss_rate=loss, rtt_ms=30.0, min_rtt_ms=30.0, rtt_gradient=0.0, rtt_ratio=1.0,
            cc="cubic",
        )  # fmt: skip
        rows.append({**s.to_dict(), "utility": 0.0, "action": 0})
        n = c.decide(s)
    return rows


def _reading(tmp_path: Path, run: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "R": str(tmp_path / "r"), "WT": str(ROOT), "H": "ppo"}
    (tmp_path / "r").mkdir(exist_ok=True)
    cmd = f'cd {ROOT} && source scripts/chain-lib.sh && shipped_reading fig3x "{run}" cand'
    return subprocess.run(["bash", "-c", cmd], env=env, capture_output=True, text=True, check=False)


def test_a_block_the_shipped_policy_made_is_its_reading(tmp_path: Path) -> None:
    rows = _shipped_rows()
    logs = tmp_path / "run" / "fig3x" / "logs" / "cand"
    _log(logs / "r1-t1.jsonl", rows)
    _log(logs / "r1-t2.jsonl", rows)
    p = _reading(tmp_path, tmp_path / "run")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "its reading (rule 21)" in (tmp_path / "r" / "verdicts.txt").read_text()
    # one transfer at counts the shipped policy would not choose: the candidate's block
    _log(logs / "r1-t2.jsonl", [{**r, "streams": 3} for r in rows])
    assert _reading(tmp_path, tmp_path / "run").returncode == 1
