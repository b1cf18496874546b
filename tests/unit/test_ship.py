"""train.ship: the better run by held-out utility becomes the default, with its record."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from policy.features import FeatureConfig
from policy.ppo import ActorCritic, load_checkpoint, mlp_arch, save_checkpoint
from policy.signals import SignalVector
from train.ship import ship, ship_ensemble


def _run(tmp_path: Path, name: str, mean: float, seed: int) -> Path:
    run = tmp_path / name
    run.mkdir()
    torch.manual_seed(seed)
    net = ActorCritic(mlp_arch(FeatureConfig(history=2), (8,)))
    save_checkpoint(run / "policy.pt", net, {"seed": seed, "timesteps": 1000})
    ev = {"random": {"utility_ratio_mean": mean}, "named": [{"network": "paper-fig1"}]}
    (run / "eval.json").write_text(json.dumps(ev))
    return run


def test_ships_the_higher_held_out_mean_and_records_why(tmp_path: Path) -> None:
    a = _run(tmp_path, "a", 0.91, seed=1)
    b = _run(tmp_path, "b", 0.95, seed=2)
    dest = tmp_path / "weights" / "default.pt"
    dest.parent.mkdir()
    rec = ship([a, b], dest, note="testbed evaluate, 2 runs")
    assert rec["shipped"] == {
        "kind": "mlp",
        "from_run": str(b),
        "selection": "testbed evaluate, 2 runs",
    }
    assert [c["run"] for c in rec["comparison"]] == [str(a), str(b)]
    assert json.loads(dest.with_suffix(".json").read_text()) == rec
    shipped, ckpt = load_checkpoint(dest)
    ref, _ = load_checkpoint(b / "policy.pt")
    for p, q in zip(shipped.state_dict().values(), ref.state_dict().values(), strict=True):
        torch.testing.assert_close(p, q)
    assert (
        ckpt["meta"]["seed"] == 2
        and ckpt["meta"]["evaluation"]["random"]["utility_ratio_mean"] == 0.95
    )


def test_ships_an_ensemble_as_one_file_and_keeps_a_member_that_was_the_default(
    tmp_path: Path,
) -> None:
    from policy.base import make_controller

    a = _run(tmp_path, "a", 0.91, seed=1) / "policy.pt"
    dest = tmp_path / "weights" / "default.pt"
    dest.parent.mkdir()
    dest.write_bytes(a.read_bytes())  # the current default is one of the members
    b = _run(tmp_path, "b", 0.95, seed=2) / "policy.pt"
    rec = ship_ensemble([dest, b], dest, note="validation and test, 2 runs")
    assert rec["shipped"]["kind"] == "ensemble" and len(rec["members"]) == 2
    assert [m["training"]["seed"] for m in rec["members"]] == [1, 2]
    assert json.loads(dest.with_suffix(".json").read_text()) == rec
    c = make_controller(f"ppo:{dest}")
    assert len(c.nets) == 2 and c.meta["selection"] == "validation and test, 2 runs"
    ref, _ = load_checkpoint(a)
    for p, q in zip(c.nets[0].state_dict().values(), ref.state_dict().values(), strict=True):
        torch.testing.assert_close(p, q)
    assert c.meta["rule"] == "mean" and rec["shipped"]["rule"] == "mean"


def test_ships_an_ensemble_with_its_rule(tmp_path: Path) -> None:
    import pytest

    from policy.base import make_controller
    from policy.ppo import combine_veto

    a = _run(tmp_path, "a", 0.91, seed=1) / "policy.pt"
    b = _run(tmp_path, "b", 0.95, seed=2) / "policy.pt"
    dest = tmp_path / "default.pt"
    rec = ship_ensemble([a, b], dest, note="test", rule="veto")
    c = make_controller(f"ppo:{dest}")
    assert rec["shipped"]["rule"] == "veto" and c.combine is combine_veto
    with pytest.raises(ValueError, match="unknown rule"):
        ship_ensemble([a, b], tmp_path / "x.pt", rule="max")
    assert not (tmp_path / "x.pt").exists()


def test_ships_one_checkpoint_with_a_judge_that_ppo_applies_itself(tmp_path: Path) -> None:
    import pytest

    from policy.base import ControllerConfig, make_controller
    from policy.judge import JudgeConfig
    from policy.signals import SignalVector
    from train.ship import ship_checkpoint

    src = Path(__file__).parents[2] / "policy/weights/candidates/hold-kick22-s3.pt"
    dest = tmp_path / "default.pt"
    rec = ship_checkpoint(src, dest, note="chain, 2 runs", judge=JudgeConfig())
    assert rec["shipped"]["judge"] == JudgeConfig().to_dict()
    shipped = make_controller(f"ppo:{dest}", ControllerConfig())
    assert shipped.judge is not None and shipped.meta["selection"] == "chain, 2 runs"  # type: ignore[attr-defined]
    assert make_controller(f"ppo:{src}").judge is None  # type: ignore[attr-defined]
    wrapped = make_controller(f"judge:ppo:{src}", ControllerConfig())
    with pytest.raises(ValueError, match="judges its adds already"):
        make_controller(f"judge:ppo:{dest}")
    # The shipped file decides exactly as judge:ppo around the same weights: beside others'
    # 4 % loss each stream gets 3 Mbit/s, and every add's first MI bursts.
    paths: list[list[int]] = []
    for c in (shipped, wrapped):
        n = prev = c.initial()
        path = []
        for t in range(30):
            thr = 3e6 * n
            s = SignalVector(
                t=t + 1.0, mi_s=1.0, streams=n, throughput_bps=thr, goodput_bps=thr,
                loss_rate=0.12 if n - prev >= 4 else 0.04, rtt_ms=30.0, min_rtt_ms=30.0,
                rtt_gradient=0.0, rtt_ratio=1.2,
            )  # fmt: skip
            prev, n = n, c.decide(s)
            path.append(n)
        paths.append(path)
    assert paths[0] == paths[1] and max(paths[0]) >= 12
    assert shipped.judge.paid + shipped.judge.unpaid >= 1  # type: ignore[attr-defined]


def test_ships_an_ensemble_with_a_warmup_that_ppo_applies_itself(tmp_path: Path) -> None:
    """``--warmup cc=bbr`` in the bundle decides exactly as ``warmup:cc=bbr:ppo`` around the
    same bundle without it, and a second warm-up around it is refused."""
    import pytest

    from policy.base import ControllerConfig, make_controller
    from policy.signals import SignalVector
    from policy.warmup import WarmupConfig
    from train.ship import ship_ensemble

    cand = Path(__file__).parents[2] / "policy/weights/candidates"
    members = [cand / "hold-s2.pt", cand / "onoff-s4.pt"]
    plain, dest = tmp_path / "plain.pt", tmp_path / "default.pt"
    ship_ensemble(members, plain, note="plain")
    rec = ship_ensemble(members, dest, note="warm", warmup=WarmupConfig.parse("cc=bbr"))
    assert rec["shipped"]["warmup"] == {
        "rtts": 16.0,
        "cc": "bbr",
        "carry": 0,
        "probe": 0,
        "climb": 0,
        "climb_loss": 0.0,
        "climb_peak": 0,
        "climb_probe": 0,
    }
    # a meta written before a key existed (the shipped bundle's: no ``probe``) reads as its
    # default
    assert WarmupConfig.from_dict({"rtts": 16.0, "cc": "bbr", "carry": 0}).probe == 0
    assert make_controller(f"ppo:{plain}").warmup is None  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="applies a warm-up already"):
        make_controller(f"warmup:ppo:{dest}")
    # Our BBR streams on a 150-ms path whose throughput grows with the count (then, on BBR,
    # the adds are deferred), and the same on cubic (then nothing is).
    for cc, deferred in (("bbr", True), ("cubic", False)):
        paths, ctrls = [], []
        for spec in (f"ppo:{dest}", f"warmup:cc=bbr:ppo:{plain}", f"ppo:{plain}"):
            c = make_controller(spec, ControllerConfig(max_streams=64))
            n, path = c.initial(), []
            for t in range(12):
                thr = 8e6 * n
                s = SignalVector(
                    t=t + 1.0, mi_s=1.0, streams=n, throughput_bps=thr, goodput_bps=thr,
                    loss_rate=0.0, rtt_ms=150.0, min_rtt_ms=150.0, rtt_gradient=0.0,
                    rtt_ratio=1.0, cc=cc,
                )  # fmt: skip
                n = c.decide(s)
                path.append(n)
            paths.append(path)
            ctrls.append(c)
        assert paths[0] == paths[1], cc
        assert (paths[0] != paths[2]) is deferred, (cc, paths)
        assert (ctrls[0].warmup.deferred > 0) is deferred  # type: ignore[attr-defined]


def test_ships_an_ensemble_with_fast_that_ppo_applies_itself(tmp_path: Path) -> None:
    """``--fast`` in the bundle asks the MI lengths ``fast:ppo`` asks around the same bundle
    without it, decides as that bundle does, and a second ``fast`` around it is refused."""
    import pytest

    from policy.base import make_controller, mi_length
    from policy.fast import FastConfig

    cand = Path(__file__).parents[2] / "policy/weights/candidates"
    members = [cand / "hold-s2.pt", cand / "onoff-s4.pt"]
    plain, dest = tmp_path / "plain.pt", tmp_path / "default.pt"
    ship_ensemble(members, plain, note="plain")
    rec = ship_ensemble(members, dest, note="fast", fast=FastConfig())
    assert rec["shipped"]["fast"] == {
        "mis": 8,
        "div": 4,
        "max_rtt_ms": 1.0,
        "min_rtts": 50.0,
        "grow": 0,
        "ramp": 0,
        "fine": 0,
        "settle": 0,
    }
    for path in (((1, 0.07), (8, 0.9), (9, 0.07), (10, 0.07)), ((1, 40.0), (2, 0.07)),
                 ((1, None), (2, 0.07)), ((1, 0.07), (2, 0.07))):  # fmt: skip
        inside, around = make_controller(f"ppo:{dest}"), make_controller(f"fast:ppo:{plain}")
        a = [mi_length(inside, k, rtt, 1.0) for k, rtt in path]
        assert a == [mi_length(around, k, rtt, 1.0) for k, rtt in path], path
    assert a == [0.25, 0.25]
    assert mi_length(make_controller(f"ppo:{plain}"), 1, 0.07, 1.0) == 1.0
    with pytest.raises(ValueError, match="shortens its MIs already"):
        make_controller(f"fast:ppo:{dest}")


def test_a_shipped_fast_with_grow_decides_as_fast_around_the_bundle(tmp_path: Path) -> None:
    """``meta["fast"]`` with ``grow`` (1: the phase ends at the first retreat; 2: and no
    retreat is taken on a short MI) makes ``ppo`` decide and size its MIs as ``fast:grow=G``
    around the same bundle without it, MI for MI, run as the engine runs it (``clocked``), on
    a LAN where the shipped members retreat from heavy loss at 7 streams and more."""
    from policy.fast import FastConfig
    from tests.unit.test_fast import clocked

    cand = Path(__file__).parents[2] / "policy/weights/candidates"
    members = [cand / "hold-s2.pt", cand / "onoff-s4.pt"]
    plain = tmp_path / "plain.pt"
    ship_ensemble(members, plain, note="plain")
    loss = {n: 0.2 for n in range(7, 65)}
    for grow in (1, 2):
        dest = tmp_path / f"grow{grow}.pt"
        ship_ensemble(members, dest, note="fast", fast=FastConfig(grow=grow))
        inside = clocked(f"ppo:{dest}", loss, mis=12)
        around = clocked(f"fast:grow={grow}:ppo:{plain}", loss, mis=12)
        assert inside[:2] == around[:2], grow
        assert min(inside[1]) == 0.25 and inside[1][-1] == 1.0  # a fast phase, then 1-s MIs
        assert inside[2].fast.held == around[2].phase.held  # type: ignore[attr-defined]
        assert inside[2].fast.held == (2 if grow == 2 else 0)  # type: ignore[attr-defined]
    # ramp=5 (F43): the same ramp, and the bundle decides from its count on the same history
    dest = tmp_path / "ramp.pt"
    ship_ensemble(members, dest, note="fast", fast=FastConfig(ramp=5))
    loss = {n: 0.2 for n in range(17, 65)}  # the ramp goes 2, 7, 12, 17 and back to 12
    inside = clocked(f"ppo:{dest}", loss, mis=12)
    around = clocked(f"fast:ramp=5:ppo:{plain}", loss, mis=12)
    assert inside[:2] == around[:2] and inside[0][:5] == [2, 7, 12, 17, 12]
    assert inside[2].fast.best[1] == 12  # type: ignore[attr-defined]
    # ramp=5,fine=1 (F44): the climb misses at 17, the search goes 13, 14 and misses at 15
    dest = tmp_path / "fine.pt"
    ship_ensemble(members, dest, note="fast", fast=FastConfig(ramp=5, fine=1))
    loss = {n: 0.2 for n in range(15, 65)}
    inside = clocked(f"ppo:{dest}", loss, mis=12)
    around = clocked(f"fast:ramp=5,fine=1:ppo:{plain}", loss, mis=12)
    assert inside[:2] == around[:2] and inside[0][:7] == [2, 7, 12, 17, 13, 14, 15]
    assert inside[2].fast.best[1] == 14  # type: ignore[attr-defined]
    # ramp=5,fine=1,settle=1 (F45): the same, each count judged on its second short MI
    dest = tmp_path / "settle.pt"
    ship_ensemble(members, dest, note="fast", fast=FastConfig(ramp=5, fine=1, settle=1))
    inside = clocked(f"ppo:{dest}", loss, mis=12)
    around = clocked(f"fast:ramp=5,fine=1,settle=1:ppo:{plain}", loss, mis=12)
    assert inside[:2] == around[:2] and inside[0][:8] == [2, 7, 7, 12, 12, 17, 17, 13]


def _walks(
    specs: tuple[str, ...], mis: int, world: Callable[[int, int], SignalVector]
) -> tuple[list[list[int]], list[object]]:
    """Each controller's counts over ``mis`` MIs of ``world(t, n)`` (the MI it measured at n
    streams), and the controllers."""
    from policy.base import ControllerConfig, make_controller

    paths, ctrls = [], []
    for spec in specs:
        c = make_controller(spec, ControllerConfig(max_streams=64))
        n, path = c.initial(), []
        for t in range(mis):
            n = c.decide(world(t, n))
            path.append(n)
        paths.append(path)
        ctrls.append(c)
    return paths, ctrls


def test_ships_an_ensemble_with_a_ledger_that_ppo_applies_itself(tmp_path: Path) -> None:
    """``--ledger`` in the bundle decides MI for MI as ``ledger:...:ppo`` around the same
    bundle without it, where the ledger acts (a LAN shared with reno streams that hold 5 %
    loss at any count of ours, as hand-lan-reno), and a second ledger around it is refused."""
    import pytest

    from policy.base import make_controller
    from policy.ledger import LedgerConfig
    from tests.unit.test_ledger import _mi, shared_lan
    from train.ship import ship_ensemble

    cand = Path(__file__).parents[2] / "policy/weights/candidates"
    members = [cand / "hold-s2.pt", cand / "onoff-s4.pt"]
    plain, dest = tmp_path / "plain.pt", tmp_path / "default.pt"
    ship_ensemble(members, plain, note="plain")
    opts = "seek=1,max_rtt_ms=20"
    rec = ship_ensemble(members, dest, note="ledger", ledger=LedgerConfig.parse(opts))
    assert rec["shipped"]["ledger"] == LedgerConfig.parse(opts).to_dict()
    assert make_controller(f"ppo:{plain}").ledger is None  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="keeps a ledger already"):
        make_controller(f"ledger:ppo:{dest}")
    specs = (f"ppo:{dest}", f"ledger:{opts}:ppo:{plain}", f"ppo:{plain}")
    paths, ctrls = _walks(specs, 20, lambda t, n: _mi(t, n, *shared_lan(n)))
    assert paths[0] == paths[1]
    assert paths[0] != paths[2], paths  # it acted: the plain bundle sits lower
    acted = ctrls[0].ledger  # type: ignore[attr-defined]
    assert acted.vetoes + acted.undos + acted.seeks > 0


def test_ships_an_ensemble_with_a_shed_that_ppo_applies_itself(tmp_path: Path) -> None:
    """``--shed`` in the bundle decides MI for MI as ``shed:...:ppo`` around the same bundle
    without it, on fig1's shape (1 Gbit/s, 40 ms, 50 Mbit/s per stream: loss beyond 20
    streams) where the pair ramps past 20 and retreats, and a second shed around it is
    refused."""
    import pytest

    from policy.base import make_controller
    from policy.shed import ShedConfig
    from tests.unit.test_shed import _mi
    from train.ship import ship_ensemble

    cand = Path(__file__).parents[2] / "policy/weights/candidates"
    members = [cand / "hold-s2.pt", cand / "onoff-s4.pt"]
    plain, dest = tmp_path / "plain.pt", tmp_path / "default.pt"
    ship_ensemble(members, plain, note="plain")
    rec = ship_ensemble(members, dest, note="shed", shed=ShedConfig.parse("beta=0.1"))
    assert rec["shipped"]["shed"] == ShedConfig(beta=0.1).to_dict()
    assert make_controller(f"ppo:{plain}").shed is None  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="sheds already"):
        make_controller(f"shed:ppo:{dest}")

    def fig1(t: int, n: int) -> SignalVector:
        sv = _mi(t, n, loss=0.02 if n > 20 else 0.0)
        return replace(sv, throughput_bps=min(50e6 * n, 950e6))

    specs = (f"ppo:{dest}", f"shed:beta=0.1:ppo:{plain}", f"ppo:{plain}")
    paths, ctrls = _walks(specs, 30, fig1)
    assert paths[0] == paths[1]
    assert paths[0] != paths[2], paths  # it acted
    assert ctrls[0].shed.sheds > 0  # type: ignore[attr-defined]


def test_the_shipped_file_decides_as_its_record_says(tmp_path: Path) -> None:
    """``policy/weights/default.json`` names the members, rule, warm-up, ledger, shed, band and
    judge of the shipped bundle; the policy built from it decides as ``ppo`` does MI for MI, on
    fig1's 40-ms path, on a 150-ms BBR path whose rate grows with the count, and beside 1 % loss
    that others cause (the record is how anyone rebuilds a policy that shipped once). Without a
    band the record is rebuilt as a spec of wrappers; a band (round 47) exists only inside a
    bundle, so then the record's members and rules are shipped again into a file of their own."""
    from policy.ppo import DEFAULT_CHECKPOINT
    from tests.unit.test_guard import world_path
    from train.ship import ship_from_record

    assert DEFAULT_CHECKPOINT.exists(), "the repository ships policy/weights/default.pt"
    root = Path(__file__).parents[2]
    rec = json.loads(DEFAULT_CHECKPOINT.with_suffix(".json").read_text())["shipped"]
    assert rec["kind"] == "ensemble" and rec["rule"] == "mean"
    # a judge ships only scoped to the band's member (round 49b's ``band=1``, shipped round 56)
    assert not rec.get("judge") or (rec.get("band") and rec["judge"].get("band") == 1), rec
    if rec.get("band"):
        assert not rec.get("fast")
        spec = f"ppo:{tmp_path / 'rebuilt.pt'}"
        ship_from_record(DEFAULT_CHECKPOINT.with_suffix(".json"), tmp_path / "rebuilt.pt", "x")
    else:
        spec = "ensemble:" + "+".join(str(root / m) for m in rec["members"])
    for rule in ("warmup", "ledger", "shed", "fast"):  # inside out: fast the outermost
        if rec.get(rule) and not rec.get("band"):
            spec = f"{rule}:" + ",".join(f"{k}={v}" for k, v in rec[rule].items()) + ":" + spec
    from policy.base import make_controller, mi_length

    for path in (((1, 0.07), (8, 0.9), (9, 0.07)), ((1, 1.6), (2, 1.0)), ((1, None), (2, 0.07))):
        shipped, rebuilt = make_controller("ppo"), make_controller(spec)
        a = [mi_length(shipped, k, rtt, 1.0) for k, rtt in path]
        assert a == [mi_length(rebuilt, k, rtt, 1.0) for k, rtt in path], path
    for rtt, cc, loss, per_stream in ((40.0, "cubic", 0.0, 50.0), (150.0, "bbr", 0.0, 50.0),
                                      (150.0, "bbr", 0.01, 20.0)):  # fmt: skip
        paths = [world_path(s, rtt, cc, 16, loss, per_stream)[1] for s in (spec, "ppo")]
        assert paths[0] == paths[1], (rtt, cc, loss, paths)
        assert len(set(paths[0])) > 1 or loss, paths  # the comparison covers changes


def test_a_banded_bundle_decides_by_its_inside_member_only_inside_the_band(
    tmp_path: Path,
) -> None:
    """``--band`` (round 47): a bundle of the shipped pair plus the kicked hold member decides
    MI for MI as that member alone on a path whose minimum RTT is inside the band, and as the
    pair without it outside the band or when the RTT is unknown; a bad member index or band is
    refused."""
    import pytest

    from policy.band import BandConfig
    from policy.base import ControllerConfig, make_controller
    from policy.signals import SignalVector

    cand = Path(__file__).parents[2] / "policy/weights/candidates"
    pair = [cand / "hold-s2.pt", cand / "onoff-s4.pt"]
    kick = cand / "hold-kick22-s3.pt"
    dest, plain = tmp_path / "banded.pt", tmp_path / "pair.pt"
    ship_ensemble(pair, plain, note="pair")
    rec = ship_ensemble([*pair, kick], dest, note="band", band=BandConfig.parse("max_rtt_ms=60"))
    assert rec["shipped"]["band"] == {
        "min_rtt_ms": 20.0, "max_rtt_ms": 60.0, "inside": -1, "not_cc": "", "min_loss": 0.0,
        "loss_window": 5, "fresh": 0, "max_n": 0, "low_loss": 0.01,
        "low_window": 3,
    }  # fmt: skip

    def walk(
        spec: str, min_rtt_ms: float | None, cc: str | None = None, loss: float = 0.02
    ) -> list[int]:
        c = make_controller(spec, ControllerConfig(max_streams=64))
        n, path = c.initial(), []
        for t in range(16):  # a 30-ms path shared with a BBR rival: 2 % loss at any count
            thr = 12e6 * n
            n = c.decide(SignalVector(
                t=t + 1.0, mi_s=1.0, streams=n, throughput_bps=thr, goodput_bps=thr,
                loss_rate=loss, rtt_ms=33.0, min_rtt_ms=min_rtt_ms, rtt_gradient=0.0,
                rtt_ratio=1.1, cc=cc,
            ))  # fmt: skip
            path.append(n)
        return path

    inside, outside = walk(f"ppo:{kick}", 30.0), walk(f"ppo:{plain}", 30.0)
    assert inside != outside  # the two decide differently here, so the test can tell
    assert walk(f"ppo:{dest}", 30.0) == inside
    assert walk(f"ppo:{dest}", 80.0) == walk(f"ppo:{plain}", 80.0)
    assert walk(f"ppo:{dest}", None) == walk(f"ppo:{plain}", None)
    # not_cc=bbr (round 47c): our BBR streams inside the band are the pair's again
    nocc = tmp_path / "nocc.pt"
    ship_ensemble([*pair, kick], nocc, note="band", band=BandConfig.parse("not_cc=bbr"))
    assert walk(f"ppo:{nocc}", 30.0, "cubic") == inside
    assert walk(f"ppo:{nocc}", 30.0, "bbr") == walk(f"ppo:{plain}", 30.0, "bbr")
    assert walk(f"ppo:{dest}", 30.0, "bbr") == walk(f"ppo:{kick}", 30.0, "bbr")
    # min_loss (round 48): inside the band, the kicked member decides only once the median
    # loss of the last loss_window MIs reaches min_loss; on a clean path never
    lossy = tmp_path / "lossy.pt"
    ship_ensemble([*pair, kick], lossy, note="band", band=BandConfig.parse("min_loss=0.01"))
    assert walk(f"ppo:{lossy}", 30.0, "cubic", 0.0) == walk(f"ppo:{plain}", 30.0, "cubic", 0.0)
    gated = walk(f"ppo:{lossy}", 30.0, "cubic")
    assert gated[:4] == outside[:4]  # the window (5 MIs) is not full yet: the pair decides
    assert gated != outside  # full, at 2 % > 1 %: the kicked member decides
    assert walk(f"ppo:{lossy}", 30.0, "cubic", 0.005) == walk(f"ppo:{plain}", 30.0, "cubic", 0.005)
    # fresh=1 (round 48b): at the MI the band first opens, the kicked member decides from a
    # history that starts there, as a controller of its own would from that count
    fresh = tmp_path / "fresh.pt"
    ship_ensemble([*pair, kick], fresh, note="band",
                  band=BandConfig.parse("min_loss=0.01,fresh=1"))  # fmt: skip
    refreshed = walk(f"ppo:{fresh}", 30.0, "cubic")
    assert refreshed[:4] == outside[:4] and refreshed != gated
    k = make_controller(f"ppo:{kick}", ControllerConfig(max_streams=64))
    k.target = outside[3]  # the count the pair left it at the MI the band opens (the 5th)
    first = k.decide(SignalVector(
        t=5.0, mi_s=1.0, streams=outside[3], throughput_bps=12e6 * outside[3],
        goodput_bps=12e6 * outside[3], loss_rate=0.02, rtt_ms=33.0, min_rtt_ms=30.0,
        rtt_gradient=0.0, rtt_ratio=1.1, cc="cubic",
    ))  # fmt: skip
    assert refreshed[4] == first
    with pytest.raises(ValueError, match="band: member 3 of a bundle of 3"):
        ship_ensemble([*pair, kick], tmp_path / "x.pt", band=BandConfig(inside=3))
    with pytest.raises(ValueError, match="band: needs"):
        BandConfig.parse("min_rtt_ms=60,max_rtt_ms=20")
    with pytest.raises(ValueError, match="band: needs 0 <= min_loss"):
        BandConfig.parse("min_loss=1.5")


def test_the_band_loss_window_is_a_median_of_the_last_mis() -> None:
    """``Band.rows``: one MI of slow-start loss does not open the band, a run of others' loss
    does, unknown loss is not counted, and the band closes when the loss goes."""
    from policy.band import Band, BandConfig

    band = Band(BandConfig.parse("min_loss=0.01,loss_window=3"), 3)
    assert (band.outside, band.inside) == ([0, 1], [2])
    seen = [band.rows(30.0, "cubic", x) for x in (0.08, 0.0, 0.0, None, 0.02, 0.03, 0.0, 0.0)]
    assert seen == [[0, 1]] * 5 + [[2], [2], [0, 1]]
    assert band.rows(80.0, "cubic", 0.05) == [0, 1]  # outside the RTT band whatever the loss
    assert band.opened == 1 and not band.restart  # fresh=0: never a restart
    # fresh=1: a restart at the MI the band first opens, not at later openings
    band = Band(BandConfig.parse("min_loss=0.01,loss_window=1,fresh=1"), 3)
    restarts = []
    for x in (0.0, 0.02, 0.02, 0.0, 0.02):
        band.rows(30.0, "cubic", x)
        restarts.append(band.restart)
    assert restarts == [False, True, False, False, False] and band.opened == 2


def test_a_max_n_band_also_opens_on_the_loss_read_at_a_low_count() -> None:
    """``max_n``: the loss a pair reads at two or more streams (its own slow start) opens the
    band only through ``min_loss``'s gate; three MIs at one stream reading others' 1 % open it
    too, and it then holds on every MI's loss at ``low_loss``; after it closes, a reopening
    waits for fresh low-count MIs."""
    from policy.band import Band, BandConfig

    with pytest.raises(ValueError, match="max_n"):
        BandConfig.parse("max_n=-1")
    spec = "not_cc=bbr,min_loss=0.02,loss_window=5,max_n=1,low_loss=0.01,low_window=3"
    band = Band(BandConfig.parse(spec), 3)
    mis = [(0.023, 2), (0.014, 3), (0.027, 8), (0.001, 7), (0.004, 6), (0.012, 10)]  # gen-v2-v04
    assert [band.rows(29.0, "cubic", x, n) for x, n in mis] == [[0, 1]] * 6 and band.opened == 0
    band = Band(BandConfig.parse(spec), 3)
    mis = [(0.09, 2), (0.0, 1), (0.017, 1), (0.012, 1), (0.015, 6), (0.012, 11), (0.013, 16)]
    seen = [band.rows(30.0, "cubic", x, n) for x, n in mis]  # established BBR: 1-2 %
    assert seen == [[0, 1]] * 3 + [[2]] * 4 and band.opened == 1 and band.hold == 0.01
    assert band.rows(30.0, "bbr", 0.05, 16) == [0, 1]  # not_cc and the RTT edges still apply
    # a band opened by min_loss holds on min_loss, as without max_n
    band = Band(BandConfig.parse(spec), 3)
    seen = [band.rows(30.0, "cubic", x, 20) for x in (0.3, 0.5, 0.3, 0.2, 0.1, *[0.015] * 3)]
    assert seen == [[0, 1]] * 4 + [[2]] * 3 + [[0, 1]] and band.hold == 0.02
    # closed again: the low-count window starts empty
    band = Band(BandConfig.parse(spec.replace("loss_window=5", "loss_window=1")), 3)
    seen = [band.rows(30.0, "cubic", x, n) for x, n in [(0.015, 1)] * 3 + [(0.0, 9), (0.015, 1)]]
    assert seen == [[0, 1]] * 2 + [[2], [0, 1], [0, 1]]
    # without a stream count (an older caller) no MI is low
    band = Band(BandConfig.parse(spec.replace("loss_window=5", "loss_window=1")), 3)
    assert [band.rows(30.0, "cubic", 0.015) for _ in range(4)] == [[0, 1]] * 4


def test_a_band_scoped_judge_judges_only_the_bands_member(tmp_path: Path) -> None:
    """``judge band=1`` in a banded bundle (round 49b): inside the band the bundle decides as
    ``judge:ppo`` around the band's member alone; outside it as the bundle without a judge; the
    judge starts afresh each time the band opens; elsewhere the option is refused."""
    import pytest
    import torch

    from policy.band import BandConfig
    from policy.base import ControllerConfig, make_controller
    from policy.judge import JudgeConfig
    from policy.signals import SignalVector
    from train.ship import ship_checkpoint

    cand = Path(__file__).parents[2] / "policy/weights/candidates"
    pair, kick = [cand / "hold-s2.pt", cand / "onoff-s4.pt"], cand / "hold-kick22-s3.pt"
    banded, judged = tmp_path / "banded.pt", tmp_path / "judged.pt"
    ship_ensemble([*pair, kick], banded, note="band", band=BandConfig.parse("max_rtt_ms=60"))
    rec = ship_ensemble([*pair, kick], judged, note="band, judged", judge=JudgeConfig(band=1),
                        band=BandConfig.parse("max_rtt_ms=60"))  # fmt: skip
    assert rec["shipped"]["judge"]["band"] == 1

    def walk(spec: str, min_rtt_ms: float, losses: list[float] | None = None) -> list[int]:
        """Beside others' 4 % loss each stream gets 3 Mbit/s and every add's first MI bursts
        (``losses``: the others' loss per MI instead)."""
        c = make_controller(spec, ControllerConfig(max_streams=64))
        n = prev = c.initial()
        path = []
        for t in range(30):
            base = 0.04 if losses is None else losses[t]
            thr = 3e6 * n
            s = SignalVector(
                t=t + 1.0, mi_s=1.0, streams=n, throughput_bps=thr, goodput_bps=thr,
                loss_rate=base + 0.08 * (n - prev >= 4), rtt_ms=33.0, min_rtt_ms=min_rtt_ms,
                rtt_gradient=0.0, rtt_ratio=1.2, cc="cubic",
            )  # fmt: skip
            prev, n = n, c.decide(s)
            path.append(n)
        return path

    inside = walk(f"ppo:{judged}", 30.0)
    assert inside == walk(f"judge:ppo:{kick}", 30.0) != walk(f"ppo:{banded}", 30.0)
    assert walk(f"ppo:{judged}", 80.0) == walk(f"ppo:{banded}", 80.0)
    # a band that opens, closes and opens again (min_loss): the judge restarts at each opening
    gated = tmp_path / "gated.pt"
    ship_ensemble([*pair, kick], gated, note="band, judged", judge=JudgeConfig(band=1),
                  band=BandConfig.parse("max_rtt_ms=60,min_loss=0.01,loss_window=1"))  # fmt: skip
    c = make_controller(f"ppo:{gated}", ControllerConfig(max_streams=64))
    judges = []
    for t, loss in enumerate([0.0, 0.02, 0.02, 0.0, 0.0, 0.02, 0.02]):
        c.decide(SignalVector(
            t=t + 1.0, mi_s=1.0, streams=c.target, throughput_bps=3e6 * c.target,
            goodput_bps=3e6 * c.target, loss_rate=loss, rtt_ms=33.0, min_rtt_ms=30.0,
            rtt_gradient=0.0, rtt_ratio=1.2, cc="cubic",
        ))  # fmt: skip
        judges.append(id(c.judge))
    assert judges[1] == judges[2] == judges[3] == judges[4] != judges[5] == judges[6]
    # with mis (round 58) the judge keeps counting utilities while the band is closed, and a
    # judge started afresh at an opening averages the MIs before it too
    from policy.utility import utility_of

    mis3 = tmp_path / "mis3.pt"
    ship_ensemble([*pair, kick], mis3, note="band, judged over 3 MIs",
                  judge=JudgeConfig(band=1, mis=3),
                  band=BandConfig.parse("max_rtt_ms=60,min_loss=0.01,loss_window=1"))  # fmt: skip
    c = make_controller(f"ppo:{mis3}", ControllerConfig(max_streams=64))
    seen: list[float] = []
    for t, loss in enumerate([0.0, 0.0, 0.0, 0.02, 0.0, 0.0, 0.02]):
        sv = SignalVector(
            t=t + 1.0, mi_s=1.0, streams=c.target, throughput_bps=(3e6 + 1e5 * t) * c.target,
            goodput_bps=3e6 * c.target, loss_rate=loss, rtt_ms=33.0, min_rtt_ms=30.0,
            rtt_gradient=0.0, rtt_ratio=1.2, cc="cubic",
        )  # fmt: skip
        c.decide(sv)
        seen.append(utility_of(sv))
        assert c.judge is not None and list(c.judge.recent) == seen[-3:]
    # refused where there is no band to scope it to
    with pytest.raises(ValueError, match="band=1"):
        make_controller(f"judge:band=1:ppo:{kick}", ControllerConfig())
    with pytest.raises(ValueError, match="band=1 needs a bundle with a band"):
        ship_checkpoint(kick, tmp_path / "one.pt", note="x", judge=JudgeConfig(band=1))
    with pytest.raises(ValueError, match="band=1 needs a bundle with a band"):
        ship_ensemble([*pair, kick], tmp_path / "nb.pt", note="x", judge=JudgeConfig(band=1))
    assert not (tmp_path / "one.pt").exists() and not (tmp_path / "nb.pt").exists()
    # a file that names it anyway (written by hand) is refused when it is loaded
    ship_checkpoint(kick, tmp_path / "one.pt", note="x", judge=JudgeConfig())
    one = torch.load(tmp_path / "one.pt", weights_only=False)
    one["meta"]["judge"]["band"] = 1
    torch.save(one, tmp_path / "one.pt")
    with pytest.raises(ValueError, match="band=1 needs a bundle with a band"):
        make_controller(f"ppo:{tmp_path / 'one.pt'}", ControllerConfig())
    with pytest.raises(ValueError, match="band must be 0 or 1"):
        JudgeConfig.parse("band=2")


def test_a_record_ships_again_with_one_rules_fields_changed(tmp_path: Path) -> None:
    """``ship_from_record`` (``train.ship --from-record``): the shipped record with no change
    decides as ``ppo`` MI for MI; round 45's with ``ledger:probe=4,...`` changes only those
    ledger fields, the probe acts on a 4-ms path where the rate grows with the count under loss
    others cause (gen-v13-t08's shape: round 45's policy holds 2 there) and, gated at the
    ledger's 20 ms, leaves the same world at 40 ms to round 45's decisions; ``RULE:off`` drops
    a rule; bad changes are refused; ``members`` replaces the members one for one."""
    import subprocess
    import sys

    import pytest

    from policy.base import make_controller
    from policy.ledger import LedgerConfig
    from policy.ppo import DEFAULT_CHECKPOINT
    from tests.unit.test_ledger import _mi
    from train.ship import ship_from_record

    record = DEFAULT_CHECKPOINT.with_suffix(".json")
    shipped = json.loads(record.read_text())["shipped"]
    same, probe = tmp_path / "same.pt", tmp_path / "probe.pt"
    ship_from_record(record, same, "unchanged")
    # The probe change is made from round 45's record (the default until round 56, whose ledger
    # has no probe), so that only the changed fields differ from the record it starts from.
    r45 = Path(__file__).parents[2] / "policy/weights/candidates/round45.json"
    old = json.loads(r45.read_text())["shipped"]
    changed = {"probe": 4, "probe_min": 1, "probe_top": 8}
    rec = ship_from_record(r45, probe, "probe", {"ledger": "probe=4,probe_min=1,probe_top=8"})
    ledger = rec["shipped"]["ledger"]
    base_ledger = LedgerConfig.from_dict(old["ledger"]).to_dict()
    assert {k: v for k, v in ledger.items() if base_ledger[k] != v and k not in changed} == {}
    assert {k: ledger[k] for k in changed} == changed
    assert rec["shipped"]["members"] == old["members"]
    assert rec["shipped"]["warmup"] == old["warmup"]

    def walk(spec: str, rtt: float) -> tuple[list[int], object]:
        c = make_controller(spec)
        n, path = c.initial(), []
        for t in range(40):
            sv = _mi(t, n, min(30.0 * n, 600.0), 0.01, min_rtt_ms=rtt)
            n = c.decide(replace(sv, rtt_ms=1.6 * rtt, rtt_ratio=1.6))  # rivals' queue
            path.append(n)
        return path, c

    for rtt in (4.0, 40.0):
        assert walk(f"ppo:{same}", rtt)[0] == walk("ppo", rtt)[0]
        base, _ = walk(f"ppo:{r45.with_suffix('.pt')}", rtt)
        path, c = walk(f"ppo:{probe}", rtt)
        probes = c.ledger.probes  # type: ignore[attr-defined]
        assert (path != base, probes > 0) == (rtt < 20, rtt < 20), (rtt, path, base)
        assert max(path) > 2 * max(base) if rtt < 20 else True, (path, base)  # probes kept
    off = ship_from_record(record, tmp_path / "off.pt", "no ledger", {"ledger": "off"})
    assert off["shipped"]["ledger"] is None
    for bad, match in (({"ledgr": "probe=4"}, "unknown rule"), ({"ledger": "prob=4"}, "prob"),
                       ({"ledger": "probe_min=0"}, "probe_min")):  # fmt: skip
        with pytest.raises(ValueError, match=match):
            ship_from_record(record, tmp_path / "bad.pt", "bad", bad)
    assert not (tmp_path / "bad.pt").exists()
    again = [Path(m).resolve() for m in shipped["members"]][::-1]  # stand-ins: the same files
    swapped = ship_from_record(record, tmp_path / "swap.pt", "retrained", members=again)
    assert swapped["shipped"]["members"] == [str(m) for m in again]
    assert swapped["shipped"]["ledger"] == LedgerConfig.from_dict(shipped["ledger"]).to_dict()
    with pytest.raises(ValueError, match="members"):
        ship_from_record(record, tmp_path / "bad.pt", "bad", members=again[:1])
    cli = [sys.executable, "-m", "train.ship", "--from-record", str(record)]
    ok = subprocess.run(
        [*cli, "--change", "ledger:probe=4", "--dest", str(tmp_path / "cli.pt"), "--note", "x"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert json.loads((tmp_path / "cli.json").read_text())["shipped"]["ledger"]["probe"] == 4
    no_note = subprocess.run([*cli, "--dest", str(tmp_path / "x.pt")], capture_output=True)
    assert no_note.returncode == 2 and b"--note" in no_note.stderr
    both = [*cli, "--ledger", "probe=4", "--dest", str(tmp_path / "y.pt"), "--note", "x"]
    mixed = subprocess.run(both, capture_output=True)
    assert mixed.returncode == 2 and b"--change" in mixed.stderr
    assert not (tmp_path / "y.pt").exists()
