"""Warm start for PPO: imitate a privileged teacher in the simulator (DAgger), then fine-tune.

Measured problem: PPO from a random network learns early that +5 usually hurts (a random
walk with +5 ends at far too many streams) and then never tries it again, so it climbs to
the paper-fig1 optimum by +1 per MI (15 MIs instead of 4). The simulator knows the best
fixed N of its current world, so a teacher can act perfectly: +5 / -5 while at least 5
streams away from it, +1 / -1 when closer, 0 at it. The student (the same
:class:`policy.ppo.ActorCritic`) sees only the observation; it is trained by cross-entropy
on the teacher's actions at the states the student itself visits (DAgger: the rollouts mix
teacher and student actions, the share of the student growing each round), and its value
head on the discounted returns of those rollouts. PPO then starts from these weights
(``xfer train --init``) and optimises the real reward, so the teacher's privileged
information never reaches the shipped policy except as a starting point.

    python3 -m train.bc CONFIG OUT.pt [--rounds 4] [--steps 600] [--envs 64]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from policy.ppo import ActorCritic, save_checkpoint
from train.config import TrainConfig, load_config
from train.env import SimVecEnv, teacher_action
from train.trainer import arch_of

__all__ = ["collect", "fit", "pretrain", "teacher_action"]


def collect(
    env: SimVecEnv,
    net: ActorCritic,
    beta: float,
    steps: int,
    gamma: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Roll out a teacher/student mixture; return observations, teacher labels, returns."""
    obs = env.reset(seed=int(rng.integers(2**31)))
    e = env.n_envs
    o_buf = np.zeros((steps, e, env.obs_dim), np.float32)
    a_buf = np.zeros((steps, e), np.int64)
    r_buf = np.zeros((steps, e))
    d_buf = np.zeros((steps, e), bool)
    for t in range(steps):
        n_opt, _ = env.sim.optimum()
        label = env.teacher(n_opt)
        with torch.no_grad():
            logits, _ = net(torch.from_numpy(obs))
        student = torch.argmax(logits, -1).numpy()
        act = np.where(rng.random(e) < beta, label, student)
        o_buf[t], a_buf[t] = obs, label
        obs, r, _, trunc, _ = env.step(act)
        r_buf[t], d_buf[t] = r, trunc
    ret = np.zeros((steps, e))
    acc = np.zeros(e)
    for t in range(steps - 1, -1, -1):
        acc = r_buf[t] + gamma * acc * (~d_buf[t])
        ret[t] = acc
    keep = slice(0, steps - 40)  # the last returns are cut short by the end of the rollout
    return o_buf[keep].reshape(-1, env.obs_dim), a_buf[keep].reshape(-1), ret[keep].reshape(-1)


def fit(
    net: ActorCritic, data: list[tuple[np.ndarray, ...]], epochs: int, rng: np.random.Generator
) -> float:
    """Cross-entropy on the teacher's actions plus value regression; return the accuracy."""
    o = torch.from_numpy(np.concatenate([d[0] for d in data]))
    a = torch.from_numpy(np.concatenate([d[1] for d in data]))
    r = torch.from_numpy(np.concatenate([d[2] for d in data])).float()
    opt = torch.optim.Adam(net.parameters(), lr=3e-4)
    net.train()
    for _ in range(epochs):
        perm = torch.from_numpy(rng.permutation(len(a)))
        for i in range(0, len(a), 1000):
            idx = perm[i : i + 1000]
            logits, v = net(o[idx])
            loss = torch.nn.functional.cross_entropy(logits, a[idx]) + 0.05 * torch.mean(
                (v - r[idx]) ** 2
            )
            opt.zero_grad()
            loss.backward()
            opt.step()
    net.eval()
    with torch.no_grad():
        acc = float((torch.argmax(net(o[-20000:])[0], -1) == a[-20000:]).float().mean())
    return acc


def pretrain(
    cfg: TrainConfig,
    out: Path,
    rounds: int = 4,
    steps: int = 600,
    envs: int = 64,
    echo: Any = print,
) -> dict[str, Any]:
    """DAgger rounds (beta 1, then falling to 0); write the student to ``out``."""
    torch.set_num_threads(cfg.ppo.torch_threads)
    torch.manual_seed(cfg.ppo.seed)
    rng = np.random.default_rng(cfg.ppo.seed)
    env = SimVecEnv(envs, cfg.env, seed=cfg.ppo.seed + 17)
    net = ActorCritic(arch_of(cfg)).eval()
    data: list[tuple[np.ndarray, ...]] = []
    t0, cpu0 = time.monotonic(), time.process_time()
    acc = 0.0
    for k in range(rounds):
        beta = 1.0 - k / max(rounds - 1, 1)
        data.append(collect(env, net, beta, steps, cfg.ppo.gamma, rng))
        acc = fit(net, data, epochs=3, rng=rng)
        echo(
            f"  DAgger round {k + 1}/{rounds}: beta {beta:.2f}, {sum(len(d[1]) for d in data)} samples, accuracy {acc:.3f}"
        )
    meta = {
        "stage": "dagger-warm-start",
        "rounds": rounds,
        "samples": int(sum(len(d[1]) for d in data)),
        "teacher_accuracy": acc,
        "seed": cfg.ppo.seed,
        "wall_seconds": round(time.monotonic() - t0, 1),
        "cpu_seconds": round(time.process_time() - cpu0, 1),
    }
    save_checkpoint(out, net, meta, cfg.env.initial_streams)
    return meta


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="DAgger warm start of the PPO stream policy")
    ap.add_argument("config")
    ap.add_argument("out", type=Path)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--envs", type=int, default=64)
    a = ap.parse_args()
    print(pretrain(load_config(a.config), a.out, a.rounds, a.steps, a.envs))
