"""``ensemble:[rule=NAME:]A+B``: several PPO checkpoints deciding together (mean, veto)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from policy.base import ControllerConfig, check_spec, make_controller
from policy.ensemble import Ensemble, member_paths
from policy.features import FeatureConfig
from policy.ppo import (
    ACTIONS,
    DEFAULT_CHECKPOINT,
    ActorCritic,
    combine_veto,
    mlp_arch,
    read_checkpoint,
    save_checkpoint,
    save_ensemble,
)
from policy.signals import SignalVector


def _sv(t: float, n: int, thr: float) -> SignalVector:
    return SignalVector(
        t=t, mi_s=1.0, streams=n, throughput_bps=thr, goodput_bps=thr, loss_rate=0.001 * (t % 3),
        rtt_ms=41.0 + t % 4, min_rtt_ms=40.0, rtt_gradient=0.0, rtt_ratio=(41.0 + t % 4) / 40,
    )  # fmt: skip


def _ckpt(tmp_path: Path, name: str, seed: int, bias: dict[int, float] | None = None) -> Path:
    """A small random policy; ``bias`` replaces the policy head by constant logits."""
    torch.manual_seed(seed)
    net = ActorCritic(mlp_arch(FeatureConfig(history=4), (16, 16)))
    if bias is not None:
        with torch.no_grad():
            net.pi.weight.zero_()
            net.pi.bias.zero_()
            for a, v in bias.items():
                net.pi.bias[a] = v
    path = tmp_path / name
    save_checkpoint(path, net, {"seed": seed})
    return path


def _trajectory(spec: str, steps: int = 30) -> list[int]:
    c = make_controller(spec, ControllerConfig(max_streams=64))
    n, out = c.initial(), []
    for t in range(1, steps + 1):
        n = c.decide(_sv(float(t), n, thr=3e7 * n * (1 + 0.3 * np.sin(t))))
        out.append(n)
    return out


def test_an_ensemble_of_one_policy_twice_is_that_policy(tmp_path: Path) -> None:
    a = _ckpt(tmp_path, "a.pt", seed=1)
    assert _trajectory(f"ensemble:{a}+{a}") == _trajectory(f"ppo:{a}")


def test_the_ensemble_takes_the_argmax_of_the_mean_probabilities(tmp_path: Path) -> None:
    # a: +5 with p ~0.6, else spread; b: -1 sure. Mean: -1 wins although a's argmax is +5.
    a = _ckpt(tmp_path, "a.pt", seed=1, bias={0: 2.0, 1: 0.5, 2: 0.5, 3: 0.5, 4: 0.5})
    b = _ckpt(tmp_path, "b.pt", seed=2, bias={3: 6.0})
    c = make_controller(f"ensemble:{a}+{b}", ControllerConfig(max_streams=64))
    assert isinstance(c, Ensemble) and c.initial() == 2
    sv = _sv(1.0, 2, 6e7)
    p = c.member_probabilities(sv)
    assert p.shape == (2, len(ACTIONS)) and np.allclose(p.sum(axis=1), 1.0)
    assert int(np.argmax(p[0])) == 0 and int(np.argmax(p[1])) == 3
    # every member's history gets each MI once: decide pushes again, so compare trajectories
    c = make_controller(f"ensemble:{a}+{b}", ControllerConfig(min_streams=1, max_streams=64))
    n = c.initial()
    for t in range(1, 4):
        n = c.decide(_sv(float(t), n, 6e7))
    assert n == 1  # 2 -1 -1 -1, clipped at min_streams


def test_two_disagreeing_policies_decide_by_their_mean_probabilities(tmp_path: Path) -> None:
    """Against a reference computed by hand from two separate ``ppo`` controllers."""
    from policy.ppo import PPOController

    a, b = _ckpt(tmp_path, "a.pt", seed=1), _ckpt(tmp_path, "b.pt", seed=7)
    assert _trajectory(f"ppo:{a}") != _trajectory(f"ppo:{b}")  # the members disagree
    cfg = ControllerConfig(max_streams=64)
    ra, rb = PPOController(str(a), cfg), PPOController(str(b), cfg)
    n, ref = 2, []
    for t in range(1, 31):
        sv = _sv(float(t), n, thr=3e7 * n * (1 + 0.3 * np.sin(t)))
        pa = ra.probabilities(ra.features.push(sv))
        pb = rb.probabilities(rb.features.push(sv))
        n = cfg.clip(n + ACTIONS[int(np.argmax(pa + pb))])
        ref.append(n)
    assert _trajectory(f"ensemble:{a}+{b}") == ref


def _probs(*argmaxes: int, sure: float = 0.9) -> np.ndarray:
    """One row per member, most of the mass on the action of index ``argmax``."""
    p = np.full((len(argmaxes), len(ACTIONS)), (1 - sure) / (len(ACTIONS) - 1))
    for row, a in enumerate(argmaxes):
        p[row, a] = sure
    return p


def test_veto_retreats_only_as_far_as_the_most_reluctant_member() -> None:
    i = {d: ACTIONS.index(d) for d in ACTIONS}
    assert combine_veto(_probs(i[-5], i[-5])) == i[-5]  # all agree: as the mean
    assert combine_veto(_probs(i[-5], i[-1])) == i[-1]  # one wants less: that much
    assert combine_veto(_probs(i[-1], i[0], i[-5])) == i[0]  # one would hold: hold
    # a confident retreat against a lukewarm add: the mean retreats, veto holds
    p = np.vstack([_probs(i[-5], sure=0.95), _probs(i[5], sure=0.4)])
    assert int(np.argmax(p.mean(axis=0))) == i[-5] and combine_veto(p) == i[0]
    # adds and holds are the mean's, whatever a member wants
    assert combine_veto(_probs(i[5], i[-5], i[5])) == i[5]
    assert combine_veto(_probs(i[1], i[-1], i[1])) == i[1]


def test_a_veto_ensemble_holds_where_the_mean_follows_the_confident_retreat(
    tmp_path: Path,
) -> None:
    a = _ckpt(tmp_path, "a.pt", seed=1, bias={0: 2.0, 1: 0.5, 2: 0.5, 3: 0.5, 4: 0.5})
    b = _ckpt(tmp_path, "b.pt", seed=2, bias={3: 6.0})
    cfg = ControllerConfig(min_streams=1, max_streams=64)
    mean, veto = (make_controller(f"ensemble:{r}{a}+{b}", cfg) for r in ("", "rule=veto:"))
    n_mean, n_veto = mean.initial(), veto.initial()
    for t in range(1, 4):
        n_mean = mean.decide(_sv(float(t), n_mean, 6e7))
        n_veto = veto.decide(_sv(float(t), n_veto, 6e7))
    assert (n_mean, n_veto) == (1, 2)
    assert _trajectory(f"ensemble:rule=mean:{a}+{b}") == _trajectory(f"ensemble:{a}+{b}")
    # a bundle carries its rule; ppo:BUNDLE runs it so
    bundle = tmp_path / "veto.pt"
    save_ensemble(bundle, [a, b], {"rule": "veto"})
    assert _trajectory(f"ppo:{bundle}") == _trajectory(f"ensemble:rule=veto:{a}+{b}")
    with pytest.raises(ValueError, match="unknown rule 'max'"):
        check_spec(f"ensemble:rule=max:{a}+{b}")
    with pytest.raises(ValueError, match="bad argument"):
        check_spec(f"ensemble:votes=2:{a}+{b}")
    save_ensemble(tmp_path / "bad.pt", [a, b], {"rule": "max"})
    with pytest.raises(ValueError, match="unknown rule 'max'"):
        make_controller(f"ppo:{tmp_path / 'bad.pt'}")


def test_bad_specs_are_refused_with_a_clear_error(tmp_path: Path) -> None:
    a = _ckpt(tmp_path, "a.pt", seed=1)
    with pytest.raises(ValueError, match="two or more checkpoints"):
        make_controller(f"ensemble:{a}")
    with pytest.raises(ValueError, match="two or more checkpoints"):
        check_spec("ensemble")
    with pytest.raises(ValueError):
        check_spec(f"ensemble:{a}+{tmp_path / 'missing.pt'}")
    assert member_paths("default+x.pt") == [DEFAULT_CHECKPOINT, Path("x.pt")]


def test_a_bundle_runs_under_ppo_as_the_ensemble_of_its_members(tmp_path: Path) -> None:
    """How an ensemble ships: one file, ``ppo:PATH`` (and the default when it is default.pt)."""
    a, b, c = (_ckpt(tmp_path, f"{x}.pt", seed=s) for x, s in (("a", 1), ("b", 7), ("c", 3)))
    bundle = tmp_path / "ab.pt"
    save_ensemble(bundle, [a, b], {"note": "test"})
    check_spec(f"ppo:{bundle}")
    assert _trajectory(f"ppo:{bundle}") == _trajectory(f"ensemble:{a}+{b}")
    assert _trajectory(f"ppo:omit=2:{bundle}")[:2] == [2, 2]  # options work on a bundle too
    # a bundle as a member is taken apart: (a+b)+c is a+b+c
    assert _trajectory(f"ensemble:{bundle}+{c}") == _trajectory(f"ensemble:{a}+{b}+{c}")
    assert make_controller(f"ppo:{bundle}").meta["member_files"] == [str(a), str(b)]
    # training, fine-tuning and shipping start from one network: a bundle is refused there
    with pytest.raises(ValueError, match="ensemble of 2 policies"):
        read_checkpoint(bundle)
    with pytest.raises(ValueError, match="two or more members"):
        save_ensemble(tmp_path / "one.pt", [a], {})


def test_training_from_a_bundle_is_refused_before_any_work(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from train.cli import train_cmd

    a, b = _ckpt(tmp_path, "a.pt", seed=1), _ckpt(tmp_path, "b.pt", seed=2)
    bundle = tmp_path / "ab.pt"
    save_ensemble(bundle, [a, b], {})
    cfg = Path(__file__).resolve().parents[2] / "configs" / "train" / "hold.toml"
    out = tmp_path / "out"
    res = CliRunner().invoke(train_cmd, [str(cfg), "--init", str(bundle), "--out", str(out)])
    assert res.exit_code == 1 and "--init" in res.output and "ensemble of 2" in res.output
    assert not out.exists()


def test_members_of_one_shape_are_evaluated_as_one_batch_with_the_same_numbers(
    tmp_path: Path,
) -> None:
    a, b, d = (_ckpt(tmp_path, f"{x}.pt", seed=s) for x, s in (("a", 1), ("b", 2), ("d", 3)))
    batched = make_controller(f"ensemble:{a}+{b}+{d}", ControllerConfig(max_streams=64))
    looped = make_controller(f"ensemble:{a}+{b}+{d}", ControllerConfig(max_streams=64))
    assert isinstance(batched, Ensemble) and isinstance(looped, Ensemble)
    assert batched.stacked is not None
    looped.stacked = None  # the member-by-member path
    n = batched.initial()
    for t in range(1, 40):
        sv = _sv(float(t), n, thr=3e7 * n * (1 + 0.3 * np.sin(t)))
        pb, pl = batched.member_probabilities(sv), looped.member_probabilities(sv)
        assert pb.shape == (3, len(ACTIONS))
        np.testing.assert_allclose(pb, pl, rtol=0, atol=1e-6)
        n = batched.config.clip(n + ACTIONS[int(np.argmax(pb.mean(axis=0)))])
    # a single policy and members of different shapes stay member by member
    assert make_controller(f"ppo:{a}", ControllerConfig()).stacked is None  # type: ignore[attr-defined]
    torch.manual_seed(4)
    wide = tmp_path / "wide.pt"
    save_checkpoint(wide, ActorCritic(mlp_arch(FeatureConfig(history=4), (32,))), {"seed": 4})
    mixed = make_controller(f"ensemble:{a}+{wide}", ControllerConfig())
    assert isinstance(mixed, Ensemble) and mixed.stacked is None


@pytest.mark.skipif(not DEFAULT_CHECKPOINT.exists(), reason="no shipped default checkpoint yet")
def test_the_shipped_bundle_decides_the_same_batched_or_member_by_member() -> None:
    batched = make_controller("ppo", ControllerConfig())
    looped = make_controller("ppo", ControllerConfig())
    looped.stacked = None  # type: ignore[attr-defined]
    assert batched.stacked is not None  # type: ignore[attr-defined]
    nb = nl = batched.initial()
    for t in range(1, 60):
        thr = 5e7 * min(nb, 19) * (1 + 0.2 * np.sin(t))
        nb, nl = batched.decide(_sv(float(t), nb, thr)), looped.decide(_sv(float(t), nl, thr))
        assert nb == nl, t
