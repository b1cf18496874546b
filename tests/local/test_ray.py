"""Distributed PPO training on a local Ray cluster: environments in Ray actors, the result a
``ppo`` checkpoint the engine's controller loads."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray")

from policy.base import ControllerConfig, make_controller  # noqa: E402
from policy.signals import SignalVector  # noqa: E402
from train.config import load_config  # noqa: E402
from train.ray_scale import RayConfig, RayVecEnv, split, train_on_ray  # noqa: E402


@pytest.fixture(scope="module")
def local_ray():
    try:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    except Exception:  # noqa: BLE001 - the raylet can miss its 30 s start-up wait on a busy VM
        ray.shutdown()
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def tiny_config(n_envs: int = 6):
    cfg = load_config(None)
    ppo = dataclasses.replace(
        cfg.ppo,
        n_envs=n_envs,
        n_steps=32,
        batch_size=64,
        n_epochs=2,
        total_timesteps=n_envs * 32 * 2,
        seed=3,
    )
    return dataclasses.replace(cfg, ppo=ppo, model=dataclasses.replace(cfg.model, hidden=(32, 32)))


def test_split() -> None:
    assert split(7, 3) == [3, 2, 2]
    with pytest.raises(ValueError, match="workers <= n_envs"):
        split(2, 3)


def test_ray_envs_step_like_local_envs(local_ray) -> None:
    """The actors' environments are the trainer's: same seeds, same actions, same results."""
    from train.env import SimVecEnv
    from train.trainer import SB3SimVecEnv

    cfg = tiny_config(5)
    venv = RayVecEnv(5, cfg.env, seed=11, rc=RayConfig(workers=2, cpus_per_worker=0.5))
    local = [
        SB3SimVecEnv(SimVecEnv(n, cfg.env, seed=11 + 1000 * k)) for k, n in enumerate(split(5, 2))
    ]
    for k, env in enumerate(local):
        env.seed(11 + 1000 * k)
    try:
        obs = venv.reset()
        ref = np.concatenate([e.reset() for e in local])
        np.testing.assert_array_equal(obs, ref)
        rng = np.random.default_rng(0)
        for _ in range(150):  # long enough for some episodes to end and restart
            actions = rng.integers(0, 5, size=5)
            obs, rew, done, infos = venv.step(actions)
            parts = [e.step(actions[a:b]) for e, a, b in zip(local, [0, 3], [3, 5], strict=True)]
            np.testing.assert_array_equal(obs, np.concatenate([p[0] for p in parts]))
            np.testing.assert_allclose(rew, np.concatenate([p[1] for p in parts]))
            np.testing.assert_array_equal(done, np.concatenate([p[2] for p in parts]))
            assert len(infos) == 5
    finally:
        venv.close()


def test_distributed_training_makes_a_ppo_checkpoint(local_ray, tmp_path: Path) -> None:
    cfg = tiny_config(6)
    _, meta = train_on_ray(cfg, tmp_path, RayConfig(workers=3))
    assert meta["timesteps"] >= cfg.ppo.total_timesteps
    assert meta["ray"]["workers"] == 3
    ctrl = make_controller(f"ppo:{tmp_path / 'policy.pt'}", ControllerConfig(max_streams=64))
    assert ctrl.name == "ppo" and ctrl.initial() == 2
    sig = SignalVector(
        t=1.0,
        mi_s=1.0,
        streams=2,
        throughput_bps=4e8,
        goodput_bps=4e8,
        loss_rate=0.0,
        rtt_ms=20.0,
        min_rtt_ms=20.0,
        rtt_gradient=0.0,
        rtt_ratio=1.0,
    )
    assert 1 <= ctrl.decide(sig) <= 64


def test_xfer_train_ray_flag_trains_a_loadable_checkpoint(tmp_path) -> None:
    from click.testing import CliRunner

    from policy import make_controller
    from train.cli import train_cmd

    out = tmp_path / "run"
    args = [
        "configs/train/paper.toml",
        "--out",
        str(out),
        "--timesteps",
        "2000",
        "--no-eval",
        "--ray",
        "--ray-workers",
        "2",
    ]
    result = CliRunner().invoke(train_cmd, args)
    assert result.exit_code == 0, result.output
    assert make_controller(f"ppo:{out / 'policy.pt'}").initial() >= 1
