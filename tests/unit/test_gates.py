"""train.gates: the shipped policy passes every gate; policies built to break one fail it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from policy.features import FeatureConfig
from policy.ppo import ACTIONS, DEFAULT_CHECKPOINT, ActorCritic, mlp_arch, save_checkpoint
from train import gates


def _always(tmp_path: Path, delta: int) -> str:
    """A ``ppo:`` spec whose network answers ``delta`` whatever it sees."""
    torch.manual_seed(0)
    net = ActorCritic(mlp_arch(FeatureConfig(), (8,)))
    with torch.no_grad():
        net.pi.weight.zero_()
        net.pi.bias.zero_()
        net.pi.bias[ACTIONS.index(delta)] = 5.0
    path = tmp_path / f"always{delta:+d}.pt"
    save_checkpoint(path, net, {"note": "test"})
    return f"ppo:{path}"


@pytest.mark.skipif(not DEFAULT_CHECKPOINT.exists(), reason="no shipped default checkpoint yet")
def test_the_shipped_policy_passes_every_gate() -> None:
    results = gates.run_gates("ppo")
    assert [r.gate for r in results] == list(gates.GATES)
    assert all(r.ok for r in results), results
    assert gates.main(["ppo"]) == 0


def test_a_policy_that_always_adds_five_ramps_but_never_frees(tmp_path: Path) -> None:
    spec = _always(tmp_path, +5)
    by = {r.gate: r for r in gates.run_gates(spec)}
    assert by["ramp"].ok and by["adds"].ok
    assert not by["frees"].ok and not by["fig3-mini"].ok
    assert "64" in by["fig3-mini"].detail  # it ends at --max-streams
    assert gates.main([spec]) == 1


def test_a_policy_that_holds_fails_ramp_and_adds(tmp_path: Path) -> None:
    spec = _always(tmp_path, 0)
    by = {r.gate: r for r in gates.run_gates(spec)}
    assert not by["ramp"].ok and not by["adds"].ok
    assert by["ramp"].detail == "streams [2, 2, 2, 2, 2]"
    assert "1:+0" in by["adds"].detail


def test_the_held_history_runs_the_held_count_then_the_policy_decides(tmp_path: Path) -> None:
    run = gates.trajectory(_always(tmp_path, +1), 10, hold=6)
    assert run == [6] * 8 + [7, 8]


def test_a_warmup_rule_sees_the_held_count_as_a_count_that_stood(tmp_path: Path) -> None:
    """A hold imposes the count on the rule too: after 8 MIs held at 8 the probe cap (probe=6)
    cuts the first +5, and a climb follows. Before round 34 the rule kept its own count (+5
    from 2 each MI, set back each time), so the probe cap never read a count that stood and
    climb_probe ended the hold at 5 streams of 8."""
    spec = "warmup:probe=6,climb=1,climb_probe=1:" + _always(tmp_path, +5)
    assert gates.trajectory(spec, 10, hold=8) == [8] * 8 + [9, 14]
    assert gates.trajectory("warmup:" + _always(tmp_path, +5), 10, hold=8) == [8] * 8 + [13, 18]


def test_gd_fails_the_ramp_and_a_controller_without_target_is_refused() -> None:
    assert not gates.gate_ramp("gd").ok
    with pytest.raises(ValueError, match="no stream-count target"):
        gates.trajectory("fixed:4", 3, hold=2)
    assert gates.main([]) == 2


@pytest.mark.skipif(not DEFAULT_CHECKPOINT.exists(), reason="no shipped default checkpoint yet")
def test_a_guard_holds_its_inner_target_and_passes_where_its_inner_policy_does() -> None:
    # The gates' worlds are lossless, so the guard never probes: it must decide as ppo does,
    # with the held history reaching the inner controller through guard.target.
    spec = "guard:loss_min=0.005,cooldown=32:ppo"
    assert gates.trajectory(spec, 9, hold=6) == gates.trajectory("ppo", 9, hold=6)
    assert all(r.ok for r in gates.run_gates(spec))


def test_the_stays_world_holds_a_rivals_loss_whatever_our_count_and_adding_pays() -> None:
    losses = []
    for n in (2, 8, 24):
        sim = gates.WORLDS["bbr-rival"]()
        for _ in range(8):
            m = sim.step(np.array([float(n)]))
        losses.append(float(m.loss_rate[0]))
        assert m.signal(0, 8.0, 1.0).cc == "bbr"
    assert all(0.02 < x < 0.03 for x in losses), losses
    assert gates.WORLDS["bbr-rival"]().optimum()[0][0] > max(gates.STAYS_HOLDS) + 5


def test_the_stays_target_runs_only_when_asked_and_a_policy_that_adds_passes_it(
    tmp_path: Path,
) -> None:
    add, hold = _always(tmp_path, +1), _always(tmp_path, 0)
    assert [r.gate for r in gates.run_gates(add)] == list(gates.GATES)
    by = {r.gate: r for r in gates.run_gates(add, targets=True)}
    assert list(by) == [*gates.GATES, *gates.TARGETS]
    assert by["stays"].ok and by["stays"].detail == "after 8 MIs held: 2:+1, 4:+1, 8:+1"
    assert not gates.gate_stays(hold).ok
    assert gates.trajectory(add, 10, hold=4, world="bbr-rival") == [4] * 8 + [5, 6]
    assert gates.main(["--target", hold]) == 1
    assert gates.main(["--target"]) == 2
