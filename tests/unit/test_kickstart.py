"""Kickstarting (train/kickstart.py): the teacher's term inside PPO's loss."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from stable_baselines3 import PPO

from train.config import ModelConfig, PPOConfig, TrainConfig
from train.env import EnvConfig, SimVecEnv, teacher_action
from train.kickstart import KickBuffer, KickstartPPO
from train.sim import SimConfig
from train.trainer import SB3SimVecEnv, make_model


def _cfg(seed: int = 3, sim: SimConfig | None = None, **ppo: Any) -> TrainConfig:
    base = TrainConfig()
    kw: dict[str, Any] = {"n_envs": 4, "n_steps": 50, "batch_size": 100, "n_epochs": 2}
    p = replace(base.ppo, seed=seed, **{**kw, **ppo})
    env = EnvConfig(sim=sim or SimConfig())
    return replace(base, ppo=p, model=ModelConfig(hidden=(32, 32)), env=env)


def _model(cfg: TrainConfig, scope: str | None) -> PPO:
    venv = SB3SimVecEnv(SimVecEnv(cfg.ppo.n_envs, cfg.env, seed=cfg.ppo.seed), teacher_scope=scope)
    venv.seed(cfg.ppo.seed)
    return make_model(cfg, venv, None)


def _agreement(model: PPO, cfg: TrainConfig) -> float:
    """Greedy action = the teacher's, on the states a random walk visits (the same for every
    model: seeded)."""
    env, rng = SimVecEnv(32, cfg.env, seed=99), np.random.default_rng(99)
    obs, hits = env.reset(seed=99), []
    for _ in range(60):
        label = teacher_action(env.streams, env.sim.optimum()[0])
        with torch.no_grad():
            act, _ = model.predict(obs, deterministic=True)
        hits.append(np.mean(act == label))
        obs = env.step(rng.integers(0, 5, env.n_envs))[0]
    return float(np.mean(hits))


def test_with_zero_weight_the_update_is_sb3_ppo() -> None:
    """The re-written update (SB3 2.x's PPO.train plus one term) gives SB3's weights."""
    plain = _model(_cfg(), "all")  # each built and trained in turn: both seed the global RNGs
    plain.learn(total_timesteps=600)
    kick = _model(_cfg(kick_coef=1.0), "all")
    assert type(plain) is PPO and isinstance(kick, KickstartPPO)
    kick.kick_coef = 0.0
    kick.learn(total_timesteps=600)
    a, b = plain.policy.state_dict(), kick.policy.state_dict()
    assert a.keys() == b.keys()
    for k in a:
        assert torch.allclose(a[k], b[k], atol=1e-6), k
    moved = kick.policy.state_dict()
    fresh = _model(_cfg(kick_coef=1.0), "all").policy.state_dict()
    assert any(not torch.equal(moved[k], fresh[k]) for k in fresh)  # it did train


def test_the_term_pulls_the_policy_towards_the_teacher() -> None:
    # without the KL stop, which bounds how far any term can move the policy per update
    off = _model(_cfg(target_kl=None, n_epochs=4), "all")
    off.learn(total_timesteps=4000)
    on = _model(_cfg(target_kl=None, n_epochs=4, kick_coef=5.0), "all")
    on.learn(total_timesteps=4000)
    a_off, a_on = _agreement(off, _cfg()), _agreement(on, _cfg())
    assert a_on > a_off + 0.15, (a_off, a_on)


def test_labels_and_scope_belong_to_the_observation_acted_on() -> None:
    sim = SimConfig(p_competing=1.0, p_comp_bbr=0.5)
    cfg = _cfg(seed=5, sim=sim, kick_coef=1.0, kick_scope="bbr")  # seed 5: BBR in 2 of 4
    model = _model(cfg, "bbr")
    venv = model.get_env()
    assert isinstance(venv, SB3SimVecEnv)
    env, seen = venv.env, []
    step = env.step

    def spy(action: np.ndarray) -> Any:
        seen.append((env.streams.copy(), env.sim.optimum()[0], env.sim.params.comp_loss > 0))
        return step(action)

    env.step = spy  # type: ignore[method-assign]
    model.learn(total_timesteps=cfg.ppo.n_envs * cfg.ppo.n_steps)
    want = np.stack([teacher_action(s, n) for s, n, _ in seen])
    scope = np.stack([b for _, _, b in seen]).astype(np.float32)
    buf = model.rollout_buffer
    assert isinstance(buf, KickBuffer)
    flat = buf.swap_and_flatten  # the buffer was flattened (env-major) by the update
    assert np.array_equal(buf.labels, flat(want)) and np.array_equal(buf.scope, flat(scope))
    assert 0 < scope.mean() < 1  # both kinds of world were in the rollout


def test_kick_config_is_checked_and_the_weight_follows_its_schedule() -> None:
    with pytest.raises(ValueError, match="kick_scope"):
        PPOConfig(kick_scope="cubic")
    with pytest.raises(ValueError, match="kick_coef"):
        PPOConfig(kick_coef=-1.0)
    assert not PPOConfig().kickstart and PPOConfig(kick_coef_start=2.0).kickstart
    from train.trainer import ProgressLog

    cfg = _cfg(kick_coef=0.5, kick_coef_start=2.0, kick_decay_fraction=0.5)
    cfg = replace(cfg, ppo=replace(cfg.ppo, total_timesteps=1000))
    model = _model(cfg, "bbr")
    assert isinstance(model, KickstartPPO) and model.kick_coef == 2.0
    cb = ProgressLog()
    cb.ppo, cb.model = cfg.ppo, model
    for t, want in ((0, 2.0), (250, 1.25), (500, 0.5), (900, 0.5)):
        cb.num_timesteps = t
        cb._kick_schedule()
        assert model.kick_coef == pytest.approx(want)


def test_live_fine_tuning_drops_the_term_and_ray_refuses_it(tmp_path: Path) -> None:
    """A real network has no privileged teacher; Ray's workers send no labels."""
    from train.finetune import FinetuneConfig, _ppo_config

    base = {"meta": {"config": {"ppo": {"kick_coef": 1.0, "kick_coef_start": 2.0}}}}
    ppo = _ppo_config(base, FinetuneConfig(checkpoint="x.pt", scenario="lan"))
    assert not ppo.kickstart
    pytest.importorskip("ray")
    from train.ray_scale import train_on_ray

    with pytest.raises(ValueError, match="kick_coef trains on one machine only"):
        train_on_ray(_cfg(kick_coef=1.0), tmp_path)
