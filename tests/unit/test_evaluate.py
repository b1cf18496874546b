"""``xfer evaluate`` on the testbed, without a testbed: where its runs go and how the results
are aggregated (the experiment runner is replaced by a recorder; tests/netns runs it for real)."""

from __future__ import annotations

import json
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
    monkeypatch.setattr("lab.experiment.run_experiment", _fake_runner(calls))
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


def _row(ratio: float | None, runs: list[float], gd: float, bo: float) -> dict[str, Any]:
    return {
        "best_fixed": {"utility_streams": 4},
        "controllers": {
            "ppo": {"utility_ratio": ratio, "run_ratios": runs},
            "gd": {"utility_ratio": gd, "run_ratios": []},
            "bo": {"utility_ratio": bo, "run_ratios": []},
        },
    }


def test_summarize_set_numbers() -> None:
    from train.suite_eval import summarize_set

    result = {
        "policy": "ppo",
        "scenarios": {
            "a": _row(1.0, [0.96, 1.05], 0.9, 0.8),  # beats both; 0.09 apart: not bimodal
            "b": _row(0.6, [0.4, 0.8], 0.7, 0.5),  # beats BO only; bimodal
            "c": _row(0.92, [0.92, 0.92], 0.95, 0.99),  # beats neither
            "d": _row(None, [], 0.5, 0.5),  # no best fixed N: not scored
        },
    }
    s = summarize_set(result)
    assert s["scenarios"] == 4 and s["scored"] == 3
    assert s["mean"] == pytest.approx((1.0 + 0.6 + 0.92) / 3) and s["min"] == 0.6
    assert s["worst"] == "b" and s["share_ge_090"] == pytest.approx(2 / 3)
    assert s["beats_gd"] == pytest.approx(1 / 3) and s["beats_bo"] == pytest.approx(2 / 3)
    assert s["beats_both"] == pytest.approx(1 / 3)
    assert s["runs"] == 6 and s["runs_min_per_scenario"] == 2  # over the scored scenarios
    assert s["spread"] == {"b": [0.4, 0.8]}
    assert s["paired"] == {}  # nothing of ours ran beside it


def test_summarize_set_pairs_the_candidate_with_the_policy_beside_it() -> None:
    from train.suite_eval import summarize_set

    def row(cand: float | None, shipped: float | None) -> dict[str, Any]:
        r = _row(shipped, [], 0.5, 0.5)
        r["controllers"]["ppo:cand.pt"] = {"utility_ratio": cand, "run_ratios": []}
        return r

    result = {
        "policy": "ppo:cand.pt",
        "policies": ["ppo:cand.pt", "ppo"],
        "scenarios": {
            "a": row(0.9, 0.8),
            "b": row(0.7, 0.8),
            "c": row(1.0, 0.7),
            "d": row(None, None),
            "e": row(0.6, None),
        },  # fmt: skip
    }
    # a stored reference's own controllers (an old run of another policy) are not paired
    stale = {"utility_ratio": 0.1, "run_ratios": [], "from_reference": True}
    result["scenarios"]["a"]["controllers"]["ppo:old.pt"] = stale
    assert list(summarize_set(result)["paired"]) == ["ppo"]
    p = summarize_set(result)["paired"]["ppo"]
    diffs = [0.1, -0.1, 0.3]  # d and e: not scored by both
    assert p["scenarios"] == 3 and p["higher"] == 2 and p["lower"] == 1
    assert p["mean_difference"] == pytest.approx(sum(diffs) / 3)
    mean = sum(diffs) / 3
    sd = (sum((x - mean) ** 2 for x in diffs) / 2) ** 0.5
    assert p["standard_error"] == pytest.approx(sd / 3**0.5)


def test_run_ratios_per_log(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.unit.test_metrics import make_run
    from train.suite_eval import run_ratios

    runs = {"r1": make_run("ppo", [100, 100], utility=[50, 50]),
            "r2": make_run("ppo", [100, 100], utility=[100, 60])}  # fmt: skip
    monkeypatch.setattr("lab.runlog.read_run", lambda p: runs[p])
    summary = {"best_fixed": {"mean_utility": 100.0}, "policies": {"ppo": {"logs": ["r1", "r2"]}}}
    assert run_ratios(summary, "ppo") == [0.5, 0.8]
    assert run_ratios({"best_fixed": None, "policies": {}}, "ppo") == []
    # U* <= 0 (every fixed N loses more than it moves): no ratio per run either (rule 4)
    for best in (0.0, -12.1):
        assert run_ratios({**summary, "best_fixed": {"mean_utility": best}}, "ppo") == []


def test_suite_option_runs_one_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, Path]] = []
    monkeypatch.setattr("lab.experiment.run_experiment", _fake_runner(calls))
    out = tmp_path / "out"
    args = ["--suite", "gen-v1", "--set", "named", "--repeat", "2", "--policy", "fixed:2",
            "--sweep", "1,2", "--out", str(out), "--json"]  # fmt: skip
    res = CliRunner().invoke(ev.evaluate_cmd, args)
    assert res.exit_code == 0, res.output
    import json

    result = json.loads(res.stdout)
    assert result["suite"] == "gen-v1" and result["set"] == "named"
    assert result["repetitions"] == 2 and len(calls) == 6
    assert all(c[1].parent == out / "gen-v1-named" for c in calls)
    assert result["summary"]["mean"] == 1.0 and result["summary"]["scenarios"] == 6
    assert (out / "gen-v1-named" / "evaluate.json").is_file()
    bad = CliRunner().invoke(ev.evaluate_cmd, ["--suite", "gen-v1", "--scenario", "paper-fig1"])
    assert bad.exit_code != 0 and "--suite takes no" in bad.output
    bad = CliRunner().invoke(ev.evaluate_cmd, ["--suite", "nope", "--out", str(out)])
    assert bad.exit_code != 0 and "no suite 'nope'" in bad.output


def test_sim_config_draws_held_out_networks_from_a_training_config(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import train.simeval as se
    from train.sim import SimConfig

    seen: list[SimConfig | None] = []

    def fake(make: object, n: int, seed: int, episode_len: int = 60,
             sim_cfg: SimConfig | None = None, world_class: str | None = None
             ) -> dict[str, object]:  # fmt: skip
        seen.append(sim_cfg)
        return {"named": [], "random": {}}

    monkeypatch.setattr(se, "evaluate", fake)
    robust = str(Path(__file__).resolve().parents[2] / "configs" / "train" / "robust.toml")
    args = ["--sim", "--policy", "fixed:4", "--networks", "3", "--json"]
    ok = CliRunner().invoke(ev.evaluate_cmd, [*args, "--sim-config", robust])
    assert ok.exit_code == 0, ok.output
    cfg = seen[-1]
    assert cfg is not None and cfg.p_lan == 0.1 and cfg.p_comp_bbr == 0.4 and cfg.slow_recovery
    assert CliRunner().invoke(ev.evaluate_cmd, args).exit_code == 0 and seen[-1] is None
    bad = CliRunner().invoke(ev.evaluate_cmd, ["--scenario", "paper-fig1", "--sim-config", robust])
    assert bad.exit_code != 0 and "go with the simulator (--sim)" in bad.output


def test_world_class_restricts_the_held_out_networks() -> None:
    args = ["--sim", "--policy", "fixed:2", "--networks", "3", "--json"]
    floor = str(Path(__file__).resolve().parents[2] / "configs" / "train" / "floor.toml")
    wc = ["--world-class", "lan-competitor"]
    ok = CliRunner().invoke(ev.evaluate_cmd, [*args, *wc, "--sim-config", floor])
    assert ok.exit_code == 0, ok.output
    rnd = json.loads(ok.output)["fixed:2"]["random"]
    assert rnd["world_class"] == "lan-competitor" and rnd["networks"] == 3 and rnd["scored"] == 3
    # the simulator's defaults (no queue floor): 30 % loss beside the competitor at any N, no
    # fixed N has a positive utility; reported as nothing scored, not as a crash
    ok = CliRunner().invoke(ev.evaluate_cmd, [*args, *wc])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.output)["fixed:2"]["random"]["scored"] == 0
    bad = CliRunner().invoke(ev.evaluate_cmd, [*args, "--world-class", "wan"])
    assert bad.exit_code != 0 and "unknown world class 'wan'" in bad.output
    bad = CliRunner().invoke(
        ev.evaluate_cmd, ["--scenario", "x", "--world-class", "lan-competitor"]
    )
    assert bad.exit_code != 0 and "go with the simulator (--sim)" in bad.output


def test_reference_runs_only_the_policies_against_the_stored_yardstick(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--reference DIR: the sweep, GD and BO come from DIR/NAME.json (an earlier --json
    output); only the policies run, and their ratios are against the stored best fixed N."""
    scn = tmp_path / "my-net.toml"
    scn.write_text(SCENARIO)
    ref = tmp_path / "ref"
    ref.mkdir()
    stored = {"scenarios": {str(scn): {
        "best_fixed": {"source": "sweep", "utility_streams": 8, "mean_utility": 50.0},
        "controllers": {"gd": {"utility_ratio": 0.7, "run_ratios": [0.7, 0.7]},
                        "bo": {"utility_ratio": 0.9, "run_ratios": [0.8, 1.0]}},
    }}}  # fmt: skip
    (ref / "my-net.json").write_text(json.dumps({**stored, "engine": {"commit": "a" * 40}}))
    monkeypatch.setattr(ev, "engine_id", lambda: {"version": "0", "commit": "b" * 40})
    seen: list[Any] = []

    def run_experiment(exp: Any, out_dir: Path, **_: Any) -> dict[str, Any]:
        seen.append(exp)
        return {"best_fixed": None, "policies": {p: {"mean_utility": 40.0} for p in exp.policies}}

    monkeypatch.setattr("lab.experiment.run_experiment", run_experiment)
    args = ["--scenario", str(scn), "--policy", "fixed:2", "--reference", str(ref),
            "--out", str(tmp_path / "out"), "--json"]  # fmt: skip
    res = CliRunner().invoke(ev.evaluate_cmd, args)
    assert res.exit_code == 0, res.output
    assert [(e.policies, e.sweep) for e in seen] == [(("fixed:2",), None)]
    result = json.loads(res.stdout)
    assert result["reference"] == str(ref) and result["utility_ratio_mean"] == pytest.approx(0.8)
    assert result["engine"]["commit"] == "b" * 40
    assert f"made on engine {'a' * 40}" in res.stderr and "sweep again" in res.stderr
    row = result["scenarios"][str(scn)]
    assert row["best_fixed"]["utility_streams"] == 8 and row["reference"] == str(
        ref / "my-net.json"
    )
    assert row["controllers"]["gd"]["utility_ratio"] == 0.7
    assert row["controllers"]["bo"]["from_reference"] is True

    seen.clear()  # a scenario without a stored yardstick fails before anything runs
    other = tmp_path / "other-net.toml"
    other.write_text(SCENARIO)
    res = CliRunner().invoke(ev.evaluate_cmd, [*args[:2], "--scenario", str(other), *args[2:]])
    assert res.exit_code != 0 and not seen
    assert "no reference for other-net" in res.output and "--policy gd --policy bo" in res.output
    (ref / "other-net.json").write_text(json.dumps({"scenarios": {"x": {"best_fixed": None}}}))
    res = CliRunner().invoke(ev.evaluate_cmd, [*args[:2], "--scenario", str(other), *args[2:]])
    assert res.exit_code != 0 and "no best fixed N" in res.output and not seen
    stored["scenarios"][str(scn)]["best_fixed"]["mean_utility"] = -12.0  # every fixed N loses
    (ref / "my-net.json").write_text(json.dumps(stored))
    res = CliRunner().invoke(ev.evaluate_cmd, args)
    assert res.exit_code == 0, res.output
    c = json.loads(res.stdout)["scenarios"][str(scn)]["controllers"]["fixed:2"]
    assert c["utility_ratio"] is None and c["run_ratios"] == [] and c["mean_utility"] == 40.0
    res = CliRunner().invoke(ev.evaluate_cmd, ["--sim", "--reference", str(ref)])
    assert res.exit_code != 0 and "--reference goes with testbed" in res.output
    empty = tmp_path / "empty-ref"  # repeated: the first DIR that holds NAME.json
    empty.mkdir()
    res = CliRunner().invoke(ev.evaluate_cmd, [*args[:-1], "--reference", str(empty), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["reference"] == f"{ref}, {empty}"
    res = CliRunner().invoke(ev.evaluate_cmd, [*args[:4], "--reference", str(empty), "--json"])
    assert res.exit_code != 0 and f"{empty}/my-net.json is missing" in res.output


def test_oracle_runs_the_stored_best_count_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--policy oracle: each scenario's stored best fixed N (utility_streams) runs as fixed:N,
    reported under oracle with the count; without a reference, or one naming no count, it
    fails before anything runs."""
    ref = tmp_path / "ref"
    ref.mkdir()
    names = []
    for name, n in (("net-a", 8), ("net-b", 3)):
        scn = tmp_path / f"{name}.toml"
        scn.write_text(SCENARIO)
        names.append(str(scn))
        stored = {"scenarios": {str(scn): {
            "best_fixed": {"source": "sweep", "utility_streams": n, "mean_utility": 50.0},
            "controllers": {"gd": {"utility_ratio": 0.7, "run_ratios": [0.7]}}}}}  # fmt: skip
        (ref / f"{name}.json").write_text(json.dumps(stored))
    seen: list[Any] = []

    def run_experiment(exp: Any, out_dir: Path, **_: Any) -> dict[str, Any]:
        seen.append(exp.policies)
        u = {p: 40.0 + int(p.partition(":")[2] or 0) for p in exp.policies}
        return {"best_fixed": None, "policies": {p: {"mean_utility": v} for p, v in u.items()}}

    monkeypatch.setattr("lab.experiment.run_experiment", run_experiment)
    scns = [a for n in names for a in ("--scenario", n)]
    args = [*scns, "--reference", str(ref), "--out", str(tmp_path / "out"), "--json"]
    res = CliRunner().invoke(ev.evaluate_cmd, [*args, "--policy", "oracle", "--policy", "fixed:3"])
    assert res.exit_code == 0, res.output
    assert seen == [("fixed:8", "fixed:3"), ("fixed:3",)]
    result = json.loads(res.stdout)
    a, b = (result["scenarios"][n]["controllers"] for n in names)
    assert list(a) == ["oracle", "fixed:3", "gd"] and list(b) == ["oracle", "fixed:3", "gd"]
    assert a["oracle"]["streams_fixed"] == 8 and a["oracle"]["utility_ratio"] == 48.0 / 50.0
    assert a["fixed:3"]["utility_ratio"] == b["oracle"]["utility_ratio"] == 43.0 / 50.0
    assert b["oracle"]["streams_fixed"] == 3 and "streams_fixed" not in b["fixed:3"]
    assert result["policy"] == "oracle"
    assert result["utility_ratio_mean"] == pytest.approx((48.0 + 43.0) / 100.0)
    seen.clear()
    res = CliRunner().invoke(ev.evaluate_cmd, [*scns, "--policy", "oracle", "--out", str(tmp_path)])
    assert res.exit_code != 0 and "give --reference DIR" in res.output and not seen
    (ref / "net-b.json").write_text(json.dumps({"scenarios": {"x": {"best_fixed": {
        "mean_utility": 50.0}}}}))  # fmt: skip
    res = CliRunner().invoke(ev.evaluate_cmd, [*args, "--policy", "oracle"])
    assert res.exit_code != 0 and "names no best fixed N by utility" in res.output and not seen
    with pytest.raises(ValueError, match="names no best fixed N"):  # the library: before any run
        ev.evaluate(("oracle",), names, 30.0, (1,), tmp_path / "lib", reference=ref)
    assert not seen
    res = CliRunner().invoke(ev.evaluate_cmd, [*args, "--policy", "fixed:2"])
    assert res.exit_code == 0 and seen == [("fixed:2",), ("fixed:2",)]  # only oracle needs it
    res = CliRunner().invoke(ev.evaluate_cmd, ["--sim", "--policy", "oracle"])
    assert res.exit_code != 0 and "not in the simulator" in res.output


def test_a_bad_policy_in_the_simulator_is_a_usage_error_not_a_traceback() -> None:
    res = CliRunner().invoke(ev.evaluate_cmd, ["--sim", "--policy", "bogus", "--networks", "1"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "Invalid value for --policy" in res.output and "unknown policy 'bogus'" in res.output


def test_reference_with_a_suite_reads_every_stored_scenario_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[str, Path]] = []
    monkeypatch.setattr("lab.experiment.run_experiment", _fake_runner(calls))
    args = ["--suite", "gen-v2", "--set", "test", "--policy", "fixed:2", "--reference",
            str(tmp_path), "--out", str(tmp_path / "out")]  # fmt: skip
    res = CliRunner().invoke(ev.evaluate_cmd, args)
    assert res.exit_code != 0 and not calls
    assert "no reference for gen-v2-t01" in res.output


def test_world_class_all_is_the_screen_every_class_in_the_same_worlds() -> None:
    peer = str(Path(__file__).resolve().parents[2] / "configs" / "train" / "peer.toml")
    args = ["--sim", "--sim-config", peer, "--networks", "2", "--world-class", "all"]
    ok = CliRunner().invoke(
        ev.evaluate_cmd, [*args, "--policy", "fixed:1", "--policy", "fixed:12", "--json"]
    )
    assert ok.exit_code == 0, ok.output
    result = json.loads(ok.output)
    from train.simeval import WORLD_CLASSES

    assert list(result["world_classes"]) == list(WORLD_CLASSES)
    for spec in ("fixed:1", "fixed:12"):
        s = result["screen"][spec]
        meds = [
            result["world_classes"][c][spec]["random"]["utility_ratio_median"]
            for c in WORLD_CLASSES
        ]
        assert s["median"] == dict(zip(WORLD_CLASSES, meds, strict=True))
        assert s["mean_of_medians"] == pytest.approx(sum(meds) / len(meds))
        for c in WORLD_CLASSES:
            assert result["world_classes"][c][spec]["random"]["world_class"] == c
    # one stream is far from right on a long lossy path where 12 are near it
    med = {spec: result["screen"][spec]["median"]["lossy-long"] for spec in ("fixed:1", "fixed:12")}
    assert med["fixed:1"] < med["fixed:12"]
    table = CliRunner().invoke(ev.evaluate_cmd, [*args, "--policy", "fixed:4"])
    assert table.exit_code == 0 and "simulated screen" in table.output, table.output


def test_a_scenario_file_lists_scenarios_from_its_own_directory(tmp_path: Path) -> None:
    d = tmp_path / "sets"
    d.mkdir()
    f = d / "mine.txt"
    f.write_text("# a set\n\n../suites/a.toml   # first\nhand-lan@50mbit\n/abs/b.toml\n")
    assert ev.read_scenario_file(f) == [
        str((tmp_path / "suites" / "a.toml").resolve()),
        "hand-lan@50mbit",
        "/abs/b.toml",
    ]
    (d / "empty.txt").write_text("# nothing\n")
    with pytest.raises(ValueError, match="lists no scenario"):
        ev.read_scenario_file(d / "empty.txt")
    res = CliRunner().invoke(ev.evaluate_cmd, ["--scenario-file", str(d / "empty.txt")])
    assert res.exit_code != 0 and "lists no scenario" in res.output


def test_the_warmup10_set_resolves_and_each_scenario_has_a_yardstick(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """configs/sets/warmup10.txt: ten existing scenario files, each with a stored yardstick in
    one of the three suites' validation references (searched in order); from the checkout's
    root they read as configs/suites/... ."""
    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(root)
    names = ev.read_scenario_file(root / "configs" / "sets" / "warmup10.txt")
    assert len(names) == 10 and all((Path.cwd() / n).is_file() for n in names)
    refs = [root / "docs" / "results" / f"gen-v{k}-validation" for k in (3, 4, 6)]
    found = {Path(n).stem: ev.load_reference(refs, n).path.parent.name for n in names}
    assert found["gen-v3-v06"] == "gen-v3-validation"
    assert names[0] == "configs/suites/gen-v3/validation/gen-v3-v06.toml"
    assert found["gen-v6-v01"] == "gen-v6-validation"
    with pytest.raises(FileNotFoundError, match="gen-v3-validation/gen-v6-v01.json is missing"):
        ev.load_reference(refs[:1], names[4])


def test_the_situations_set_names_the_hand_written_scenarios_with_yardsticks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """configs/sets/situations.txt (round 37): gen-v1's five hand-written validation scenarios,
    each with its stored yardstick in gen-v1-validation."""
    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(root)
    names = ev.read_scenario_file(root / "configs" / "sets" / "situations.txt")
    assert [Path(n).stem for n in names] == [
        "hand-lossy-long", "hand-onoff-180ms", "hand-bbr-shared-1g", "hand-lan-capped",
        "hand-lan-reno",
    ]  # fmt: skip
    ref = [root / "docs" / "results" / "gen-v1-validation"]
    assert all(ev.load_reference(ref, n).path.is_file() for n in names)


def test_the_long_bbr62_set_is_every_validation_path_where_a_110ms_band_can_act(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """configs/sets/long-bbr62.txt (round 62): every validation scenario (the suites' validation
    sets and the hand-written situations) whose path is 60-110 ms and whose streams do not run
    BBR (the band's ``not_cc``), so every one where a band reaching 110 ms decides and the
    shipped 20-60 ms band does not, when round 62's chain ran it (hand-bbr-onoff-lossy-80ms was
    written after); each with a stored yardstick."""
    from testbeds.scenario import load_scenario

    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(root)
    names = ev.read_scenario_file(root / "configs" / "sets" / "long-bbr62.txt")
    files = sorted(root.glob("configs/suites/*/validation/*.toml"))
    files += sorted(root.glob("configs/situations/*.toml"))
    expected = set()
    for f in files:
        s = load_scenario(f)
        if 60 < s.paths[0].rtt_ms <= 110 and s.sysctls.congestion_control != "bbr":
            expected.add(f.stem)
    expected.remove("hand-bbr-onoff-lossy-80ms")
    assert {Path(n).stem for n in names} == expected and len(names) == 8
    refs = [root / "docs" / "results" / f"gen-v{k}-validation" for k in (1, 2, 4)]
    refs.append(root / "docs" / "results" / "situations-long-bbr")
    assert all(ev.load_reference(refs, n).path.is_file() for n in names)


def test_the_onoff63_sets_are_every_validation_path_of_30ms_or_more_with_an_onoff_rival(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """configs/sets/onoff63-class.txt and onoff63-guard.txt (round 63): together every
    validation scenario whose path is at least 30 ms (policy.rebound's ``min_rtt_ms``) with an
    on/off competing transfer, so every one where a rebound can fire on a rival's on-period;
    the class is the on/off BBR paths of at least 60 ms where our streams do not run BBR. Each
    with a stored yardstick."""
    from testbeds.scenario import load_scenario

    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(root)
    sets = {k: ev.read_scenario_file(root / "configs" / "sets" / f"onoff63-{k}.txt")
            for k in ("class", "guard")}  # fmt: skip
    files = sorted(root.glob("configs/suites/*/validation/*.toml"))
    files += sorted(root.glob("configs/situations/*.toml"))
    expected: dict[str, set[str]] = {"class": set(), "guard": set()}
    for f in files:
        s = load_scenario(f)
        onoff = [b for b in s.background if b.on_s]
        if not onoff or s.paths[0].rtt_ms < 30:
            continue
        bbr = any(b.cc == "bbr" for b in onoff)
        long_class = bbr and s.paths[0].rtt_ms >= 60 and s.sysctls.congestion_control != "bbr"
        expected["class" if long_class else "guard"].add(f.stem)
    for k, names in sets.items():
        assert {Path(n).stem for n in names} == expected[k] and len(names) == len(expected[k])
    assert len(sets["class"]) == 4 and len(sets["guard"]) == 9
    refs = [root / "docs" / "results" / f"gen-v{k}-validation" for k in (1, 2, 3, 4, 6)]
    refs.append(root / "docs" / "results" / "situations-long-bbr")
    assert all(ev.load_reference(refs, n).path.is_file() for n in sets["class"] + sets["guard"])
