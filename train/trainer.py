"""PPO training with Stable-Baselines3 on the simulator, exported to our checkpoint format.

The shared trunk of Table I is an SB3 features extractor (``share_features_extractor=True``,
``net_arch=[]``), so SB3's ``action_net`` and ``value_net`` are exactly our ``pi`` and
``v`` heads; :func:`export` copies the weights into :class:`policy.ppo.ActorCritic`, which
loads without SB3. The simulator is stepped in batch through :class:`SB3SimVecEnv`.
"""

from __future__ import annotations

import csv
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import configure
from stable_baselines3.common.policies import ActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from policy.ppo import (
    ACTIONS,
    ActorCritic,
    MLPTrunk,
    build_trunk,
    mlp_arch,
    save_checkpoint,
    transformer_arch,
)
from train.config import TrainConfig
from train.env import PRIVILEGED_DIM, SimVecEnv
from train.kickstart import KickBuffer, KickstartPPO


class SB3SimVecEnv(VecEnv):
    """:class:`SimVecEnv` behind SB3's ``VecEnv`` interface (truncation-aware). With
    ``privileged``, each observation carries :meth:`SimVecEnv.privileged` after the policy's
    part (for :class:`PrivilegedCriticPolicy`, whose actor reads only the policy's part)."""

    def __init__(
        self, env: SimVecEnv, privileged: bool = False, teacher_scope: str | None = None
    ) -> None:
        self.env = env
        self.privileged = privileged
        self.teacher_scope = teacher_scope
        """``all`` / ``bbr``: label every step with the privileged teacher's action for the
        observation it acted on (:mod:`train.kickstart`); ``None``: no labels."""
        self.labels = np.zeros(env.n_envs, dtype=np.int64)
        self.scope = np.zeros(env.n_envs, dtype=np.float32)
        d = env.obs_dim + (PRIVILEGED_DIM if privileged else 0)
        space = gym.spaces.Box(-1.0, 1.0, shape=(d,), dtype=np.float32)
        super().__init__(env.n_envs, space, gym.spaces.Discrete(len(ACTIONS)))
        self._actions = np.zeros(env.n_envs, dtype=np.int64)
        self._ep_ret = np.zeros(env.n_envs)
        self._ep_len = np.zeros(env.n_envs, dtype=np.int64)
        self._seed: int | None = None

    def reset(self) -> np.ndarray:
        self._ep_ret[:] = 0
        self._ep_len[:] = 0
        obs = self.env.reset(seed=self._seed)
        self._seed = None
        return self._with_privileged(obs)

    def _with_privileged(self, obs: np.ndarray, priv: np.ndarray | None = None) -> np.ndarray:
        if not self.privileged:
            return obs
        return np.concatenate([obs, self.env.privileged() if priv is None else priv], axis=1)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def teacher(self) -> tuple[np.ndarray, np.ndarray]:
        """The teacher's labels and scope of the observations the last step acted on (fresh
        arrays each step: the buffer copies them in)."""
        return self.labels, self.scope

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        if self.teacher_scope is None:
            obs, reward, _, truncated, info = self.env.step(self._actions)
        else:
            streams = self.env.streams.copy()  # the count the acted-on observation was taken at
            still, fails = self.env.still.copy(), self.env.fails.copy()
            scope = np.ones(self.num_envs, np.float32)
            if self.teacher_scope == "bbr":  # the world before the step, which may reset it
                scope = (self.env.sim.params.comp_loss > 0).astype(np.float32)
            obs, reward, _, truncated, info = self.env.step(self._actions)
            # n_opt: the world's best N before this MI ran
            self.labels, self.scope = self.env.teacher(info["n_opt"], streams, still, fails), scope
        self._ep_ret += reward
        self._ep_len += 1
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        obs = self._with_privileged(obs)
        if truncated.any():
            final = self._with_privileged(info["final_obs"], info["final_privileged"])
            for j, i in enumerate(np.flatnonzero(truncated)):
                infos[i] = {
                    "terminal_observation": final[j],
                    "TimeLimit.truncated": True,
                    "episode": {"r": float(self._ep_ret[i]), "l": int(self._ep_len[i]), "t": 0.0},
                }
            self._ep_ret[truncated] = 0
            self._ep_len[truncated] = 0
        return obs, reward.astype(np.float32), truncated.copy(), infos

    def close(self) -> None:
        return None

    def seed(self, seed: int | None = None) -> list[int | None]:
        self._seed = seed
        return [seed] * self.num_envs

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [getattr(self.env, attr_name)] * self.num_envs

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self.env, attr_name, value)

    def env_method(
        self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any
    ) -> list[Any]:
        raise NotImplementedError("SB3SimVecEnv has no per-environment methods")

    def env_is_wrapped(self, wrapper_class: Any, indices: Any = None) -> list[bool]:
        return [False] * self.num_envs


class TrunkExtractor(BaseFeaturesExtractor):
    """Our trunk (MLP or Transformer) as SB3's shared features extractor."""

    def __init__(self, observation_space: gym.spaces.Box, arch: dict[str, Any]) -> None:
        trunk = build_trunk(arch)
        super().__init__(observation_space, trunk.out_dim)
        self.trunk = trunk

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.trunk(observations)
        return out


class PrivilegedExtractor(BaseFeaturesExtractor):
    """Actor and asymmetric critic side by side: the policy's trunk on the first ``obs_dim``
    columns, a critic MLP of its own on all of them (observation + privileged). The
    features are the two latents, concatenated; :class:`SplitLatent` hands each its part,
    so the actor's loss never reaches the critic and the critic's never the trunk."""

    def __init__(
        self, observation_space: gym.spaces.Box, arch: dict[str, Any], critic: tuple[int, ...]
    ) -> None:
        trunk = build_trunk(arch)
        super().__init__(observation_space, trunk.out_dim + critic[-1])
        self.trunk = trunk
        self.obs_dim = int(arch["obs_dim"])
        self.critic = MLPTrunk(int(observation_space.shape[0]), list(critic))

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        actor = self.trunk(observations[:, : self.obs_dim])
        return torch.cat([actor, self.critic(observations)], dim=1)


class SplitLatent(torch.nn.Module):
    """SB3's ``mlp_extractor`` for :class:`PrivilegedExtractor`: no layers, it splits."""

    def __init__(self, pi_dim: int, vf_dim: int) -> None:
        super().__init__()
        self.latent_dim_pi, self.latent_dim_vf = pi_dim, vf_dim

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return features[:, : self.latent_dim_pi]

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return features[:, self.latent_dim_pi :]


class PrivilegedCriticPolicy(ActorCriticPolicy):
    """SB3's actor-critic with :class:`PrivilegedExtractor` and :class:`SplitLatent`."""

    def _build_mlp_extractor(self) -> None:
        fx = self.features_extractor
        assert isinstance(fx, PrivilegedExtractor)
        self.mlp_extractor = SplitLatent(fx.trunk.out_dim, fx.features_dim - fx.trunk.out_dim)  # type: ignore[assignment]


def arch_of(cfg: TrainConfig) -> dict[str, Any]:
    """The checkpoint arch dict for a training config."""
    m, f = cfg.model, cfg.env.features
    if m.kind == "mlp":
        return mlp_arch(f, m.hidden)
    return transformer_arch(f, m.d_model, m.n_heads, m.n_layers, m.ff)


def make_model(
    cfg: TrainConfig, venv: VecEnv, out: Path | None, arch: dict[str, Any] | None = None
) -> PPO:
    """An SB3 PPO with our shared trunk and the config's hyperparameters (``arch``: the
    network of a checkpoint to fine-tune, instead of the config's ``[model]``)."""
    p = cfg.ppo
    arch = arch or arch_of(cfg)
    privileged = cfg.model.critic == "privileged"
    policy_kwargs: dict[str, Any] = {
        "features_extractor_class": TrunkExtractor,
        "features_extractor_kwargs": {"arch": arch},
        "share_features_extractor": True,
        "net_arch": [],
    }
    if privileged:
        policy_kwargs["features_extractor_class"] = PrivilegedExtractor
        policy_kwargs["features_extractor_kwargs"] = {
            "arch": arch,
            "critic": tuple(cfg.model.critic_hidden),
        }
    algo = KickstartPPO if p.kickstart else PPO
    model = algo(
        PrivilegedCriticPolicy if privileged else "MlpPolicy",
        venv,
        learning_rate=p.learning_rate,
        n_steps=p.n_steps,
        batch_size=p.batch_size,
        n_epochs=p.n_epochs,
        gamma=p.gamma,
        gae_lambda=p.gae_lambda,
        clip_range=p.clip_range,
        clip_range_vf=p.clip_range_vf,
        ent_coef=p.ent_coef if p.ent_coef_start is None else p.ent_coef_start,
        vf_coef=p.vf_coef,
        max_grad_norm=p.max_grad_norm,
        target_kl=p.target_kl,
        seed=p.seed,
        device="cpu",
        verbose=0,
        policy_kwargs=policy_kwargs,
    )
    if out is not None:
        model.set_logger(configure(str(out), ["csv"]))
    if isinstance(model, KickstartPPO):
        if not isinstance(venv, SB3SimVecEnv) or venv.teacher_scope is None:
            raise ValueError("kickstarting needs an SB3SimVecEnv built with a teacher_scope")
        assert isinstance(model.rollout_buffer, KickBuffer)
        model.rollout_buffer.source = venv.teacher
        model.kick_coef = p.kick_coef if p.kick_coef_start is None else p.kick_coef_start
    return model


def export(model: PPO, arch: dict[str, Any]) -> ActorCritic:
    """Copy an SB3 model's weights into our :class:`ActorCritic` (no SB3 needed to load)."""
    net = ActorCritic(arch)
    pol = model.policy
    net.trunk.load_state_dict(pol.features_extractor.trunk.state_dict())  # type: ignore[union-attr]
    net.pi.load_state_dict(pol.action_net.state_dict())
    privileged = isinstance(pol.features_extractor, PrivilegedExtractor)
    if privileged:  # the critic needs what only the simulator knows: it is not shipped
        torch.nn.init.zeros_(net.v.weight)
        torch.nn.init.zeros_(net.v.bias)
    else:
        net.v.load_state_dict(pol.value_net.state_dict())
    net.eval()
    obs = torch.zeros(4, int(arch["obs_dim"]))
    obs[1:] = torch.rand(3, int(arch["obs_dim"]))
    full = obs
    if privileged:
        full = torch.cat([obs, torch.rand(4, PRIVILEGED_DIM)], dim=1)
    with torch.no_grad():
        logits, _ = net(obs)
        ref = pol.get_distribution(full).distribution.logits  # type: ignore[union-attr]
    if not torch.allclose(torch.log_softmax(logits, -1), ref, atol=1e-5):
        raise RuntimeError("export: exported network disagrees with the SB3 policy")
    return net


def load_into(model: PPO, path: str | Path) -> dict[str, Any]:
    """Start ``model`` from the weights of one of our checkpoints (same arch required)."""
    from policy.ppo import load_checkpoint

    net, ckpt = load_checkpoint(path)
    pol = model.policy
    mine = pol.features_extractor.trunk
    if type(mine) is not type(net.trunk):
        raise ValueError(
            f"--init {path}: checkpoint is a {ckpt['arch']['kind']} network, config is not"
        )
    mine.load_state_dict(net.trunk.state_dict())
    pol.action_net.load_state_dict(net.pi.state_dict())
    if not isinstance(pol.features_extractor, PrivilegedExtractor):
        pol.value_net.load_state_dict(net.v.state_dict())  # an asymmetric critic starts fresh
    meta: dict[str, Any] = ckpt["meta"]
    return meta


class ProgressLog(BaseCallback):
    """Prints a one-line progress report every ``every_s`` seconds, counts episodes and, if
    asked, exports a checkpoint every ``save_every`` steps (``out/policy_<steps>.pt``)."""

    def __init__(
        self, every_s: float = 30.0, echo: Any = None, save_every: int = 0,
        out: Path | None = None, arch: dict[str, Any] | None = None,
    ) -> None:  # fmt: skip
        super().__init__()
        self.every_s, self.echo = every_s, echo
        self.save_every, self.out, self.arch = save_every, out, arch
        self.ppo: Any = None
        self.next_save = save_every
        self.t0 = self.last = time.monotonic()
        self.returns: list[float] = []

    def _maybe_save(self) -> None:
        if not self.save_every or self.out is None or self.arch is None:
            return
        if self.num_timesteps >= self.next_save:
            self.next_save += self.save_every
            net = export(self.model, self.arch)  # type: ignore[arg-type]
            meta = {
                "timesteps": int(self.num_timesteps),
                "wall_seconds": round(time.monotonic() - self.t0, 1),
            }
            save_checkpoint(self.out / f"policy_{self.num_timesteps}.pt", net, meta)

    def _linear(self, start: float, end: float, fraction: float) -> float:
        """``start`` moving linearly to ``end`` at ``fraction`` of the training, then ``end``."""
        total = self.ppo.total_timesteps
        frac = min(1.0, self.num_timesteps / max(1.0, fraction * total))
        return start + frac * (end - start)

    def _entropy_schedule(self) -> None:
        p = self.ppo
        if p is None or p.ent_coef_start is None:
            return
        self.model.ent_coef = self._linear(p.ent_coef_start, p.ent_coef, p.ent_decay_fraction)  # type: ignore[attr-defined]

    def _kick_schedule(self) -> None:
        p = self.ppo
        if p is None or p.kick_coef_start is None or not isinstance(self.model, KickstartPPO):
            return
        self.model.kick_coef = self._linear(p.kick_coef_start, p.kick_coef, p.kick_decay_fraction)

    def _on_step(self) -> bool:
        self._entropy_schedule()
        self._kick_schedule()
        for info in self.locals.get("infos", []):
            if "episode" in info:
                self.returns.append(info["episode"]["r"] / max(info["episode"]["l"], 1))
        self._maybe_save()
        now = time.monotonic()
        if self.echo and now - self.last >= self.every_s:
            self.last = now
            recent = self.returns[-200:]
            mean = float(np.mean(recent)) if recent else float("nan")
            self.echo(
                f"  {self.num_timesteps:>9} steps  {now - self.t0:6.0f} s  mean reward/MI {mean:.3f}"
            )
        return True


def train(
    cfg: TrainConfig,
    out: Path,
    echo: Any = None,
    save_every: int = 0,
    init: str | Path | None = None,
) -> tuple[ActorCritic, dict[str, Any]]:
    """Train (from scratch, or continue from the checkpoint ``init``); write ``out/policy.pt`` and ``out/progress.csv`` (and a snapshot
    every ``save_every`` steps); return the net and the training metadata."""
    torch.set_num_threads(cfg.ppo.torch_threads)
    out.mkdir(parents=True, exist_ok=True)
    venv = SB3SimVecEnv(
        SimVecEnv(cfg.ppo.n_envs, cfg.env, seed=cfg.ppo.seed),
        privileged=cfg.model.critic == "privileged",
        teacher_scope=cfg.ppo.kick_scope if cfg.ppo.kickstart else None,
    )
    venv.seed(cfg.ppo.seed)
    model = make_model(cfg, venv, out)
    init_meta = load_into(model, init) if init else None
    cb = ProgressLog(echo=echo, save_every=save_every, out=out, arch=arch_of(cfg))
    cb.ppo = cfg.ppo
    t0, cpu0 = time.monotonic(), time.process_time()
    model.learn(total_timesteps=cfg.ppo.total_timesteps, callback=cb)
    seconds, cpu = time.monotonic() - t0, time.process_time() - cpu0
    arch = arch_of(cfg)
    net = export(model, arch)
    meta = {
        "config": cfg.to_dict(),
        "seed": cfg.ppo.seed,
        "timesteps": int(model.num_timesteps),
        "train_seconds": round(seconds, 1),
        "train_cpu_seconds": round(cpu, 1),
        "torch": torch.__version__,
        "numerics": numerics(),
        "init": None if init is None else {"checkpoint": str(init), "meta": init_meta},
        "final_mean_reward_per_mi": float(np.mean(cb.returns[-200:])) if cb.returns else None,
    }
    save_checkpoint(out / "policy.pt", net, meta, cfg.env.initial_streams)
    _curve_summary(out)
    return net, meta


NUMERICS_ENV = ("MKL_CBWR", "MKL_ENABLE_INSTRUCTIONS", "ATEN_CPU_CAPABILITY", "OMP_NUM_THREADS")
"""Environment variables that change which floating-point code paths torch and MKL take."""


def numerics() -> dict[str, Any]:
    """Where a training run's floating point came from: the CPU, torch's vectorised kernels
    and the BLAS, and the environment variables that move them. PPO on this simulator is
    chaotic in the BLAS's rounding: round 57 found one recipe and seed ending at different
    policies (simulator screen 0.891 vs 0.959 mean) under two MKL code paths on one machine,
    and the stored hold-s2 (round 6) rebuilds under neither, its machine unrecorded."""
    import os
    import platform

    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(
                (ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), cpu
            )
    except OSError:
        pass
    return {
        "cpu": cpu,
        "machine": platform.machine(),
        "capability": torch.backends.cpu.get_cpu_capability(),
        "mkl": torch.backends.mkl.is_available(),
        "env": {k: os.environ[k] for k in NUMERICS_ENV if k in os.environ},
    }


def _curve_summary(out: Path) -> None:
    """Keep ``progress.csv`` (SB3's CSV logger) as the training curve; nothing else to do
    unless it is missing, in which case write an empty one so that tooling finds a file."""
    p = out / "progress.csv"
    if not p.exists():
        with p.open("w", newline="") as f:
            csv.writer(f).writerow(["time/total_timesteps"])
