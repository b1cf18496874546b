"""Environment steps per second with the simulated environments in 1 and 2 Ray workers,
against the trainer's in-process vectorised environment (the peer), measured in one run.

Two numbers per setup: raw stepping (random actions, no learning) and PPO training
throughput (``train.ray_scale.train_on_ray`` vs ``train.trainer.train``, a small model).

    python benchmarks/bench_ray.py [--envs 16] [--steps 400] [--train-steps 6144]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import ray

from train.config import TrainConfig, load_config
from train.env import SimVecEnv
from train.ray_scale import RayConfig, RayVecEnv, train_on_ray
from train.trainer import SB3SimVecEnv, train


def step_rate(venv, steps: int, n_envs: int) -> float:
    rng = np.random.default_rng(0)
    venv.reset()
    for _ in range(20):  # warm up (actor start-up, first calls)
        venv.step(rng.integers(0, 5, size=n_envs))
    t0 = time.perf_counter()
    for _ in range(steps):
        venv.step(rng.integers(0, 5, size=n_envs))
    return steps * n_envs / (time.perf_counter() - t0)


def small_config(n_envs: int, total: int) -> TrainConfig:
    cfg = load_config(None)
    ppo = dataclasses.replace(
        cfg.ppo, n_envs=n_envs, n_steps=128, batch_size=512, n_epochs=4, total_timesteps=total
    )
    return dataclasses.replace(cfg, ppo=ppo, model=dataclasses.replace(cfg.model, hidden=(64, 64)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--envs", type=int, default=16)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--train-steps", type=int, default=6144)
    a = ap.parse_args()
    print(
        f"cpus {os.cpu_count()}, load {os.getloadavg()[0]:.1f}, envs {a.envs}, ray {ray.__version__}"
    )
    cfg = small_config(a.envs, a.train_steps)
    peer_step = step_rate(SB3SimVecEnv(SimVecEnv(a.envs, cfg.env, seed=0)), a.steps, a.envs)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        _, meta = train(cfg, Path(tmp) / "peer")
        peer_train = meta["timesteps"] / (time.perf_counter() - t0)
    print(f"{'setup':<22}{'step/s':>10}{'ratio':>8}{'train step/s':>15}{'ratio':>8}")
    print(f"{'in-process (peer)':<22}{peer_step:>10.0f}{1.0:>8.2f}{peer_train:>15.0f}{1.0:>8.2f}")
    ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False)
    try:
        for workers in (1, 2):
            rc = RayConfig(workers=workers)
            venv = RayVecEnv(a.envs, cfg.env, 0, rc)
            rate = step_rate(venv, a.steps, a.envs)
            venv.close()
            with tempfile.TemporaryDirectory() as tmp:
                t0 = time.perf_counter()
                _, meta = train_on_ray(cfg, Path(tmp), rc)
                tr = meta["timesteps"] / (time.perf_counter() - t0)
            name = f"ray, {workers} worker{'s' if workers > 1 else ''}"
            print(
                f"{name:<22}{rate:>10.0f}{rate / peer_step:>8.2f}{tr:>15.0f}{tr / peer_train:>8.2f}"
            )
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
