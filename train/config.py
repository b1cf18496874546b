"""Training configuration: one frozen dataclass per part, loaded from TOML with checks.

A file in ``configs/train/`` has the sections ``[ppo]`` (:class:`PPOConfig`), ``[model]``
(:class:`ModelConfig`), ``[env]`` (:class:`EnvConfig` scalars), ``[sim]`` (:class:`SimConfig`)
and ``[features]`` (:class:`FeatureConfig`). Unknown keys are an error that names the file
and the section.

A file may start from another: ``extends = "default.toml"`` (a path relative to the file)
reads that file first (itself possibly extending a third), then lays this file's keys over
it section by section, so a candidate config states only what it changes. A cycle of
``extends`` is an error that lists the files.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from policy.features import FeatureConfig
from train.env import EnvConfig
from train.sim import SimConfig
from xfer.tomlconf import build, check_unknown, read_toml


@dataclass(frozen=True)
class PPOConfig:
    """PPO hyperparameters (defaults: the paper's Table I where it gives a value)."""

    seed: int = 0
    """Seed of the simulator, the network initialisation and the sampling."""
    total_timesteps: int = 1_000_000
    """Environment steps (MIs) to train for."""
    n_envs: int = 16
    """Simulated transfers stepped together."""
    n_steps: int = 250
    """MIs per environment per rollout (batch = n_envs * n_steps)."""
    learning_rate: float = 5e-5
    """Adam learning rate (Table I: 0.00005)."""
    gamma: float = 1.0
    """Discount factor (Table I: 1)."""
    gae_lambda: float = 0.95
    """GAE lambda (not in Table I; RLlib's default is 1.0, SB3's 0.95)."""
    clip_range: float = 0.3
    """PPO clip parameter (Table I: 0.3)."""
    clip_range_vf: float | None = 10.0
    """Value clip (Table I: 10; SB3 clips the value change, RLlib the value loss)."""
    target_kl: float | None = 0.01
    """KL target (Table I: 0.01); SB3 stops the epoch loop when KL > 1.5 x target."""
    ent_coef: float = 0.01
    """Entropy coefficient (Table I: 0.01); the final value when ``ent_coef_start`` is set."""
    ent_coef_start: float | None = None
    """If set, the entropy coefficient starts here and falls linearly to ``ent_coef`` at
    ``ent_decay_fraction`` of the training (keeps rare but valuable actions, +5, explored)."""
    ent_decay_fraction: float = 0.7
    """Fraction of the training over which ``ent_coef_start`` decays to ``ent_coef``."""
    vf_coef: float = 0.5
    """Value loss weight (shared trunk, so it matters; RLlib's default is 1.0)."""
    n_epochs: int = 30
    """SGD iterations per batch (Table I: 30)."""
    batch_size: int = 1000
    """SGD minibatch size (Table I: 1000)."""
    max_grad_norm: float = 0.5
    """Gradient clipping."""
    torch_threads: int = 1
    """Torch threads (the machine is shared)."""
    kick_coef: float = 0.0
    """Kickstarting (:mod:`train.kickstart`): weight of the cross-entropy towards the
    simulator's privileged teacher in every PPO minibatch; the final value when
    ``kick_coef_start`` is set. 0 (and no start): SB3's PPO, unchanged."""
    kick_coef_start: float | None = None
    """If set, the kickstarting weight starts here and moves linearly to ``kick_coef`` at
    ``kick_decay_fraction`` of the training."""
    kick_decay_fraction: float = 0.7
    """Fraction of the training over which ``kick_coef_start`` moves to ``kick_coef``."""
    kick_scope: str = "bbr"
    """Samples the teacher's term applies to: ``all``, or ``bbr`` (worlds with a BBR
    competitor, on or off: where round 21 saw PPO unlearn the teacher's climb)."""

    def __post_init__(self) -> None:
        from train.kickstart import SCOPES

        if self.kick_scope not in SCOPES:
            raise ValueError(f"[ppo] kick_scope must be one of {SCOPES}, got {self.kick_scope!r}")
        if self.kick_coef < 0 or (self.kick_coef_start is not None and self.kick_coef_start < 0):
            raise ValueError("[ppo] kick_coef and kick_coef_start must be >= 0")

    @property
    def kickstart(self) -> bool:
        """Whether training carries the teacher's term at all."""
        return self.kick_coef > 0 or bool(self.kick_coef_start)


@dataclass(frozen=True)
class ModelConfig:
    """The network: Table I's MLP or a small Transformer over the history."""

    kind: str = "mlp"
    """``mlp`` or ``transformer``."""
    hidden: tuple[int, ...] = (512, 512)
    """MLP hidden sizes (Table I: [512, 512], tanh, shared between policy and value)."""
    d_model: int = 64
    """Transformer width."""
    n_heads: int = 4
    """Transformer attention heads."""
    n_layers: int = 2
    """Transformer encoder layers."""
    ff: int = 128
    """Transformer feed-forward width."""
    critic: str = "shared"
    """``shared``: the value head sits on the policy's trunk (Table I). ``privileged``: an
    asymmetric critic (Pinto et al. 2017) of its own, ``critic_hidden`` wide, that sees the
    observation plus what only the simulator knows (best stream count, a competitor on),
    so advantages of the loss-others-cause worlds are not averaged over worlds the policy
    cannot tell apart. The shipped network is the same actor either way; the critic stays
    in training (train/trainer.py)."""
    critic_hidden: tuple[int, ...] = (256, 256)
    """Hidden sizes of the privileged critic (tanh)."""

    def __post_init__(self) -> None:
        if self.kind not in ("mlp", "transformer"):
            raise ValueError(f"[model] kind must be 'mlp' or 'transformer', got {self.kind!r}")
        if self.critic not in ("shared", "privileged"):
            raise ValueError(
                f"[model] critic must be 'shared' or 'privileged', got {self.critic!r}"
            )


@dataclass(frozen=True)
class TrainConfig:
    """Everything a training run needs."""

    ppo: PPOConfig = field(default_factory=PPOConfig)
    """PPO hyperparameters."""
    model: ModelConfig = field(default_factory=ModelConfig)
    """Network."""
    env: EnvConfig = field(default_factory=EnvConfig)
    """Simulated environment (includes ``sim`` and ``features``)."""
    eval_networks: int = 100
    """Held-out random networks for the final simulated evaluation."""
    eval_seed: int = 1_000_003
    """Seed of the held-out networks (never used in training)."""
    warm_start: str = "none"
    """``none`` or ``dagger``: imitate the simulator's privileged teacher first (train/bc.py)."""
    dagger_rounds: int = 5
    """DAgger rounds of the warm start."""
    dagger_steps: int = 500
    """MIs per environment per DAgger round."""
    dagger_envs: int = 64
    """Simulated transfers per DAgger round."""

    def __post_init__(self) -> None:
        if self.warm_start not in ("none", "dagger"):
            raise ValueError(
                f"[train] warm_start must be 'none' or 'dagger', got {self.warm_start!r}"
            )

    def to_dict(self) -> dict[str, Any]:
        """Plain nested dict (for checkpoints and JSON records)."""
        from dataclasses import asdict

        return asdict(self)


_UNKNOWN = "{where}: unknown keys {listed}; allowed: {allowed}"


def _build(cls: Any, section: dict[str, Any], where: str) -> Any:
    return build(cls, section, where, ValueError, unknown=_UNKNOWN)


def _settable() -> dict[str, set[str]]:
    """Each section's keys a file may set (the nested dataclasses are sections of their own)."""
    return {
        "ppo": {f.name for f in fields(PPOConfig)},
        "model": {f.name for f in fields(ModelConfig)},
        "env": {f.name for f in fields(EnvConfig)} - {"sim", "features"},
        "sim": {f.name for f in fields(SimConfig)},
        "features": {f.name for f in fields(FeatureConfig)},
        "train": {f.name for f in fields(TrainConfig)} - {"ppo", "model", "env"},
    }


def _check_names(data: dict[str, Any], where: str) -> None:
    """Unknown sections and keys of one file, named by that file (before any merge, so a key
    in a base file is reported under the base's name)."""
    allowed = _settable()
    check_unknown(
        data, allowed, where, ValueError, "{where}: unknown sections {listed}; allowed: {allowed}"
    )
    for name, section in data.items():
        if isinstance(section, dict):
            check_unknown(section, allowed[name], f"{where} [{name}]", ValueError, _UNKNOWN)


def read_config(path: str | Path, chain: tuple[Path, ...] = ()) -> dict[str, Any]:
    """The document at ``path`` with its ``extends`` chain resolved: the base's sections,
    each updated key by key with this file's (a key of this file wins). Every file's section
    and key names are checked on their own, so an error names the file that holds the key."""
    data = read_toml(path, ValueError, lambda: f"training config {str(path)!r}: not found")
    base = data.pop("extends", None)
    _check_names(data, str(path))
    if base is None:
        return data
    if not isinstance(base, str):
        raise ValueError(f"{path}: extends must be a file name, got {base!r}")
    here = Path(path).resolve()
    target = (here.parent / base).resolve()
    if target in (*chain, here):
        names = " -> ".join(str(p) for p in (*chain, here, target))
        raise ValueError(f"{path}: extends makes a cycle: {names}")
    merged = read_config(target, (*chain, here))
    for name, section in data.items():
        if isinstance(section, dict) and isinstance(merged.get(name), dict):
            merged[name] = {**merged[name], **section}
        else:
            merged[name] = section
    return merged


def load_config(path: str | Path | None = None, **overrides: Any) -> TrainConfig:
    """Read a training TOML (``None``: all defaults; ``extends`` resolved, see the module
    docstring); ``overrides`` replace ``[ppo]`` keys."""
    where = str(path) if path else "<defaults>"
    data: dict[str, Any] = {}
    if path is not None:
        data = read_config(path)
    ppo = _build(PPOConfig, data.get("ppo", {}), f"{where} [ppo]")
    ppo = replace(ppo, **{k: v for k, v in overrides.items() if v is not None})
    model = _build(ModelConfig, data.get("model", {}), f"{where} [model]")
    sim = _build(SimConfig, data.get("sim", {}), f"{where} [sim]")
    feats = _build(FeatureConfig, data.get("features", {}), f"{where} [features]")
    # section and key names were checked file by file in read_config (_check_names), so the
    # nested dataclasses cannot be set twice here
    env_kw = dict(data.get("env", {}))
    env = _build(EnvConfig, {**env_kw, "sim": sim, "features": feats}, f"{where} [env]")
    train = dict(data.get("train", {}))
    return _build(
        TrainConfig, {**train, "ppo": ppo, "model": model, "env": env}, f"{where} [train]"
    )
