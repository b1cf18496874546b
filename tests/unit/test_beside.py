"""scripts/beside.sh, dry: one block is one evaluate of the candidate beside ``ppo`` under the
testbed lock, then the verdict with the block's declared options and rule 19 (``--as-base``)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "beside.sh"
CAND = "ppo:policy/weights/candidates/round59e.pt"


def _dry(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "DRY": "1", "WT": str(ROOT), "R": str(tmp_path / "r"), **env}
    return subprocess.run(
        ["bash", str(SCRIPT), *args], env=full, capture_output=True, text=True, check=False
    )


def test_a_block_is_one_invocation_then_its_verdict(tmp_path: Path) -> None:
    p = _dry(
        tmp_path, "dev", "2", CAND, "--scenario-file", "configs/sets/short-shared.txt",
        "--reference", "docs/results/gen-v1-validation",
        VERDICT="--noninferior 0.05 --clear-loss 0.05",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    ev, tr, vd = [line[2:] for line in p.stdout.splitlines() if line.startswith("+ ")]
    r = tmp_path / "r"
    assert ev == (
        "flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate --scenario-file "
        "configs/sets/short-shared.txt --reference docs/results/gen-v1-validation "
        f"--policy {CAND} --policy ppo --repeat 2 --out {r}/dev --json {r}/dev.json"
    )
    assert tr == f"python3 -m lab.trace {r}/dev > {r}/dev-trace.txt"  # committed as text
    assert vd == (
        "python3 -m train.verdict --min-ustar 10 --noninferior 0.05 --clear-loss 0.05 "
        f"--as-base {r}/dev {r}/dev.json {CAND} ppo"
    )
    assert not r.exists()  # dry makes nothing


def test_a_block_without_its_arguments_is_refused(tmp_path: Path) -> None:
    p = _dry(tmp_path, "dev", "2", CAND)  # no scenarios
    assert p.returncode == 2 and "BLOCK REPEAT CANDIDATE" in p.stderr
    p = _dry(tmp_path, "dev", "two", CAND, "--suite", "gen-v18")
    assert p.returncode == 2 and "REPEAT must be a positive count" in p.stderr
    p = _dry(tmp_path, "dev", "2", CAND, "--suite", "gen-v18", R="")
    assert p.returncode != 0 and "run directory" in p.stderr
