"""``train.motion`` (level or motion) and ``train.replay`` (what a spec would have asked) on
small hand-made run directories laid out as ``xfer evaluate`` writes them."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from policy.base import ControllerConfig, make_controller
from policy.signals import SignalVector
from train import motion, replay


def write_log(path: Path, rows: Sequence[Mapping[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as f:
        f.write(json.dumps({"event": "start"}) + "\n")
        for r in rows:
            f.write(json.dumps({"event": "interval", **r}) + "\n")


def own_rows(spec: str = "ppo") -> list[dict[str, object]]:
    """A 22-MI transfer on a 30-ms path (6 clean MIs, 10 at 5 % loss, 6 clean) whose counts
    are ``spec``'s own answers, as its log would hold them."""
    c = make_controller(spec, ControllerConfig(max_streams=64))
    n, rows = c.initial(), []
    for t, loss in enumerate([0.0] * 6 + [0.05] * 10 + [0.0] * 6):
        s = SignalVector(
            t=t + 1.0, mi_s=1.0, streams=n, throughput_bps=1e7 * n, goodput_bps=1e7 * n,
            loss_rate=loss, rtt_ms=30.0, min_rtt_ms=30.0, rtt_gradient=0.0, rtt_ratio=1.0,
            cc="cubic",
        )  # fmt: skip
        rows.append({**s.to_dict(), "utility": 0.0, "action": 0})
        n = c.decide(s)
    return rows


def _sweep(root: Path, scen: str, util: dict[int, list[float]]) -> None:
    for n, us in util.items():
        write_log(root / scen / "sweep" / f"fixed-{n}" / "r1-t1.jsonl",
             [{"streams": n, "utility": u} for u in us])  # fmt: skip


def test_held_is_linear_between_swept_counts_and_proportional_below() -> None:
    sweep = {2: [10.0, 20.0], 8: [40.0, 80.0]}
    assert motion.held(sweep, 2, 1) == 20.0
    assert motion.held(sweep, 5, 0) == pytest.approx(25.0)
    assert motion.held(sweep, 1, 1) == pytest.approx(10.0)
    assert motion.held(sweep, 20, 0) == 40.0
    with pytest.raises(ValueError, match="MI 5"):
        motion.held(sweep, 4, 5)


def test_a_policy_that_earns_what_its_counts_would_has_no_motion(tmp_path: Path) -> None:
    """Sweep: U = 10 N per MI, best at 8 (80). A policy at 4 earning 40 per MI has level and
    ratio 0.5 and no motion; one at 4 earning 30 (it paid for moving) has motion -0.125; from
    MI 2 on (``--skip 2``) the first policy's 8-stream MIs are left out."""
    _sweep(tmp_path / "sw", "s1", {n: [10.0 * n] * 6 for n in (1, 2, 4, 8)})
    logs = tmp_path / "runs" / "suite-validation" / "s1" / "logs"
    write_log(logs / "still" / "r1-t1.jsonl", [{"streams": 4, "utility": 40.0}] * 6)
    write_log(logs / "mover" / "r1-t1.jsonl", [{"streams": 4, "utility": 30.0}] * 6)
    write_log(logs / "mover" / "r2-t1.jsonl", [{"streams": 4, "utility": 30.0}] * 6)
    rows = {s.policy: s for s in motion.splits(tmp_path / "sw", [tmp_path / "runs"])}
    assert rows["still"].ratio == pytest.approx(0.5) and rows["still"].motion == pytest.approx(0)
    assert rows["mover"].runs == 2 and rows["mover"].motion == pytest.approx(-0.125)
    assert rows["mover"].held == pytest.approx(0.5) and rows["mover"].streams == 4.0
    write_log(logs / "late" / "r1-t1.jsonl", [{"streams": 8, "utility": 80.0}] * 2 + [
        {"streams": 2, "utility": 20.0}] * 4)  # fmt: skip
    late = {s.policy: s for s in motion.splits(tmp_path / "sw", [tmp_path / "runs"], skip=2)}
    assert late["late"].ratio == pytest.approx(0.25) and late["late"].streams == 2.0
    assert motion.main([str(tmp_path / "sw"), str(tmp_path / "runs")]) == 0
    assert motion.main([str(tmp_path / "runs"), str(tmp_path / "runs")]) == 2


def _rows(loss: float) -> list[dict[str, object]]:
    """Counts 4-8 and back, 100 Mbit/s, ``loss`` in every MI, a 2-ms path."""
    out: list[dict[str, object]] = []
    for t, n in enumerate([4, 5, 6, 7, 8, 7, 6, 5] * 3):
        s = SignalVector(
            t=t + 1.0, mi_s=1.0, streams=n, throughput_bps=1e8, goodput_bps=1e8,
            loss_rate=loss, rtt_ms=2.0, min_rtt_ms=2.0, rtt_gradient=0.0, rtt_ratio=1.0,
            cc="cubic",
        )  # fmt: skip
        out.append({**s.to_dict(), "utility": 0.0, "action": 0})
    return out


def test_replay_reads_logs_and_shows_what_each_signal_does(tmp_path: Path) -> None:
    """On a history with 5 % loss at every count, the shipped policy asks to retreat more
    often than when shown no loss, and ``exo`` (which reads the loss as a floor) sits in
    between or at the no-loss end; a controller without a target is refused."""
    f = tmp_path / "run" / "suite-validation" / "s1" / "logs" / "ppo" / "r1-t1.jsonl"
    write_log(f, _rows(0.05))
    rows = replay.records(f)
    assert len(rows) == 24 and rows[3].streams == 7 and rows[3].loss_rate == 0.05
    _, ret_ppo = replay.shares(replay.asks("ppo", rows))
    _, ret_none = replay.shares(replay.asks("noloss", rows))
    _, ret_exo = replay.shares(replay.asks("exo:ppo", rows))
    assert ret_none < ret_ppo and ret_exo < ret_ppo, (ret_none, ret_exo, ret_ppo)
    with pytest.raises(ValueError, match="no target"):
        replay.asks("gd", rows)
    assert replay.main([str(tmp_path / "run"), "ppo", "noloss"]) == 0
    assert replay.main([str(tmp_path / "run"), "ppo", "--policy", "gd"]) == 2


def test_a_closed_loop_replay_reproduces_the_runs_own_decisions(tmp_path: Path) -> None:
    """A log whose counts are ``ppo``'s own answers replays with no difference under ``ppo``
    and with some under another controller; drain MIs at the end are not decided."""
    rows = own_rows()
    rows.append({**rows[-1], "streams": 1, "drain": True})  # a drain MI: nobody decided it
    f = tmp_path / "r1-t1.jsonl"
    write_log(f, rows)
    counts, differ = replay.differs("ppo", f)
    assert differ == 0 and len(counts) == 22 and len({r["streams"] for r in rows[:-1]}) > 1
    assert replay.differs("fixed:3", f)[1] > 0
    # --carried (round 55): per run, each transfer's differing decisions; r2 has two
    # transfers, one of them a fixed run of 3s that ppo would not have made
    logs = tmp_path / "run" / "s1" / "logs" / "ppo"
    write_log(logs / "r1-t1.jsonl", rows)
    write_log(logs / "r2-t1.jsonl", rows)
    write_log(logs / "r2-t2.jsonl", [{**r, "streams": 3} for r in rows])
    got = replay.carried("ppo", logs)
    assert [r for r, _ in got] == ["r1", "r2"] and got[0][1] == [0]
    assert got[1][1][0] == 0 and got[1][1][1] > 0
    assert replay.main([str(tmp_path / "run"), "ppo", "--carried"]) == 0
    # --require-all (evaluation rule 21): 1 while a run (r2's second transfer) is not made,
    # 0 once every run is
    run = [str(tmp_path / "run"), "ppo", "--carried", "--require-all"]
    assert replay.main(run) == 1
    (logs / "r2-t2.jsonl").unlink()
    assert replay.main(run) == 0
    with pytest.raises(SystemExit):
        replay.main([str(tmp_path / "run"), "ppo", "--require-all"])
