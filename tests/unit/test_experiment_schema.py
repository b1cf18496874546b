"""The experiment file schema (lab.experiment_config) and the run plan built from it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lab.experiment import Trial, _sender_argv, plan
from lab.experiment_config import (
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


def test_plan_runs_sweep_then_interleaved_repetitions_in_rotated_order() -> None:
    exp = parse(repetitions=2, sweep={"streams": [4, 8]}, transfers={"count": 2, "stagger_s": 5})
    trials = plan(exp)
    assert [(t.kind, t.policy, t.repetition) for t in trials] == [
        ("sweep", "fixed:4", 1),
        ("sweep", "fixed:8", 1),
        ("run", "fixed:20", 1),
        ("run", "gd", 1),
        ("run", "gd", 2),
        ("run", "fixed:20", 2),
    ]
    assert trials[0].starts_s == (0.0,) and trials[2].starts_s == (0.0, 5.0)
    three = plan(parse(repetitions=4, policies=["gd", "bo", "ppo"]))
    firsts = [t.policy for t in three if t.kind == "run"][::3]
    assert firsts == ["gd", "bo", "ppo", "gd"]  # no policy always runs first
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


def test_a_gated_sender_waits_for_the_scenario_clock(tmp_path: Path) -> None:
    """Round 46: a single sender in a timed scenario imports its controller, says it is ready,
    and starts only when the harness (having started the scenario's schedule) lets it go, so a
    controller that imports torch meets an early rival at the same point of its transfer as GD.
    The real prelude in a real interpreter, with ``--version`` in place of ``send``."""
    import subprocess
    import sys
    import time

    from lab.experiment import _PRELUDE, _ScheduleClock

    gate = tmp_path / "gate-r1"
    argv = [sys.executable, "-c", _PRELUDE, f"gate:{gate}", "gd", "--version"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, cwd=Path(__file__).parents[2])
    begun: list[float] = []
    clock = _ScheduleClock(lambda: begun.append(time.monotonic()), 0.0, gate)
    out, _ = proc.communicate(timeout=60)
    clock.stop()
    assert proc.returncode == 0 and b"version" in out
    assert len(begun) == 1 and Path(f"{gate}.go").exists()  # the clock began, then let it go

    never: list[float] = []
    idle = _ScheduleClock(lambda: never.append(0.0), 0.0, tmp_path / "nobody")
    time.sleep(0.05)
    idle.stop()  # a sender that never became ready: the schedule never starts
    assert never == [] and not (tmp_path / "nobody.go").exists()
    timed = _ScheduleClock(lambda: never.append(1.0), 0.02, None)
    timed.join(timeout=5)
    assert never == [1.0]  # staggered transfers: the schedule starts after the lead

    # A scenario's head start: the schedule begins at once, the sender goes that much later.
    early = tmp_path / "early"
    Path(f"{early}.ready").touch()
    t0 = time.monotonic()
    head = _ScheduleClock(lambda: begun.append(time.monotonic()), 0.0, early, 0.3)
    head.join(timeout=5)
    assert begun[-1] - t0 < 0.1 and Path(f"{early}.go").exists()
    assert time.monotonic() - t0 >= 0.3


# -- summary.json from synthetic run logs ---------------------------------------------------


def _log(
    path: Path, policy: str, thr: list[float], streams: list[int], meta: dict[str, str]
) -> str:
    from policy.signals import SignalVector
    from policy.utility import utility
    from xfer.observe.interval import Interval
    from xfer.observe.runlog import RunLog

    with RunLog(path, {"policy": policy, "label": policy, "scenario": "paper-fig1", **meta}) as log:
        for i, (x, n) in enumerate(zip(thr, streams, strict=True)):
            sv = SignalVector(
                t=i + 1.0, mi_s=1.0, streams=n, throughput_bps=x, goodput_bps=x, loss_rate=0.0,
                rtt_ms=40.0, min_rtt_ms=40.0, rtt_gradient=0.0, rtt_ratio=1.0,
                retrans_segs=1, data_segs_out=100,
            )  # fmt: skip
            log.append(Interval(sv, utility=utility(x, n, 0.0), reward=0.0, action=0))
    return str(path)


def test_summary_best_fixed_from_sweep_and_utility_ratio(tmp_path: Path) -> None:
    from lab.experiment import TransferResult
    from lab.experiment_summary import summarize

    exp = parse(policies=["gd"], duration=6, sweep={"streams": [10, 20]})
    ok = {"exit_code": 0, "seconds": 6.0}
    results = []
    for n, thr in ((10, 500e6), (20, 900e6)):
        trial = Trial(f"fixed:{n}", 1, "sweep", 6.0, (0.0,))
        log = _log(tmp_path / f"s{n}.parquet", f"fixed:{n}", [thr] * 6, [n] * 6, {"kind": "sweep"})
        results.append(TransferResult(trial, 1, log, ok, 0.0, 0.0))
    gd_thr = [100e6, 300e6, 850e6, 900e6, 900e6, 900e6]
    log = _log(tmp_path / "gd.parquet", "gd", gd_thr, [2, 6, 18, 20, 20, 20], {"kind": "run"})
    results.append(TransferResult(Trial("gd", 1, "run", 6.0, (0.0,)), 1, log, ok, 0.0, 0.0))
    s = summarize(exp, results)
    assert s["best_fixed"]["source"] == "sweep" and s["best_fixed"]["streams"] == 20
    assert s["best_fixed"]["throughput_bps"] == pytest.approx(900e6)
    assert set(s["sweep"]) == {"10", "20"} and list(s["policies"]) == ["gd"]
    gd = s["policies"]["gd"]
    assert gd["mean_throughput_bps"] == pytest.approx(sum(gd_thr) / 6)
    # 3-MI moving average: 416, 683, 883 Mbit/s at t = 3, 4, 5: >= 90 % of 900 from t = 5 on
    assert gd["time_to_optimum_s"] == 5.0 and gd["reached"] == 1
    assert gd["loss_rate"] == pytest.approx(0.01)
    assert gd["streams_min"] == 2 and gd["streams_max"] == 20
    assert 0 < gd["utility_ratio"] < 1 and s["failed_transfers"] == 0


def test_summary_completion_times_and_failures(tmp_path: Path) -> None:
    from lab.experiment import TransferResult
    from lab.experiment_summary import summarize

    exp = parse(policies=["gd"], transfers={"count": 3, "receiver": "shared"}, data={"size": "1GB"})
    trial = Trial("gd", 1, "run", 60.0, (0.0, 0.0, 0.0))
    results = []
    for k, secs in ((1, 20.0), (2, 26.0), (3, None)):
        meta = {"kind": "run", "group": trial.group}
        log = _log(tmp_path / f"t{k}.parquet", "gd", [300e6] * 5, [8] * 5, meta)
        end = {"exit_code": 0, "seconds": secs} if secs else {"exit_code": 4, "error": "stopped"}
        results.append(TransferResult(trial, k, log, end, 1000.0, 1030.0))
    s = summarize(exp, results)
    comp = s["policies"]["gd"]["completion"]["repetitions"][0]
    assert comp["completion_s"][:2] == [pytest.approx(20.0, abs=0.5), pytest.approx(26.0, abs=0.5)]
    assert comp["completion_s"][2] is None and not comp["all_completed"]
    assert comp["straggler_gap_s"] == pytest.approx(6.0, abs=0.5)
    assert s["failed_transfers"] == 1 and s["failures"][0]["transfer"] == 3
    assert s["best_fixed"] is None and s["policies"]["gd"]["utility_ratio"] is None
    assert s["policies"]["gd"]["jfi"] == pytest.approx(1.0)
