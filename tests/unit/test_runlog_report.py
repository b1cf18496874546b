"""Run logs (Parquet contract, crash safety) and ``xfer report`` on synthetic logs."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import matplotlib.image as mpimg
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from lab.metrics import summarize
from lab.report import print_summary, report_cmd
from lab.runlog import read_run, read_runs
from policy.signals import PathSignal, SignalVector
from policy.utility import utility
from xfer.observe.interval import Interval
from xfer.observe.runlog import SCHEMA, RunLog

T0 = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.UTC)


def sig(
    t: float,
    streams: int,
    mbit: float,
    *,
    retrans: int = 0,
    segs: int = 1000,
    paths: tuple[PathSignal, ...] = (),
) -> SignalVector:
    return SignalVector(
        t=t, mi_s=1.0, streams=streams, throughput_bps=mbit * 1e6, goodput_bps=mbit * 1e6,
        loss_rate=retrans / segs if segs else None, rtt_ms=20.0, min_rtt_ms=10.0,
        rtt_gradient=0.0, rtt_ratio=2.0, cpu_percent=None, bytes_acked=int(mbit * 1e6 / 8),
        retrans_segs=retrans, data_segs_out=segs, paths=paths,
    )  # fmt: skip


def write_log(path: Path, meta: dict[str, str], rows: Sequence[tuple[int, float, int]]) -> Path:
    """One MI per (streams, Mbit/s, retransmitted of 1000 segments)."""
    with RunLog(path, meta) as log:
        for i, (n, mbit, rt) in enumerate(rows):
            s = sig(i + 1.0, n, mbit, retrans=rt)
            log.append(
                Interval(s, utility=utility(s.throughput_bps, n, s.loss_rate), reward=0.0, action=n)
            )
    return path


# ---------------------------------------------------------------- run log


def test_roundtrip_schema_metadata_and_nulls(tmp_path: Path) -> None:
    p = tmp_path / "r.parquet"
    path = PathSignal("10.1.0.1->10.2.0.2", 2, 5e7, None, 12.5)
    with RunLog(p, {"policy": "gd", "scenario": "fig1", "rep": 3}) as log:
        log.append(Interval(sig(1.0, 4, 100.0, paths=(path,)), utility=1.5, reward=1.0, action=5))
        log.append(Interval(sig(2.0, 5, 0.0, segs=0), utility=0.0, reward=-1.0, action=5))
    run = read_run(p)
    assert run.table.schema.equals(SCHEMA)
    assert run.meta["policy"] == "gd" and run.meta["scenario"] == "fig1" and run.meta["rep"] == "3"
    assert {"host", "run_id", "started_at", "xfer_runlog"} <= set(run.meta)
    rows = run.table.to_pylist()
    assert rows[0]["paths"] == [
        {
            "path_id": "10.1.0.1->10.2.0.2",
            "subflows": 2,
            "throughput_bps": 5e7,
            "loss_rate": None,
            "rtt_ms": 12.5,
        }
    ]
    assert (
        rows[0]["throughput_bps"] == 100e6 and rows[0]["action"] == 5 and rows[0]["utility"] == 1.5
    )
    assert (
        rows[1]["loss_rate"] is None and rows[1]["cpu_percent"] is None and rows[1]["paths"] == []
    )
    assert run.policy == "gd" and len(run) == 2


def test_flushes_every_ten_rows_and_refuses_appends_after_close(tmp_path: Path) -> None:
    p = tmp_path / "r.parquet"
    log = RunLog(p, {"policy": "fixed:4"})
    assert pq.read_table(p).num_rows == 0  # valid from the start
    for i in range(15):
        log.append(Interval(sig(i + 1.0, 4, 10.0), utility=1.0, reward=0.0, action=4))
    assert pq.read_table(p).num_rows == 10
    log.close()
    assert pq.read_table(p).num_rows == 15
    with pytest.raises(RuntimeError, match="closed"):
        log.append(Interval(sig(16.0, 4, 10.0), utility=1.0, reward=0.0, action=4))


def test_a_killed_run_leaves_a_readable_log(tmp_path: Path) -> None:
    p = tmp_path / "killed.parquet"
    code = textwrap.dedent(f"""
        import os, signal
        from policy.signals import SignalVector
        from xfer.observe.interval import Interval
        from xfer.observe.runlog import RunLog
        log = RunLog({str(p)!r}, {{"policy": "bo"}})
        for i in range(25):
            s = SignalVector(t=i + 1.0, mi_s=1.0, streams=3, throughput_bps=1e6, goodput_bps=1e6,
                             loss_rate=0.0, rtt_ms=1.0, min_rtt_ms=1.0, rtt_gradient=0.0, rtt_ratio=1.0)
            log.append(Interval(s, utility=1.0, reward=0.0, action=3))
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, timeout=60)
    assert proc.returncode == -9
    run = read_run(p)
    assert len(run) == 20 and run.meta["policy"] == "bo"


def test_read_refuses_other_parquet_files(tmp_path: Path) -> None:
    p = tmp_path / "other.parquet"
    pq.write_table(pa.table({"x": [1, 2]}), p)
    with pytest.raises(ValueError, match="not an xfer run log"):
        read_runs([p])


# ---------------------------------------------------------------- report


def synthetic_logs(d: Path) -> list[Path]:
    """fig1: fixed:20 (2 runs), gd (2), bo (1); shared: 3 concurrent ppo transfers 10 s apart."""
    fig1 = {"scenario": "fig1"}
    logs = [
        write_log(d / "f20a.parquet", {**fig1, "policy": "fixed:20"}, [(20, 940.0, 0)] * 20),
        write_log(d / "f20b.parquet", {**fig1, "policy": "fixed:20"}, [(20, 960.0, 0)] * 20),
        write_log(d / "f10.parquet", {**fig1, "policy": "fixed:10"}, [(10, 500.0, 0)] * 20),
        # gd: its MA3 reaches 855 (90 % of 950) at t = 7: (700 + 950 + 950) / 3 = 866.7
        write_log(d / "gd1.parquet", {**fig1, "policy": "gd"},
                  [(1, 50.0, 0), (2, 100.0, 0), (4, 200.0, 0), (8, 400.0, 0), (14, 700.0, 0)]
                  + [(20, 950.0, 10)] * 15),
        # gd run 2: at 900 from the start -> time to optimum 3 (the first full 3-MI average)
        write_log(d / "gd2.parquet", {**fig1, "policy": "gd"}, [(18, 900.0, 0)] * 20),
        # bo: never settles above 855
        write_log(d / "bo1.parquet", {**fig1, "policy": "bo"}, [(12, 600.0, 0), (30, 850.0, 50)] * 10),
    ]  # fmt: skip
    for i in range(3):  # shared link: each transfer runs 30 s, started 10 s apart
        start = (T0 + dt.timedelta(seconds=10 * i)).isoformat()
        meta = {"scenario": "shared", "policy": "ppo", "group": "fig3", "started_at": start}
        logs.append(write_log(d / f"ppo{i}.parquet", meta, [(8, 300.0 + 20 * i, 0)] * 30))
    return logs


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object], list[Path]]:
    d = tmp_path_factory.mktemp("report")
    logs = synthetic_logs(d)
    out = d / "figs"
    args = [*map(str, logs), "--out", str(out), "--capacity-bps", "1e9", "--json"]
    res = CliRunner().invoke(report_cmd, args)
    assert res.exit_code == 0, res.output
    return out, json.loads(res.output), logs


def test_report_writes_valid_pngs(report: tuple[Path, dict[str, object], list[Path]]) -> None:
    out, doc, _ = report
    names = {Path(str(p)).name for p in doc["figures"]}  # type: ignore[attr-defined]
    assert names == {
        "throughput_streams_fig1.png", "loss_fig1.png", "throughput_streams_shared.png",
        "loss_shared.png", "throughput_box.png", "concurrent_fig3.png",
    }  # fmt: skip
    for name in names:
        img = mpimg.imread(out / name)
        assert img.ndim == 3 and img.shape[0] > 300 and img.shape[1] > 400
        assert img[..., :3].std() > 0.01  # something was drawn


def test_report_summary_numbers(report: tuple[Path, dict[str, object], list[Path]]) -> None:
    _, doc, _ = report
    fig1, shared = doc["scenarios"]  # type: ignore[index]
    assert fig1["scenario"] == "fig1" and fig1["best_fixed_bps"] == pytest.approx(950e6)
    assert fig1["best_fixed_streams"] == 20
    gd = fig1["policies"]["gd"]
    run1 = (50 + 100 + 200 + 400 + 700 + 950 * 15) / 20
    assert gd["runs"] == 2
    assert gd["mean_throughput_bps"] == pytest.approx((run1 + 900) / 2 * 1e6)
    assert gd["time_to_optimum_s"] == pytest.approx((7 + 3) / 2) and gd["reached"] == 2
    assert gd["loss_rate"] == pytest.approx((10 * 15 / 20000 + 0) / 2)
    bo = fig1["policies"]["bo"]
    assert bo["reached"] == 0 and bo["time_to_optimum_s"] is None
    assert bo["loss_rate"] == pytest.approx(500 / 20000)
    assert bo["link_utilization"] == pytest.approx(0.725)  # (600 + 850) / 2 / 1000
    ppo = shared["policies"]["ppo"]
    # all three run from 20 s to 30 s at 300, 320, 340 Mbit/s
    assert ppo["jfi"] == pytest.approx(960**2 / (3 * (300**2 + 320**2 + 340**2)))
    assert ppo["link_utilization"] == pytest.approx(0.96)
    assert shared["groups"][0]["overlap_s"] == pytest.approx(10.0)


def test_report_table_is_printed(
    report: tuple[Path, dict[str, object], list[Path]], capsys: pytest.CaptureFixture[str]
) -> None:
    _, _, logs = report
    runs = read_runs(logs)
    print_summary([summarize([r for r in runs if r.scenario == s]) for s in ("fig1", "shared")])
    text = capsys.readouterr().out
    for word in ("fixed:20", "gd", "bo", "ppo", "best fixed 950.0 Mbit/s", "5.0 (2/2)"):
        assert word in text


def test_report_refuses_a_non_log(tmp_path: Path) -> None:
    p = tmp_path / "x.parquet"
    pq.write_table(pa.table({"x": [1]}), p)
    res = CliRunner().invoke(report_cmd, [str(p), "--out", str(tmp_path / "o")])
    assert res.exit_code != 0 and "not an xfer run log" in res.output


def test_report_survives_an_empty_log(tmp_path: Path) -> None:
    empty = RunLog(tmp_path / "empty.parquet", {"policy": "ppo", "scenario": "x"})  # never closed
    full = write_log(
        tmp_path / "full.parquet", {"policy": "gd", "scenario": "x"}, [(2, 10.0, 0)] * 3
    )
    res = CliRunner().invoke(
        report_cmd, [str(empty.path), str(full), "--out", str(tmp_path / "o"), "--json"]
    )
    assert res.exit_code == 0, res.output
    pols = json.loads(res.output)["scenarios"][0]["policies"]
    assert pols["ppo"]["runs"] == 1 and pols["ppo"]["mean_throughput_bps"] is None
    assert pols["gd"]["mean_throughput_bps"] == pytest.approx(10e6)


def test_drain_mis_are_marked_and_left_out_of_the_means(tmp_path: Path) -> None:
    from lab.metrics import intervals_mean_utility, run_mean_throughput, run_mean_utility

    p = tmp_path / "drain.parquet"
    records = []
    with RunLog(p, {"policy": "ppo"}) as log:
        for i, (mbit, drain) in enumerate([(100.0, False), (300.0, False), (5.0, True)]):
            s = sig(i + 1.0, 4, mbit)
            log.append(Interval(s, utility=mbit, reward=0.0, action=0, drain=drain))
            records.append(Interval(s, utility=mbit, reward=0.0, action=0, drain=drain).to_dict())
    run = read_run(p)
    assert run.table.column("drain").to_pylist() == [False, False, True]
    assert run_mean_throughput(run) == pytest.approx(200e6)  # the 5 Mbit/s tail is not counted
    assert run_mean_utility(run) == pytest.approx(200.0)
    # the same weighting over the --json-stream records, whole or a window of them
    assert intervals_mean_utility(records) == pytest.approx(200.0)
    assert intervals_mean_utility(records[1:]) == pytest.approx(300.0)
    # a log written before the column existed: every row counts
    old = tmp_path / "old.parquet"
    t = run.table.drop(["drain"])
    pq.write_table(t.replace_schema_metadata(run.meta), old)
    assert read_run(old).steady().all()
