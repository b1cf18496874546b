"""Which policy a stored block's label ran (round 57): ``summary.json`` records each policy's
files and their sha256, and replays read a label as those files, not as today's.

Since K55 shipped (round 56), plain ``ppo`` is no longer round 45's bundle, which every block of
rounds 46-56 ran under that label; since round 59 it is D (K55 whose band judge reads 3 MIs), and
rounds 56-58 ran K55 as ``ppo``. These tests replay a run of round 45's file under the label
``ppo``, and find each replaced default among the candidates by its bytes."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
from pathlib import Path

import pytest

from lab.experiment import policy_files
from lab.experiment_config import load_experiment
from policy.base import ControllerConfig, checkpoint_files, make_controller
from policy.ppo import DEFAULT_CHECKPOINT
from policy.signals import SignalVector
from train.replay import ROOT, differs, pinned
from train.verdict import replayed_as

R45 = ROOT / "policy" / "weights" / "candidates" / "round45.pt"
R56 = ROOT / "policy" / "weights" / "candidates" / "round56.pt"  # K55 as shipped, rounds 56-58
R59 = ROOT / "policy" / "weights" / "candidates" / "round59d.pt"  # D as shipped, rounds 59-61
R61 = ROOT / "policy" / "weights" / "candidates" / "round61m-shipped.pt"  # M as shipped, 61-64
SHIPPED = "policy/weights/default.pt"


def sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_files_a_controller_decides_with() -> None:
    assert checkpoint_files(make_controller("ppo")) == [DEFAULT_CHECKPOINT]
    assert checkpoint_files(make_controller(f"ppo:{R45}")) == [R45]
    assert checkpoint_files(make_controller("gd")) == []
    # a wrapper reports its inner controller's file; the config moves a ppo without a path
    cfg = ControllerConfig(checkpoint=str(R45))
    assert checkpoint_files(make_controller("guard:ppo", cfg)) == [R45]
    assert checkpoint_files(make_controller(f"ensemble:default+{DEFAULT_CHECKPOINT}", cfg)) == [
        R45,
        DEFAULT_CHECKPOINT,
    ]


def test_an_experiment_records_its_policies_files_by_content() -> None:
    exp = dataclasses.replace(load_experiment("fig1"), policies=("ppo", f"ppo:{R45}", "gd"))
    files = policy_files(exp)
    assert files["ppo"] == {SHIPPED: sha(DEFAULT_CHECKPOINT)}
    assert files[f"ppo:{R45}"] == {"policy/weights/candidates/round45.pt": sha(R45)}
    assert files["gd"] == {}


def test_pinned_finds_the_shipped_file_a_block_ran_by_its_bytes(tmp_path: Path) -> None:
    w = tmp_path / "policy" / "weights"
    (w / "candidates").mkdir(parents=True)
    (w / "default.pt").write_bytes(b"old")
    old = {SHIPPED: hashlib.sha256(b"old").hexdigest()}
    assert pinned(old, tmp_path) == ""  # still the shipped file: nothing to pin
    # a ship replaces default.pt and keeps the old policy as a candidate
    shutil.move(w / "default.pt", w / "candidates" / "old.pt")
    (w / "default.pt").write_bytes(b"new")
    assert pinned(old, tmp_path) == str(w / "candidates" / "old.pt")
    (w / "candidates" / "old.pt").unlink()
    with pytest.raises(ValueError, match="no file under policy/weights holds its bytes"):
        pinned(old, tmp_path)
    # a candidate file that changed cannot be pinned: the runs' policy is gone
    (w / "candidates" / "x.pt").write_bytes(b"x2")
    x = {"policy/weights/candidates/x.pt": hashlib.sha256(b"x1").hexdigest()}
    with pytest.raises(ValueError, match="x.pt is not the file the runs decided with"):
        pinned(x, tmp_path)


def test_every_replaced_default_is_kept_by_its_bytes() -> None:
    """Rounds 46-55 ran round 45's default.pt, rounds 56-58 K55's, rounds 59-61 D's and rounds
    62-64 M's as ``ppo``: a ship keeps the file it replaces byte for byte, so their blocks still
    replay as they ran."""
    assert sha(DEFAULT_CHECKPOINT) not in {sha(R45), sha(R56), sha(R59), sha(R61)}
    for old in (R45, R56, R59, R61):
        assert pinned({SHIPPED: sha(old)}) == str(old)


def _run(spec: str, mis: int = 30) -> list[SignalVector]:
    """``spec`` closed-loop on a made-up path where 20 streams fill it and more lose 1 %."""
    c, rows = make_controller(spec), []
    n = c.initial()
    for k in range(mis):
        over = n > 20
        tput = min(n, 20) * 50e6
        rows.append(SignalVector(
            t=k + 1.0, mi_s=1.0, streams=n, throughput_bps=tput, goodput_bps=tput,
            loss_rate=0.01 if over else 0.0, rtt_ms=13.0 if over else 10.0, min_rtt_ms=10.0,
            rtt_gradient=0.0, rtt_ratio=1.3 if over else 1.0, cc="cubic",
        ))  # fmt: skip
        n = c.decide(rows[-1])
    return rows


def test_a_label_replays_as_the_policy_it_ran(tmp_path: Path) -> None:
    """A run of round 45's file labelled ``ppo`` (as rounds 46-56 ran it): read as today's
    ``ppo`` (K55) it differs; with the block's record, or ``--ran``, it is the label's run."""
    rows = _run(f"ppo:{R45}")
    d = tmp_path / "scen"
    for sub in ("ppo", "cand"):
        (d / "logs" / sub).mkdir(parents=True)
        (d / "logs" / sub / "r1-t1.jsonl").write_text("".join(
            json.dumps({"event": "interval", "drain": False, **dataclasses.asdict(r)}) + "\n"
            for r in rows))  # fmt: skip
    log = str(d / "logs" / "cand" / "r1-t1.parquet")
    assert differs(f"ppo:{R45}", d / "logs" / "ppo" / "r1-t1.jsonl")[1] == 0
    assert differs("ppo", d / "logs" / "ppo" / "r1-t1.jsonl")[1] > 0  # today's decides otherwise

    def summary(record: dict[str, str] | None) -> None:
        base = {"logs": [str(d / "logs" / "ppo" / "r1-t1.parquet")]}
        if record is not None:
            base["checkpoints"] = record  # type: ignore[assignment]
        doc = {"policies": {"ppo": base, "cand": {"logs": [log]}}}
        (d / "summary.json").write_text(json.dumps(doc))

    summary({SHIPPED: sha(R45)})  # the block ran when round 45's bundle was default.pt
    assert replayed_as(d, "cand", "ppo") == ([True], f"ppo read as {R45}")
    summary({SHIPPED: sha(DEFAULT_CHECKPOINT)})  # a block of today's ppo
    assert replayed_as(d, "cand", "ppo") == ([False], "")
    summary(None)  # a block from before the record
    assert replayed_as(d, "cand", "ppo") == ([False], "no record of ppo's files: read as today's")
    assert replayed_as(d, "cand", "ppo", {"ppo": str(R45)}) == (
        [True],
        f"ppo read as {R45} (--ran)",
    )
