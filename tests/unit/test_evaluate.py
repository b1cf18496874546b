"""``xfer evaluate`` on the testbed, without a testbed: where its runs go and how the results
are aggregated (the experiment runner is replaced by a recorder; tests/netns runs it for real)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from train import evaluate as ev

SCENARIO = """
description = "a scenario file outside configs/testbeds"
[sysctl]
congestion_control = "cubic"
[[path]]
rate = "100mbit"
rtt_ms = 10
"""


def _fake_runner(calls: list[tuple[str, Path]]) -> Any:
    def run_experiment(exp: Any, out_dir: Path, **_: Any) -> dict[str, Any]:
        calls.append((exp.scenario, Path(out_dir)))
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        pol = {p: {"utility_ratio": 1.0, "mean_utility": 1.0} for p in exp.policies}
        return {"best_fixed": {"streams": 4, "mean_utility": 1.0}, "policies": pol}

    return run_experiment


def test_absolute_scenario_path_runs_under_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: `--scenario /abs/x.toml` joined the absolute path onto --out, so the runner
    tried to make a directory at the scenario file itself and crashed."""
    scn = tmp_path / "elsewhere" / "my-net.toml"
    scn.parent.mkdir()
    scn.write_text(SCENARIO)
    calls: list[tuple[str, Path]] = []
    monkeypatch.setattr("xfer.experiment.run_experiment", _fake_runner(calls))
    out = tmp_path / "out"
    res = CliRunner().invoke(
        ev.evaluate_cmd,
        [
            "--scenario",
            str(scn),
            "--scenario",
            f"{scn}@50Mbit",
            "--policy",
            "fixed:2",
            "--sweep",
            "1,2",
            "--out",
            str(out),
            "--json",
        ],  # fmt: skip
    )
    assert res.exit_code == 0, res.output
    assert [c[1] for c in calls] == [out / "my-net", out / "my-net-at-50Mbit"]
    assert all(c[0].startswith(str(scn)) for c in calls)
    assert scn.is_file() and (out / "evaluate.json").is_file()


def test_two_specs_with_one_name_are_refused(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        d.mkdir()
        (d / "same.toml").write_text(SCENARIO)
    res = CliRunner().invoke(
        ev.evaluate_cmd,
        [
            "--scenario",
            str(a / "same.toml"),
            "--scenario",
            str(b / "same.toml"),
            "--out",
            str(tmp_path / "o"),
        ],
    )
    assert res.exit_code != 0 and "share the name same" in res.output
