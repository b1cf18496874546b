"""scripts/sweep-yardstick.sh, dry: one evaluate per scenario not yet stored, with the
yardstick's flags; unknown suites and names are refused."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "sweep-yardstick.sh"


def _dry(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DRY": "1", "WT": str(ROOT), "O": str(tmp_path), "R": str(tmp_path)}
    return subprocess.run(
        ["bash", str(SCRIPT), *args], env=env, capture_output=True, text=True, check=False
    )


def test_one_sweep_per_scenario_not_yet_stored(tmp_path: Path) -> None:
    (tmp_path / "gen-v13-t02.json").write_text("{}")  # stored: skipped, so a sweep resumes
    p = _dry(tmp_path, "gen-v13", "test")
    assert p.returncode == 0, p.stderr
    cmds = [line[2:] for line in p.stdout.splitlines() if line.startswith("+ ")]
    names = [f"gen-v13-t0{i}" for i in (1, 3, 4, 5, 6, 7, 8)]
    assert len(cmds) == len(names)
    for name, cmd in zip(names, cmds, strict=True):
        assert cmd.startswith("flock /tmp/xfer-netns.lock python3 -m xfer.cli evaluate ")
        assert f"--scenario {ROOT}/configs/suites/gen-v13/test/{name}.toml" in cmd
        assert "--policy gd --sweep 1,2,4,8,16,32,48 --repeat 1" in cmd
        assert cmd.endswith(f"--json {tmp_path}/{name}.json.tmp")  # renamed only when done
    assert list(tmp_path.iterdir()) == [tmp_path / "gen-v13-t02.json"]  # dry writes nothing


def test_unknown_suites_and_names_are_refused(tmp_path: Path) -> None:
    p = _dry(tmp_path, "gen-v99", "test")
    assert p.returncode == 2 and "no scenarios at" in p.stderr
    p = _dry(tmp_path, "gen-v13", "test", "gen-v13-t03", "nope")
    assert p.returncode == 2 and "no scenario" in p.stderr and "nope.toml" in p.stderr
    assert p.stdout.count("+ flock") == 1
    p = _dry(tmp_path, "gen-v13")
    assert p.returncode == 2 and "SUITE SET" in p.stderr


def test_hand_written_scenario_files_sweep_the_same_way_into_a_named_directory(
    tmp_path: Path,
) -> None:
    (tmp_path / "hand-bbr-onoff-shallow-80ms.json").write_text("{}")  # stored: skipped
    files = [
        "configs/situations/hand-bbr-onoff-shallow-80ms.toml",
        "configs/situations/hand-bbr-onoff-lossy-80ms.toml",
    ]
    p = _dry(tmp_path, *files)
    assert p.returncode == 0, p.stderr
    cmds = [line[2:] for line in p.stdout.splitlines() if line.startswith("+ ")]
    assert len(cmds) == 1
    assert f"--scenario {ROOT}/{files[1]} " in cmds[0]
    assert "--policy gd --sweep 1,2,4,8,16,32,48 --repeat 1" in cmds[0]
    assert cmds[0].endswith(f"--json {tmp_path}/hand-bbr-onoff-lossy-80ms.json.tmp")
    p = _dry(tmp_path, "configs/situations/nope.toml")
    assert p.returncode == 2 and "no scenario" in p.stderr and "nope.toml" in p.stderr
    env = {k: v for k, v in os.environ.items() if k != "O"}
    p = subprocess.run(
        ["bash", str(SCRIPT), files[0]],
        env={**env, "DRY": "1", "WT": str(ROOT)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode != 0 and "O=DIR" in p.stderr  # no default home for hand-written ones
