"""scripts/candidate-chain.sh, dry: the protocol's commands, in order, with the rules' flags."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "candidate-chain.sh"


def _dry(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT)],
        env={**os.environ, "DRY": "1", "R": str(tmp_path), **env},
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_chain_runs_its_rules_in_order_with_their_flags(tmp_path: Path) -> None:
    out = _dry(tmp_path, X="warmup:cc=bbr:ppo", TAG="c", TEST_DEADLINE="23:59:59").stdout
    cmds = [line[2:] for line in out.splitlines() if line.startswith("+ ")]
    assert cmds[0].startswith("python3 -m train.gates --target warmup:cc=bbr:ppo")
    assert "--suite gen-v2 --set validation" in cmds[1] and "--repeat 2" in cmds[1]
    assert cmds[2].endswith(f"--min-ustar 10 --noninferior 0.05 > {tmp_path}/rule1-c.txt")
    assert "--scenario-file configs/sets/warmup10.txt" in cmds[3] and "--repeat 3" in cmds[3]
    assert cmds[3].count("--reference docs/results/gen-v") == 3
    assert "--margin 0.05 >" in cmds[4]
    # rule 2b (round 37): gen-v7 and the situations, 2 runs each, one verdict over both
    assert "--suite gen-v7 --set validation" in cmds[7] and "--repeat 2" in cmds[7]
    assert "--reference docs/results/gen-v7-validation" in cmds[7]
    assert "--scenario-file configs/sets/situations.txt" in cmds[8] and "--repeat 2" in cmds[8]
    assert "--reference docs/results/gen-v1-validation" in cmds[8]
    assert f"{tmp_path}/gen-v7-c.json,{tmp_path}/situations-c.json" in cmds[9]
    assert cmds[9].endswith(f"--min-ustar 10 > {tmp_path}/rule2b-c.txt")
    assert "experiment fig3" in cmds[10] and "--repetitions 3" in cmds[10]
    assert "--set test" in cmds[12] and cmds[13].endswith(f"--test > {tmp_path}/rule4-c.txt")
    assert all("flock /tmp/xfer-netns.lock" in cmds[i] for i in (1, 3, 7, 8, 10, 12))
    # without a deadline the test set waits
    out = _dry(tmp_path, X="ppo", TAG="c").stdout
    assert "--set test" not in out and "no TEST_DEADLINE: the test set waits" in out


def test_the_chain_wants_a_candidate_and_a_tag(tmp_path: Path) -> None:
    res = _dry(tmp_path, TAG="c")
    assert res.returncode != 0 and "X=SPEC" in res.stderr


def test_agree_reads_rules_1_2_and_2b_minimums_where_runs_agree_and_not_the_test_sets(
    tmp_path: Path,
) -> None:
    env = {"X": "ppo", "TAG": "c", "TEST_DEADLINE": "23:59:59"}
    plain = _dry(tmp_path, **env).stdout
    assert "--agree" not in plain
    out = _dry(tmp_path, AGREE="0.3", **env).stdout
    cmds = [line[2:] for line in out.splitlines() if line.startswith("+ ")]
    verdicts = [c for c in cmds if c.startswith("python3 -m train.verdict")]
    assert [("--agree 0.3" in c) for c in verdicts] == [True, True, True, True, True, False]
    assert verdicts[-1].endswith(f"--test > {tmp_path}/rule4-c.txt")


def test_from_2_skips_rule_1_and_runs2_sets_warmup10s_runs(tmp_path: Path) -> None:
    out = _dry(tmp_path, X="ppo", TAG="c", FROM="2", RUNS2="5", TEST_DEADLINE="23:59:59").stdout
    cmds = [line[2:] for line in out.splitlines() if line.startswith("+ ")]
    assert cmds[0].startswith("python3 -m train.gates")
    assert not any("--suite gen-v2 --set validation" in c or "rule1-c" in c for c in cmds)
    assert "warmup10.txt" in cmds[1] and "--repeat 5" in cmds[1]
    assert "rule 1 not run (FROM=2)" in out
    assert any("experiment fig3" in c for c in cmds) and "--set test" in cmds[-2]


def test_sit_0_skips_rule_2b(tmp_path: Path) -> None:
    out = _dry(tmp_path, X="ppo", TAG="c", SIT="0", TEST_DEADLINE="23:59:59").stdout
    assert "rule 2b not run (SIT=0)" in out
    assert "gen-v7" not in out and "situations.txt" not in out
    assert "experiment fig3" in out and "--set test" in out


def test_gates_base_drops_only_the_target_gates(tmp_path: Path) -> None:
    out = _dry(tmp_path, X="judge:ppo", TAG="c", GATES="base").stdout
    cmds = [line[2:] for line in out.splitlines() if line.startswith("+ ")]
    assert cmds[0] == f"python3 -m train.gates judge:ppo > {tmp_path}/gates-c.txt"
    assert "--suite gen-v2 --set validation" in cmds[1]
