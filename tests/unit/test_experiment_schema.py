"""The experiment file schema (xfer.experiment_config) and the run plan built from it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from xfer.experiment import Trial, _sender_argv, plan
from xfer.experiment_config import (
    CONFIG_DIR,
    DataSpec,
    ExperimentError,
    load_experiment,
    parse_experiment,
)


def doc(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"scenario": "paper-fig1", "policies": ["fixed:20", "gd"]}
    base.update(over)
    return {k: v for k, v in base.items() if v is not None}


def parse(**over: Any):  # type: ignore[no-untyped-def]
    return parse_experiment(doc(**over), "test.toml", "test")


def test_shipped_experiments_load() -> None:
    names = sorted(p.stem for p in CONFIG_DIR.glob("*.toml"))
    assert {"fig1", "fig3", "fairness-k"} <= set(names)
    fig1 = load_experiment("fig1")
    assert fig1.scenario == "paper-fig1"
    assert fig1.policies == ("fixed:20", "gd", "bo", "ppo")
    assert fig1.stream_rate_bps == 50e6 and fig1.duration_s == 200
    assert fig1.transfers == 1 and fig1.sweep is not None
    fig3 = load_experiment("fig3")
    assert fig3.scenario == "shared-1g-40ms" and fig3.starts_s == (0.0, 50.0, 100.0)
    fk = load_experiment(CONFIG_DIR / "fairness-k.toml")
    assert fk.receiver == "shared" and fk.data.fixed_size and fk.starts_s == (0.0, 0.0, 0.0)


def test_defaults() -> None:
    exp = parse()
    assert exp.name == "test" and exp.repetitions == 1 and exp.duration_s == 60
    assert exp.starts_s == (0.0,) and exp.receiver == "paired"
    assert exp.data == DataSpec("mem", None) and exp.sweep is None and exp.cc is None


def test_rates_sizes_and_transfers() -> None:
    exp = parse(
        stream_rate="2.5Gbit",
        transfers={"start_s": [0, 10, 25]},
        data={"kind": "tree", "size": "512MiB"},
        sweep={"streams": [20, 1, 20, 8], "duration": 30},
    )
    assert exp.stream_rate_bps == 2.5e9
    assert exp.starts_s == (0.0, 10.0, 25.0)
    assert exp.data.size_bytes == 512 * 2**20
    assert exp.sweep is not None and exp.sweep.streams == (1, 8, 20) and exp.sweep.duration_s == 30
    assert parse(transfers={"count": 3, "stagger_s": 50}).starts_s == (0.0, 50.0, 100.0)


@pytest.mark.parametrize(
    ("over", "message"),
    [
        ({"scenario": None}, "missing required field 'scenario'"),
        ({"policies": []}, "at least one policy"),
        ({"policies": ["warp"]}, "unknown policy 'warp'"),
        ({"policies": ["fixed"]}, "needs a stream count"),
        ({"policies": ["gd", "gd"]}, "must be unique"),
        ({"duration": 0}, "'duration' = 0 is outside"),
        ({"duration": "long"}, "'duration' must be int or float"),
        ({"repetitions": True}, "'repetitions' must be int"),
        ({"stream_rate": "fast"}, "cannot read rate 'fast'"),
        ({"cc": "vegas"}, "cc 'vegas' is not one of"),
        ({"min_streams": 8, "max_streams": 4}, "min_streams (8) <= max_streams (4)"),
        ({"transfers": {"count": 2, "start_s": [0, 1]}}, "either start_s or count"),
        ({"transfers": {"start_s": [5, 10]}}, "first transfer must start at 0"),
        ({"transfers": {"count": 40}}, "count must be 1..16"),
        ({"transfers": {"count": 2, "receiver": "mesh"}}, "receiver 'mesh'"),
        ({"data": {"kind": "tree"}}, "tree needs a size"),
        ({"data": {"kind": "disk"}}, "kind 'disk'"),
        ({"data": {"size": "-3GB"}}, "cannot read size"),
        ({"sweep": {"streams": [0, 4]}}, "integers >= 1"),
        ({"sweep": {"streams": [4], "duraton": 3}}, "unknown field(s) duraton"),
        ({"polices": ["gd"]}, "unknown field(s) polices"),
        ({"name": "bad name!"}, "must be 1-40 letters"),
    ],
)
def test_errors_name_the_file_and_field(over: dict[str, Any], message: str) -> None:
    with pytest.raises(ExperimentError) as info:
        parse(**over)
    assert message in str(info.value)
    assert "test.toml" in str(info.value)


def test_missing_file_lists_known_experiments(tmp_path: Path) -> None:
    with pytest.raises(ExperimentError, match="known: .*fig1"):
        load_experiment("no-such-experiment")
    bad = tmp_path / "bad.toml"
    bad.write_text("scenario = [")
    with pytest.raises(ExperimentError, match="not valid TOML"):
        load_experiment(bad)


def test_duration_override_keeps_the_shape() -> None:
    exp = parse(
        duration=200,
        transfers={"count": 3, "stagger_s": 50},
        data={"size": "2GB"},
        sweep={"streams": [10], "duration": 60},
    )
    short = exp.with_overrides(20.0)
    assert short.duration_s == 20 and short.starts_s == (0.0, 5.0, 10.0)
    assert short.data.size_bytes == 200_000_000
    assert short.sweep is not None and short.sweep.duration_s == 20
    assert exp.with_overrides(policies=("bo",), repetitions=4).policies == ("bo",)
    with pytest.raises(ExperimentError, match="unknown policy"):
        exp.with_overrides(policies=("nope",))
    with pytest.raises(ExperimentError, match="positive"):
        exp.with_overrides(-1.0)


def test_plan_runs_sweep_then_interleaved_repetitions() -> None:
    exp = parse(repetitions=2, sweep={"streams": [4, 8]}, transfers={"count": 2, "stagger_s": 5})
    trials = plan(exp)
    assert [(t.kind, t.policy, t.repetition) for t in trials] == [
        ("sweep", "fixed:4", 1),
        ("sweep", "fixed:8", 1),
        ("run", "fixed:20", 1),
        ("run", "gd", 1),
        ("run", "fixed:20", 2),
        ("run", "gd", 2),
    ]
    assert trials[0].starts_s == (0.0,) and trials[2].starts_s == (0.0, 5.0)
    assert trials[2].slug == "fixed-20" and trials[2].group == "run-fixed-20-r1"


def test_sender_command_line() -> None:
    exp = parse(stream_rate="50Mbit", cc="cubic", transfers={"count": 2, "stagger_s": 5})
    trial = Trial("gd", 1, "run", 30.0, (0.0, 5.0))
    argv = _sender_argv(exp, trial, 2, "10.1.2.2:5702", Path("/o/r1-t2.parquet"), None)
    joined = " ".join(argv)
    assert "send --duration 30 10.1.2.2:5702 --policy gd" in joined
    assert "--stream-rate 50000000" in joined and "--cc cubic" in joined
    assert "--log /o/r1-t2.parquet" in joined and "--json-stream" in joined
    for meta in ("group=run-gd-r1", "transfer=2", "start_offset_s=5", "scenario=paper-fig1"):
        assert meta in argv
    sized = parse(data={"size": "1GB"})
    argv = _sender_argv(sized, Trial("gd", 1, "run", 30.0, (0.0,)), 1, "h:1", Path("l"), None)
    assert "--mem" in argv and "1000000000" in argv and "--duration" not in argv
    tree = parse(data={"kind": "tree", "size": "1MB"})
    argv = _sender_argv(
        tree, Trial("gd", 1, "run", 30.0, (0.0,)), 1, "h:1", Path("l"), Path("/src")
    )
    assert "/src" in argv and "--mem" not in argv
