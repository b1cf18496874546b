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


def _paired(
    tmp_path: Path, verdicts: str, check: str = "paired_positive bbr3x"
) -> subprocess.CompletedProcess[str]:
    r = tmp_path / "r"
    r.mkdir(exist_ok=True)
    (r / "verdicts.txt").write_text(verdicts)
    env = {**os.environ, "R": str(r), "WT": str(ROOT), "H": "ppo"}
    cmd = f"cd {ROOT} && source scripts/chain-lib.sh && {check} && echo GO ON"
    return subprocess.run(["bash", "-c", cmd], env=env, capture_output=True, text=True, check=False)


def test_paired_positive_reads_the_last_verdict_and_stops_at_zero_or_below(tmp_path: Path) -> None:
    line = "n=2 (excluded none): cand 0.680, base 0.624; paired {} +- 0.018 (higher 2): PASS\n"
    p = _paired(tmp_path, line.format("-0.100") + line.format("+0.056"))
    assert p.returncode == 0 and "GO ON" in p.stdout, p.stdout + p.stderr
    assert "== bbr3x passed (paired +0.056)" in (tmp_path / "r" / "verdicts.txt").read_text()
    for d in ("+0.000", "-0.012"):
        p = _paired(tmp_path, line.format("+0.056") + line.format(d))
        assert p.returncode == 1 and "GO ON" not in p.stdout
        assert f"CHAIN STOPPED at bbr3x (paired {d} <= 0)" in p.stdout
    p = _paired(tmp_path, "evaluate failed\n")
    assert p.returncode == 1 and "no paired difference" in p.stdout


def test_paired_at_least_stops_below_its_bound_only(tmp_path: Path) -> None:
    line = "n=8 (excluded none): cand 0.876, base 0.862; paired {} +- 0.014 (higher 1): PASS\n"
    for d, ok in (("+0.014", True), ("-0.050", True), ("-0.051", False), ("-0.300", False)):
        p = _paired(tmp_path, line.format(d), "paired_at_least guardx -0.05")
        assert (p.returncode == 0 and "GO ON" in p.stdout) == ok, (d, p.stdout + p.stderr)
        if not ok:
            assert f"CHAIN STOPPED at guardx (paired {d} < -0.05)" in p.stdout
    p = _paired(tmp_path, "evaluate failed\n", "paired_at_least guardx -0.05")
    assert p.returncode == 1 and "no paired difference" in p.stdout


def test_a_guard_block_is_judged_by_the_scenario_floor(tmp_path: Path) -> None:
    r = tmp_path / "r"
    r.mkdir()
    env = {**os.environ, "R": str(r), "WT": str(ROOT), "H": "ppo:cand.pt", "DRY": "1"}
    cmd = f"cd {ROOT} && source scripts/chain-lib.sh && guard mid4x 3 --scenario-file S.txt"
    p = subprocess.run(["bash", "-c", cmd], env=env, capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    ev, _, vd = (line[2:] for line in p.stdout.splitlines() if line.startswith("+ "))
    assert "--scenario-file S.txt --policy ppo:cand.pt --policy ppo --repeat 3" in ev
    assert "--scenario-floor 0.05 --clear-loss 0.05 --guard --as-base" in vd
    assert "noninferior" not in vd


def test_enter_goes_to_the_worktree_and_refuses_one_python_does_not_import_from(
    tmp_path: Path,
) -> None:
    r = tmp_path / "r"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    cmd = f'source "{ROOT}/scripts/chain-lib.sh" && enter && pwd && echo "$PYTHONPATH"'
    p = subprocess.run(
        ["bash", "-c", cmd], env={**env, "WT": str(ROOT), "R": str(r)},
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == [str(ROOT), str(ROOT)] and r.is_dir()
    p = subprocess.run(
        ["bash", "-c", cmd], env={**env, "WT": str(tmp_path), "R": str(r)},
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert p.returncode == 2 and "AssertionError" in p.stderr  # xfer is not imported from there
    p = subprocess.run(
        ["bash", "-c", cmd], env={**env, "R": str(r)}, cwd=tmp_path,
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert p.returncode != 0 and "frozen worktree" in p.stderr


def test_aa_floor_prints_round_64s_on_off_floor_from_aa63() -> None:
    """chain-lib's aa_floor reads round 63's A/A block as chain64.sh's inline formula did:
    0.357 at 3 runs (round 64's F3), 0.276 at 5 (round 63's onoff63q-class floor); a pair the
    JSON does not hold fails with nothing on stdout, so a chain's `f=$(aa_floor ...) || stop`
    stops."""
    aa = "docs/results/issue16-round63/aa-onoff63-class.json"
    env = {**os.environ, "R": "/nonexistent", "WT": str(ROOT), "H": "ppo", "PYTHONPATH": str(ROOT)}

    def floor(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = f"cd {ROOT} && source scripts/chain-lib.sh && aa_floor {aa} {' '.join(args)}"
        return subprocess.run(
            ["bash", "-c", cmd], env=env, capture_output=True, text=True, check=False
        )

    assert floor("3").stdout == "0.357\n" and floor("5").stdout == "0.276\n"
    p = floor("3", "cand", "ppo")
    assert p.returncode != 0 and p.stdout == "" and "no scenario" in p.stderr
