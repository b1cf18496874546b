"""PPO with a kickstarting term: cross-entropy towards the simulator's privileged teacher.

Round 21 measured (docs/results/issue16-round21/warmstart21.txt) that the DAgger warm start
(:mod:`train.bc`) climbs beside a BBR flow, as the best fixed stream count asks, and that
2M MIs of PPO then unlearn it: the same seeds sit at 1-2 streams. Kickstarting (Schmitt et
al. 2018, "Kickstarting Deep Reinforcement Learning") keeps the teacher in the loss: every
PPO minibatch adds

    coef * mean over the minibatch of  scope * CE(pi(. | obs), teacher(obs))

to SB3's loss (clipped surrogate + entropy + value), where ``teacher`` is
:func:`train.env.teacher_action` (towards the best fixed N of the current simulated world,
which only the simulator knows) and ``scope`` is 1 on the samples it applies to: every
sample (``all``) or only those from worlds with a BBR competitor (``bbr``, on or off at the
time). The mean runs over the whole minibatch, so ``coef`` weighs one in-scope sample as a
one-sigma advantage weighs a sample of the surrogate. ``coef`` may fall linearly from
``kick_coef_start`` (:class:`train.config.PPOConfig`).

The labels come from the environment: :class:`train.trainer.SB3SimVecEnv` computes them
during the step that acts on an observation, and :class:`KickBuffer` stores them beside it.
The update is SB3 2.x's ``PPO.train`` (clipped surrogate, clipped value change, entropy,
KL early stop, gradient clipping), with the one term added; with ``coef`` 0 it is the same
loss. Configs without ``kick_coef`` train with SB3's own class, unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any, NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from stable_baselines3 import PPO
from stable_baselines3.common.buffers import RolloutBuffer
from stable_baselines3.common.type_aliases import RolloutBufferSamples
from stable_baselines3.common.utils import explained_variance

SCOPES = ("all", "bbr")
"""Where the teacher's term applies (``PPOConfig.kick_scope``)."""


class KickSamples(NamedTuple):
    """A minibatch: SB3's rollout samples plus the teacher's label and scope weight."""

    observations: torch.Tensor
    actions: torch.Tensor
    old_values: torch.Tensor
    old_log_prob: torch.Tensor
    advantages: torch.Tensor
    returns: torch.Tensor
    labels: torch.Tensor
    scope: torch.Tensor


class KickBuffer(RolloutBuffer):
    """SB3's rollout buffer with the teacher's label and scope of each stored observation.
    ``source`` returns them for the observation about to be added (set by the trainer)."""

    source: Callable[[], tuple[np.ndarray, np.ndarray]] | None = None

    def reset(self) -> None:
        self.labels = np.zeros((self.buffer_size, self.n_envs), dtype=np.int64)
        self.scope = np.zeros((self.buffer_size, self.n_envs), dtype=np.float32)
        self._kick_flat = False
        super().reset()

    def add(self, *args: Any, **kwargs: Any) -> None:
        if self.source is None:
            raise RuntimeError("KickBuffer: no label source set")
        self.labels[self.pos], self.scope[self.pos] = self.source()
        super().add(*args, **kwargs)

    def get(self, batch_size: int | None = None) -> Generator[RolloutBufferSamples, None, None]:
        if not self._kick_flat:  # flattened as SB3 flattens the rest (env-major)
            self.labels = self.swap_and_flatten(self.labels)
            self.scope = self.swap_and_flatten(self.scope)
            self._kick_flat = True
        yield from super().get(batch_size)

    def _get_samples(self, batch_inds: np.ndarray, env: Any = None) -> Any:
        base = super()._get_samples(batch_inds, env)
        labels = torch.as_tensor(self.labels[batch_inds].flatten(), device=self.device)
        scope = self.to_torch(self.scope[batch_inds].flatten())
        return KickSamples(*base, labels, scope)


class KickstartPPO(PPO):
    """SB3's PPO whose loss also pulls the policy towards the teacher's labels."""

    kick_coef: float = 0.0
    """The term's current weight (the trainer's callback moves it along its schedule)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["rollout_buffer_class"] = KickBuffer
        super().__init__(*args, **kwargs)

    def train(self) -> None:
        """One PPO update (SB3 2.x's ``PPO.train``) with the kickstarting term."""
        pol = self.policy
        pol.set_training_mode(True)
        self._update_learning_rate(pol.optimizer)
        clip = self.clip_range(self._current_progress_remaining)  # type: ignore[operator]
        clip_vf = None
        if self.clip_range_vf is not None:
            clip_vf = self.clip_range_vf(self._current_progress_remaining)  # type: ignore[operator]
        logs: dict[str, list[float]] = {k: [] for k in ("pg", "vf", "ent", "kick", "agree", "clip")}
        kls: list[float] = []
        for _ in range(self.n_epochs):
            kls = []
            stop = False
            for b in self.rollout_buffer.get(self.batch_size):
                assert isinstance(b, KickSamples)
                actions = b.actions.long().flatten()
                latent_pi, latent_vf = pol.mlp_extractor(pol.extract_features(b.observations))
                dist = pol._get_action_dist_from_latent(latent_pi)
                values = pol.value_net(latent_vf).flatten()
                log_prob, entropy = dist.log_prob(actions), dist.entropy()
                adv = b.advantages
                if self.normalize_advantage and len(adv) > 1:
                    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                ratio = torch.exp(log_prob - b.old_log_prob)
                pg = -torch.min(adv * ratio, adv * torch.clamp(ratio, 1 - clip, 1 + clip)).mean()
                pred = values
                if clip_vf is not None:
                    pred = b.old_values + torch.clamp(values - b.old_values, -clip_vf, clip_vf)
                vf = F.mse_loss(b.returns, pred)
                ent = -torch.mean(entropy)  # a categorical policy: the entropy is exact
                kick = -(b.scope * dist.log_prob(b.labels)).mean()
                loss = pg + self.ent_coef * ent + self.vf_coef * vf + self.kick_coef * kick
                with torch.no_grad():
                    log_ratio = log_prob - b.old_log_prob
                    kl = float(torch.mean(torch.exp(log_ratio) - 1 - log_ratio))
                    kls.append(kl)
                    n_in = float(b.scope.sum())
                    if n_in > 0:
                        hit = dist.distribution.probs.argmax(-1) == b.labels
                        logs["agree"].append(float((hit.float() * b.scope).sum()) / n_in)
                for k, v in (("pg", pg), ("vf", vf), ("ent", ent), ("kick", kick)):
                    logs[k].append(float(v.detach()))
                logs["clip"].append(float(torch.mean((torch.abs(ratio - 1) > clip).float())))
                if self.target_kl is not None and kl > 1.5 * self.target_kl:
                    stop = True
                    break
                pol.optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(pol.parameters(), self.max_grad_norm)
                pol.optimizer.step()
            self._n_updates += 1
            if stop:
                break
        buf = self.rollout_buffer
        ev = explained_variance(buf.values.flatten(), buf.returns.flatten())
        rec = self.logger.record
        for key, name in (("pg", "policy_gradient_loss"), ("vf", "value_loss"),
                          ("ent", "entropy_loss"), ("kick", "kick_loss"),
                          ("agree", "kick_agreement"), ("clip", "clip_fraction")):  # fmt: skip
            if logs[key]:
                rec(f"train/{name}", float(np.mean(logs[key])))
        rec("train/approx_kl", float(np.mean(kls)) if kls else 0.0)
        rec("train/kick_coef", self.kick_coef)
        rec("train/explained_variance", float(ev))
        rec("train/n_updates", self._n_updates, exclude="tensorboard")
        rec("train/clip_range", clip)
