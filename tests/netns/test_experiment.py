"""`xfer experiment` and `xfer evaluate` for real, in the emulated testbed (root + netns).

Short versions of the shipped experiments: fig1 (paper-fig1, 50 Mbit/s per stream) with every
controller, fairness-k (three senders, fixed bytes each, one receiver) with gd, and an
evaluation on paper-fig1. The PPO controller uses the shipped weights when they exist, else a
tiny checkpoint made here with the PPO module's own API (biased to add a stream each MI, so
its stream count visibly changes). Budget: about 3 minutes on 2 cores.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.netns, pytest.mark.timeout(300)]

CLI = [sys.executable, "-m", "xfer.cli"]


def _ppo_spec(tmp: Path) -> str:
    from policy.ppo import DEFAULT_CHECKPOINT

    if DEFAULT_CHECKPOINT.exists():
        return "ppo"
    import torch

    from policy.features import FeatureConfig
    from policy.ppo import ActorCritic, mlp_arch, save_checkpoint

    net = ActorCritic(mlp_arch(FeatureConfig(), (16,)))
    with torch.no_grad():  # action index 1 (+1 stream) wins whatever the input
        net.pi.weight.zero_()
        net.pi.bias.zero_()
        net.pi.bias[1] = 5.0
    path = tmp / "tiny-ppo.pt"
    save_checkpoint(path, net, {"note": "tiny test checkpoint from tests/netns/test_experiment.py"})
    return f"ppo:{path}"


def _run(args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(CLI + args, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def fig1(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], str]:
    tmp = tmp_path_factory.mktemp("exp-fig1")
    ppo = _ppo_spec(tmp)
    out = tmp / "out"
    policies = f"fixed:20,gd,bo,{ppo}"
    _run(["experiment", "fig1", "--duration", "8", "--repetitions", "1", "--no-sweep",
          "--policies", policies, "--out", str(out)], timeout=150)  # fmt: skip
    return out, json.loads((out / "summary.json").read_text()), ppo


def test_fig1_logs_are_complete_and_sane(fig1: tuple[Path, dict[str, Any], str]) -> None:
    from lab.runlog import read_run

    out, summary, ppo = fig1
    assert list(summary["policies"]) == ["fixed:20", "gd", "bo", ppo]
    assert summary["failed_transfers"] == 0, summary["failures"]
    for spec, p in summary["policies"].items():
        assert p["runs"] == 1 and len(p["logs"]) == 1
        run = read_run(p["logs"][0])
        assert run.meta["scenario"] == "paper-fig1" and run.meta["label"] == spec
        assert len(run) >= 4, f"{spec}: only {len(run)} MIs logged in an 8 s run"
        utility = run.col("utility")
        assert (utility > 0).any(), f"{spec}: no positive utility recorded"
        # the mean utility's sign is the run's luck (one loss burst in 8 s can make it
        # negative, as it once did a 6-s evaluate run's); that some MI scored > 0 is above
        assert p["mean_throughput_bps"] > 1e6 and math.isfinite(p["mean_utility"])
        assert 0 <= p["loss_rate"] < 0.5
    fixed = summary["policies"]["fixed:20"]
    assert fixed["streams_min"] == fixed["streams_max"] == 20
    assert fixed["mean_throughput_bps"] > 150e6  # 20 x 50 Mbit/s into a 1 Gbit/s link
    for spec in ("gd", "bo", ppo):  # the controllers move the stream count
        p = summary["policies"][spec]
        assert p["streams_max"] > p["streams_min"], f"{spec} never changed its stream count"
    best = summary["best_fixed"]
    assert best["source"] == "runs" and best["streams"] == 20
    assert summary["policies"]["fixed:20"]["utility_ratio"] == pytest.approx(1.0)


def test_fig1_figures_and_summary(fig1: tuple[Path, dict[str, Any], str]) -> None:
    out, summary, _ = fig1
    figures = [Path(p) for p in summary["figures"]]
    names = {p.name for p in figures}
    assert {"throughput_streams.png", "loss.png", "throughput_box.png"} <= names
    for p in figures:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 5000
    exp = json.loads((out / "experiment.json").read_text())
    assert exp["duration_s"] == 8 and exp["stream_rate_bps"] == 50e6
    assert summary["capacity_bps"] == 1e9 and summary["transfers"] == 1


def test_fairness_k_completion_times(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _run(["experiment", "fairness-k", "--duration", "10", "--policies", "gd", "--out", str(out)],
         timeout=120)  # fmt: skip
    summary = json.loads((out / "summary.json").read_text())
    assert summary["transfers"] == 3 and summary["failed_transfers"] == 0, summary["failures"]
    gd = summary["policies"]["gd"]
    comp = gd["completion"]["repetitions"][0]
    assert comp["all_completed"] and len(comp["completion_s"]) == 3
    assert comp["max_completion_s"] == pytest.approx(max(comp["completion_s"]), abs=1e-6)
    assert 0 <= comp["straggler_gap_s"] <= comp["max_completion_s"]
    assert 0 < gd["jfi"] <= 1 and 0 < gd["link_utilization"] <= 1
    (group,) = summary["groups"]
    assert len(group["means_bps"]) == 3 and group["overlap_s"] > 0
    assert any(Path(p).name.startswith("concurrent_") for p in summary["figures"])


def test_evaluate_reports_utility_ratio(
    tmp_path: Path, fig1: tuple[Path, dict[str, Any], str]
) -> None:
    ppo = fig1[2]
    out = tmp_path / "eval"
    proc = _run(["evaluate", "--policy", ppo, "--scenarios", "paper-fig1", "--duration", "6",
                 "--sweep", "20", "--out", str(out), "--json"], timeout=150)  # fmt: skip
    result = json.loads(proc.stdout)
    assert result == json.loads((out / "evaluate.json").read_text())
    row = result["scenarios"]["paper-fig1"]
    assert row["best_fixed"]["streams"] == 20 and row["best_fixed"]["mean_utility"] > 0
    assert set(row["controllers"]) == {ppo, "gd", "bo"}
    best_u = row["best_fixed"]["mean_utility"]
    for c in row["controllers"].values():
        # the ratio is the controller's mean utility over the best fixed N's. Its sign is the
        # network's, not evaluate's: one loss burst in a 6-s run on a shared machine once gave
        # a controller -0.024, so only the arithmetic and a loose upper bound are checked here
        assert c["utility_ratio"] == pytest.approx(c["mean_utility"] / best_u)
        assert c["utility_ratio"] < 3 and c["mean_throughput_bps"] > 0
    assert result["utility_ratio_mean"] == pytest.approx(row["controllers"][ppo]["utility_ratio"])
    # --reference: that output is the stored yardstick; only the policy named now runs
    # (oracle: the sweep's own best, fixed:20, run again, so its ratio is about 1), GD and BO
    # come from the file.
    ref = tmp_path / "ref"
    ref.mkdir()
    (ref / "paper-fig1.json").write_text(proc.stdout)
    again = tmp_path / "again"
    proc = _run(["evaluate", "--policy", "oracle", "--scenarios", "paper-fig1", "--duration",
                 "6", "--reference", str(ref), "--out", str(again), "--json"], timeout=90)  # fmt: skip
    res2 = json.loads(proc.stdout)
    row2 = res2["scenarios"]["paper-fig1"]
    assert [p.name for p in (again / "paper-fig1" / "logs").iterdir()] == ["fixed-20"]
    assert row2["best_fixed"] == row["best_fixed"] and res2["reference"] == str(ref)
    oracle = row2["controllers"]["oracle"]
    assert oracle["streams_fixed"] == 20 and 0.7 < oracle["utility_ratio"] < 1.3
    assert res2["policy"] == "oracle" and res2["utility_ratio_mean"] == oracle["utility_ratio"]
    assert row2["controllers"]["gd"]["utility_ratio"] == row["controllers"]["gd"]["utility_ratio"]


@pytest.mark.parametrize("head", [0, 2])
def test_a_timed_scenario_starts_its_clock_with_the_transfer(tmp_path: Path, head: int) -> None:
    """Round 46 (issue #16): the schedule's t = 0 is the transfer's start, whatever the
    controller takes to import, or ``head_start_s`` before it. The rate drops from 400 to
    100 Mbit/s at 1.5 s (not 10x: the socket buffers filled at the high rate must drain at the
    low one within the harness's grace); a controller that imports torch (about 2 s here) used to be launched
    with the schedule already running, so its first MI met the cut. Now its first MI is all
    before the cut, or, with a 2-s head start, all after it."""
    from lab.runlog import read_intervals

    scn = tmp_path / "clock-check.toml"
    scn.write_text(
        f'name = "clock-check"\nhead_start_s = {head}\n'
        'description = "400 Mbit/s, 2 ms; 100 Mbit/s from 1.5 s"\n'
        '[[path]]\nrate = "400mbit"\nrtt_ms = 2\nqueue = "1bdp"\n'
        '[[schedule]]\nat_s = 1.5\naction = "set_rate"\npath = 1\nrate = "100mbit"\n'
    )
    ppo = _ppo_spec(tmp_path)
    exp = tmp_path / "clock.toml"
    exp.write_text(
        f'description = "clock check"\nscenario = "{scn}"\npolicies = ["{ppo}"]\n'
        "repetitions = 1\nduration = 4\n"
    )
    out = tmp_path / "out"
    _run(["experiment", str(exp), "--no-sweep", "--out", str(out)], timeout=120)
    (log,) = (out / "logs").glob("*/r1-t1.jsonl")
    mis = read_intervals(log)
    if head:
        assert mis[0]["throughput_bps"] < 150e6, mis[0]  # the cut came before the transfer
    else:
        assert mis[0]["throughput_bps"] > 250e6, mis[0]  # the first MI: before the cut
    assert mis[2]["throughput_bps"] < 150e6, mis[2]  # the third: after it (the schedule ran)
