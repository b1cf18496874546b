"""``xfer train --finetune CKPT --live SCENARIO``: PPO fine-tuning on a live testbed transfer.

The checkpoint's weights are loaded into a Stable-Baselines3 PPO (same trunk and heads as
``xfer train``, :func:`train.trainer.load_into`) that runs on one :class:`train.live.LiveEnv`.
One rollout is one episode (``n_steps = episode_mi``, one full batch), followed by one PPO
update with a conservative learning rate; then ``out/policy.pt`` is rewritten (our checkpoint
format, loadable as ``ppo:out/policy.pt``) and a row is added to ``out/episodes.csv``, so an
interrupted run keeps its progress. Every ``eval_every`` episodes a greedy episode
(deterministic actions, no update) is logged with ``kind = eval``, and one before the
first update (episode 0: the checkpoint as it came).

Why not a plain ``DummyVecEnv([LiveEnv])``: it resets an environment inside the step that
ended its episode, so the next sender would start (and block in its first MI, waiting for
an answer) while PPO trains; the engine's MI clock then catches up with a burst of very
short MIs. :class:`DeferredResetVecEnv` starts the next episode at the start of the next
rollout instead, right before its first action is needed.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import DummyVecEnv

from policy.features import FeatureConfig
from policy.ppo import load_checkpoint, save_checkpoint
from train.live import DEFAULT_SWEEP, LiveConfig, LiveEnv

CSV_FIELDS = ("episode", "kind", "steps", "start_streams", "mean_utility", "utility_ratio", "mean_streams",
              "final_streams", "return", "u_star", "wall_s")  # fmt: skip


@dataclass(frozen=True)
class FinetuneConfig:
    """A live fine-tuning run (the ``xfer train --finetune`` options)."""

    checkpoint: str
    """Checkpoint to start from (our format, e.g. policy/weights/default.pt)."""
    scenario: str
    """Testbed scenario ``NAME[@RATE]``."""
    out_dir: str = "runs/finetune"
    """policy.pt, episodes.csv, progress.csv (SB3's update statistics), ustar.json, logs."""
    episodes: int = 50
    """Training episodes (one PPO update after each)."""
    episode_mi: int = 20
    """MIs (steps) per episode."""
    learning_rate: float = 1e-4
    """Adam learning rate (1e-4 moved the policy within 50 episodes, KL per update 0.01-0.06
    before the target-KL stop; 1e-5 barely moved it)."""
    n_epochs: int = 10
    """PPO epochs over each episode's batch (stopped early by the checkpoint's target_kl)."""
    random_start: float = 0.4
    """Fraction of training episodes that start at a random stream count (the rest start at
    the checkpoint's initial streams, as the simulator's training does: 0.4)."""
    eval_every: int = 0
    """Run a greedy (deterministic, no update) episode every this many episodes; 0: never."""
    seed: int = 0
    """Seed of the PPO sampling."""
    reward: str = "ratio"
    """``ratio`` (U / U*, as the shipped policy was trained) or ``paper``."""
    u_star: float | None = None
    """Utility of the best fixed N if known; else measured (and cached in ``out_dir``)."""
    ustar_sweep: tuple[int, ...] = DEFAULT_SWEEP
    """Fixed stream counts of the U* sweep."""
    ustar_seconds: float = 8.0
    """Seconds per fixed-N run of the U* sweep."""
    max_streams: int = 64
    """The sender's ``--max-streams``."""
    mi_s: float = 1.0
    """The sender's monitoring interval."""


class DeferredResetVecEnv(DummyVecEnv):
    """One environment; an ended episode is NOT reset inside ``step`` but by :meth:`reset`
    when the next rollout starts (see the module docstring). Until then ``pending_reset``
    is true and the returned observation is the episode's last one (SB3 masks it: done)."""

    def __init__(self, env: LiveEnv) -> None:
        super().__init__([lambda: env])
        self.pending_reset = False

    def reset(self) -> Any:
        self.pending_reset = False
        return super().reset()

    def step_wait(self) -> Any:
        if self.pending_reset:
            raise RuntimeError("DeferredResetVecEnv: step after an episode ended, before reset()")
        env = self.envs[0]
        obs, rew, terminated, truncated, info = env.step(self.actions[0])
        self.buf_rews[0], self.buf_dones[0], self.buf_infos[0] = rew, terminated or truncated, info
        info["TimeLimit.truncated"] = truncated and not terminated
        if self.buf_dones[0]:
            info["terminal_observation"] = obs
            self.pending_reset = True
        self._save_obs(0, obs)
        return self._obs_from_buf(), np.copy(self.buf_rews), np.copy(self.buf_dones), [dict(info)]


class Finetuner(BaseCallback):
    """Logs, saves and evaluates between episodes; starts each training episode."""

    def __init__(self, fc: FinetuneConfig, venv: DeferredResetVecEnv, arch: dict[str, Any],
                 base: dict[str, Any], echo: Any) -> None:  # fmt: skip
        super().__init__()
        self.fc, self.venv, self.arch, self.base, self.echo = fc, venv, arch, base, echo
        self.out = Path(fc.out_dir)
        self.csv = self.out / "episodes.csv"
        self.done = 0
        self.ret = 0.0
        self.finished: dict[str, Any] | None = None
        self.t0 = time.monotonic()
        self.rows: list[dict[str, Any]] = []

    @property
    def env(self) -> LiveEnv:
        env: LiveEnv = self.venv.envs[0]  # type: ignore[assignment]
        return env

    def _on_step(self) -> bool:
        self.ret += float(self.locals["rewards"][0])
        info = self.locals["infos"][0]
        if "live_episode" in info:
            self.finished = {**info["live_episode"], "return": self.ret}
            self.ret = 0.0
        return True

    def _on_rollout_start(self) -> None:
        self.wrap_up()
        if self.fc.eval_every and self.done and self.done % self.fc.eval_every == 0:
            self.greedy_episode()
        if self.venv.pending_reset:
            self.model._last_obs = self.venv.reset()
            self.model._last_episode_starts = np.ones((1,), dtype=bool)

    def wrap_up(self) -> None:
        """After the update that followed an episode: save policy.pt, log the episode."""
        if self.finished is None:
            return
        self.done += 1
        self.save()
        self.log_row(self.done, "train", self.finished)
        self.finished = None

    def greedy_episode(self, model: Any = None) -> None:
        """One episode with deterministic actions and no update, logged as ``eval``."""
        env, model = self.env, model or self.model
        obs, _ = env.reset(options={"initial_streams": env.cfg.initial_streams})
        ret, truncated, info = 0.0, False, dict[str, Any]()
        while not truncated:
            action, _ = model.predict(obs, deterministic=True)
            obs, r, _, truncated, info = env.step(np.int64(action))
            ret += r
        self.log_row(self.done, "eval", {**info["live_episode"], "return": ret})
        if self.done and (self.out / "policy.pt").exists():  # the policy this eval scored
            shutil.copyfile(self.out / "policy.pt", self.out / f"policy-ep{self.done}.pt")

    def save(self) -> None:
        from train.trainer import export

        net = export(self.model, self.arch)  # type: ignore[arg-type]
        fc = {
            k: list(v) if isinstance(v, tuple) else v
            for k, v in dataclasses.asdict(self.fc).items()
        }
        meta = {
            "finetune": {**fc, "episodes_done": self.done, "u_star": self.env.u_star,
                         "wall_seconds": round(time.monotonic() - self.t0, 1)},
            "base": {"checkpoint": self.fc.checkpoint, "config": self.base.get("meta", {}).get("config")},
        }  # fmt: skip
        tmp = self.out / "policy.pt.tmp"
        save_checkpoint(tmp, net, meta, int(self.base.get("initial_streams", 2)))
        tmp.replace(self.out / "policy.pt")  # never a half-written policy.pt

    def log_row(self, episode: int, kind: str, st: dict[str, Any]) -> None:
        row = {"episode": episode, "kind": kind, "u_star": self.env.u_star, **st}
        new = not self.csv.exists()
        with self.csv.open("a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
            if new:
                w.writeheader()
            w.writerow({k: f"{v:.4g}" if isinstance(v, float) else v for k, v in row.items()})
        self.rows.append(row)
        self.echo(
            f"finetune: episode {episode:3d} {kind:5s} utility ratio {row['utility_ratio']:.3f}  "
            f"mean U {row['mean_utility']:.1f}  streams mean {row['mean_streams']:.1f} "
            f"final {row['final_streams']}  ({row['wall_s']:.0f} s)"
        )


def _ppo_config(base: dict[str, Any], fc: FinetuneConfig) -> Any:
    """The checkpoint's own PPO hyperparameters (if recorded), with the fine-tuning overrides."""
    from train.config import PPOConfig

    recorded = (base.get("meta", {}).get("config") or {}).get("ppo") or {}
    known = {f.name for f in dataclasses.fields(PPOConfig)}
    ppo = PPOConfig(**{k: v for k, v in recorded.items() if k in known})
    m = fc.episode_mi
    return dataclasses.replace(
        ppo, seed=fc.seed, n_envs=1, n_steps=m, batch_size=m, learning_rate=fc.learning_rate,
        n_epochs=fc.n_epochs, total_timesteps=fc.episodes * m, ent_coef_start=None,
        kick_coef=0.0, kick_coef_start=None,  # a real network has no privileged teacher
    )  # fmt: skip


def finetune(fc: FinetuneConfig, echo: Any = print) -> dict[str, Any]:
    """Run the fine-tuning; returns a summary (also written to ``out/finetune.json``)."""
    from train.config import TrainConfig
    from train.trainer import load_into, make_model

    if fc.episode_mi < 2:
        raise ValueError("--episode-mi must be >= 2 (a PPO batch needs two steps)")
    out = Path(fc.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    _, base = load_checkpoint(fc.checkpoint)
    arch = base["arch"]
    ppo = _ppo_config(base, fc)
    torch.set_num_threads(ppo.torch_threads)
    lc = LiveConfig(
        scenario=fc.scenario, episode_mi=fc.episode_mi, mi_s=fc.mi_s, max_streams=fc.max_streams,
        initial_streams=int(base.get("initial_streams", 2)), p_random_start=fc.random_start,
        features=FeatureConfig.from_dict(arch["features"]), reward=fc.reward, u_star=fc.u_star,
        ustar_sweep=fc.ustar_sweep, ustar_seconds=fc.ustar_seconds, out_dir=str(out),
    )  # fmt: skip
    with LiveEnv(lc, echo=echo) as env:
        if env.u_star is None:
            env.measure_ustar()
        venv = DeferredResetVecEnv(env)
        model = make_model(TrainConfig(ppo=ppo), venv, out, arch=arch)
        load_into(model, fc.checkpoint)
        cb = Finetuner(fc, venv, arch, base, echo)
        echo(
            f"finetune: {fc.checkpoint} on {fc.scenario}: {fc.episodes} episodes x "
            f"{fc.episode_mi} MIs, lr {fc.learning_rate:g}, U* {env.u_star:.1f} -> {out}"
        )
        if fc.eval_every:  # episode 0: the checkpoint as it came, for comparison
            cb.greedy_episode(model)
        model.learn(total_timesteps=ppo.total_timesteps, callback=cb)
        cb.wrap_up()  # the last episode's update
        if fc.eval_every and cb.done % fc.eval_every == 0:
            cb.greedy_episode()
        summary = {"config": json.loads(json.dumps(dataclasses.asdict(fc))),
                   "u_star": env.u_star, "episodes": cb.rows,
                   "wall_seconds": round(time.monotonic() - cb.t0, 1)}  # fmt: skip
    (out / "finetune.json").write_text(json.dumps(summary, indent=2))
    return summary
