"""PPO training with the environments spread over Ray workers (``xfer train CONFIG --ray ADDR``).

Only the environment stepping moves: each Ray actor (:class:`EnvWorker`) owns a batch of
simulated transfers (``train.env.SimVecEnv``, the trainer's own environment) and steps it on
its own core; :class:`RayVecEnv` is a Stable-Baselines3 ``VecEnv`` that fans each step out to
the actors and concatenates their answers, so the trainer's SB3 PPO (``train.trainer``:
same model, same export, same checkpoint format) collects its rollouts unchanged.

Where the actors run is Ray's business: ``address=None`` starts an embedded single-machine
Ray (the default, nothing to set up); ``address="ray://head:10001"`` or ``"auto"`` joins a
cluster (``ray start --head`` on one machine, ``ray start --address=HEAD:6379`` on the
others, each with this xfer installed, e.g. by ``xfer campaign run``). ``worker_resources``
pins actors to nodes that advertise a custom resource (``ray start --resources
'{"testbed_host": 1}'``), which is how live environments would be placed on testbed hosts
once the learning side has a live environment to step (see docs/campaigns.md).

Called from ``train/cli.py`` as ``train_on_ray(cfg, out, address=..., workers=...)``; it
returns what ``train.trainer.train`` returns.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from train.config import TrainConfig
from train.env import EnvConfig


@dataclass(frozen=True)
class RayConfig:
    """Where and how wide the environment workers run."""

    address: str | None = None
    """Ray cluster address (``auto``, ``ray://host:10001``); ``None`` starts a local Ray."""
    workers: int = 2
    """Environment actors; the config's ``n_envs`` environments are split between them."""
    cpus_per_worker: float | None = None
    """CPUs Ray reserves per actor; ``None``: 1, or less if the cluster has fewer CPUs than
    actors (so that every actor gets scheduled)."""
    worker_resources: tuple[tuple[str, float], ...] = ()
    """Custom Ray resources each actor needs (places actors on chosen nodes)."""
    local_cpus: int | None = None
    """CPUs of the embedded local Ray (``address=None``); ``None``: all of this machine's."""


class EnvWorker:
    """A batch of simulated transfers behind SB3's step conventions (runs inside Ray)."""

    def __init__(self, n_envs: int, env_cfg: EnvConfig, seed: int) -> None:
        import torch

        from train.env import SimVecEnv
        from train.trainer import SB3SimVecEnv

        torch.set_num_threads(1)
        self.venv = SB3SimVecEnv(SimVecEnv(n_envs, env_cfg, seed=seed))
        self.venv.seed(seed)

    def reset(self) -> np.ndarray:
        """First observations of every environment."""
        return self.venv.reset()

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """One MI of every environment (finished episodes restart on their own)."""
        self.venv.step_async(actions)
        return self.venv.step_wait()


def split(n_envs: int, workers: int) -> list[int]:
    """Environments per worker: as even as possible, every worker at least one."""
    if workers < 1 or n_envs < workers:
        raise ValueError(f"need 1 <= workers <= n_envs, got workers={workers}, n_envs={n_envs}")
    base, extra = divmod(n_envs, workers)
    return [base + (1 if k < extra else 0) for k in range(workers)]


class RayVecEnv(VecEnv):
    """An SB3 ``VecEnv`` whose environments live in Ray actors, stepped in parallel."""

    def __init__(self, n_envs: int, env_cfg: EnvConfig, seed: int, rc: RayConfig) -> None:
        import ray

        self._ray = ray
        sizes = split(n_envs, rc.workers)
        cpus = rc.cpus_per_worker
        if cpus is None:
            total = float(ray.cluster_resources().get("CPU", rc.workers))
            cpus = min(1.0, total / rc.workers)
        actor = ray.remote(EnvWorker).options(num_cpus=cpus, resources=dict(rc.worker_resources))
        self.workers: list[Any] = [
            actor.remote(n, env_cfg, seed + 1000 * k) for k, n in enumerate(sizes)
        ]
        self.bounds = np.cumsum([0, *sizes])
        d = env_cfg.features.obs_dim
        space = gym.spaces.Box(-1.0, 1.0, shape=(d,), dtype=np.float32)
        from policy.ppo import ACTIONS

        super().__init__(n_envs, space, gym.spaces.Discrete(len(ACTIONS)))
        self._pending: list[Any] = []

    def reset(self) -> np.ndarray:
        return np.concatenate(self._ray.get([w.reset.remote() for w in self.workers]))

    def step_async(self, actions: np.ndarray) -> None:
        actions = np.asarray(actions)
        self._pending = [
            w.step.remote(actions[self.bounds[k] : self.bounds[k + 1]])
            for k, w in enumerate(self.workers)
        ]

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        parts = self._ray.get(self._pending)
        self._pending = []
        obs = np.concatenate([p[0] for p in parts])
        rew = np.concatenate([p[1] for p in parts])
        done = np.concatenate([p[2] for p in parts])
        infos = [info for p in parts for info in p[3]]
        return obs, rew, done, infos

    def close(self) -> None:
        for w in self.workers:
            self._ray.kill(w)
        self.workers = []

    def seed(self, seed: int | None = None) -> list[int | None]:
        return [seed] * self.num_envs  # each actor was seeded at creation

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        if attr_name == "render_mode":  # asked by VecEnv.__init__; simulated envs do not render
            return [None] * self.num_envs
        raise AttributeError(f"RayVecEnv: attribute {attr_name!r} lives in the Ray actors")

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        raise NotImplementedError("RayVecEnv: environment attributes live in the actors")

    def env_method(
        self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any
    ) -> list[Any]:
        raise NotImplementedError("RayVecEnv has no per-environment methods")

    def env_is_wrapped(self, wrapper_class: Any, indices: Any = None) -> list[bool]:
        return [False] * self.num_envs


def ray_session(rc: RayConfig) -> bool:
    """Connect to (or start) Ray unless already connected; True if this call started it."""
    import ray

    if ray.is_initialized():
        return False
    if rc.address is None:
        ray.init(num_cpus=rc.local_cpus, include_dashboard=False, log_to_driver=False)
    else:
        ray.init(address=rc.address, log_to_driver=False)
    return True


def train_on_ray(
    cfg: TrainConfig,
    out: Path,
    rc: RayConfig | None = None,
    echo: Any = None,
    save_every: int = 0,
    init: str | Path | None = None,
) -> tuple[Any, dict[str, Any]]:
    """``train.trainer.train`` (same arguments after ``rc``) with the environments in Ray
    actors; writes ``out/policy.pt`` (the ``ppo`` checkpoint format) and returns
    ``(net, meta)``."""
    import ray
    import torch

    from policy.ppo import save_checkpoint
    from train.trainer import ProgressLog, arch_of, export, load_into, make_model, numerics

    rc = rc or RayConfig()
    if cfg.model.critic != "shared":
        raise ValueError(
            "[model] critic = 'privileged' trains on one machine only (xfer train without "
            "--ray): Ray's workers do not send the simulator's privileged state"
        )
    if cfg.ppo.kickstart:
        raise ValueError(
            "[ppo] kick_coef trains on one machine only (xfer train without --ray): Ray's "
            "workers do not send the teacher's labels"
        )
    torch.set_num_threads(cfg.ppo.torch_threads)
    out.mkdir(parents=True, exist_ok=True)
    started = ray_session(rc)
    venv = None
    try:
        venv = RayVecEnv(cfg.ppo.n_envs, cfg.env, cfg.ppo.seed, rc)
        model = make_model(cfg, venv, out)
        init_meta = load_into(model, init) if init else None
        cb = ProgressLog(echo=echo, save_every=save_every, out=out, arch=arch_of(cfg))
        t0, cpu0 = time.monotonic(), time.process_time()
        model.learn(total_timesteps=cfg.ppo.total_timesteps, callback=cb)
        seconds, cpu = time.monotonic() - t0, time.process_time() - cpu0
        net = export(model, arch_of(cfg))
        meta = {
            "config": cfg.to_dict(),
            "seed": cfg.ppo.seed,
            "timesteps": int(model.num_timesteps),
            "train_seconds": round(seconds, 1),
            "train_cpu_seconds": round(cpu, 1),  # of this process only (not the actors)
            "init": None if init is None else {"checkpoint": str(init), "meta": init_meta},
            "env_steps_per_s": round(model.num_timesteps / seconds, 1) if seconds > 0 else None,
            "torch": torch.__version__,
            "numerics": numerics(),
            "ray": {
                "version": ray.__version__,
                "address": rc.address or "local",
                "workers": rc.workers,
            },
            "final_mean_reward_per_mi": float(np.mean(cb.returns[-200:])) if cb.returns else None,
        }
        save_checkpoint(out / "policy.pt", net, meta, cfg.env.initial_streams)
        return net, meta
    finally:
        if venv is not None:
            venv.close()
        if started:
            ray.shutdown()
