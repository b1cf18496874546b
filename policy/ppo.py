"""The learned stream controller: an actor-critic network over the last n signal vectors.

Network (the paper's Table I): a shared trunk, fully connected, tanh, hidden [512, 512],
then a policy head (logits over the five actions +5, +1, 0, -1, -5 streams) and a value
head. Option: ``kind = "transformer"``, a small Transformer encoder over the history of
feature rows (as in Jazz), whose last token goes through a tanh layer into the same heads.

Checkpoint format (``torch.save`` of a plain dict, loaded with ``weights_only=True``)::

    {
      "format": "xfer-ppo/1",
      "arch": {"kind": "mlp" | "transformer", "obs_dim": int, "n_actions": 5,
               "hidden": [512, 512], "activation": "tanh",          # mlp
               "d_model": 64, "n_heads": 4, "n_layers": 2, "ff": 128,  # transformer
               "features": FeatureConfig.to_dict()},                # history, normalisation
      "state_dict": {"trunk.*", "pi.weight", "pi.bias", "v.weight", "v.bias": tensors},
      "actions": [5, 1, 0, -1, -5],
      "initial_streams": 2,
      "meta": {...}   # how it was trained: config, seed, steps, time, evaluation (plain types)
    }

An **ensemble bundle** (:func:`save_ensemble`) is ``{"format": "xfer-ppo-ensemble/1",
"members": [two or more dicts as above], "actions", "initial_streams", "meta"}``: ``ppo:PATH``
runs it as :mod:`policy.ensemble` does (the members' mean action probabilities, argmax).
:func:`read_checkpoint` and :func:`load_checkpoint` (training, fine-tuning, shipping) refuse it.

``PPOController(args, config)``: ``args`` is a checkpoint path (empty: the shipped
``policy/weights/default.pt``), optionally after ``KEY=VALUE`` options
(``ppo:omit=1:/path/ckpt.pt``, ``ppo:omit=1``). Actions are deterministic (argmax). The
next target is the controller's previous target plus the action's delta, clipped to
``[min_streams, max_streams]``.

Option ``omit`` (default 0): the first ``omit`` MIs of a transfer are not shown to the
policy and the initial streams are held through them, as ``iperf3 --omit`` leaves out the
slow-start seconds. The first MI is every stream's slow start at once; beside a BBR
competitor in a shallow queue it loses 10-18 %, and every policy answers that with -5 and
then sits at one stream (issue #16, ``hand-bbr-shared-1g``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from policy.band import Band, BandConfig
from policy.base import ControllerConfig
from policy.fast import FastConfig, FastPhase
from policy.features import N_FEATURES, FeatureConfig, FeatureTracker
from policy.judge import AddJudge, JudgeConfig
from policy.ledger import Ledger, LedgerConfig
from policy.rebound import Rebound, ReboundConfig
from policy.shed import Shed, ShedConfig
from policy.signals import SignalVector
from policy.warmup import StartGate, WarmupConfig

ACTIONS: tuple[int, ...] = (5, 1, 0, -1, -5)
"""Stream-count change of each action index (the paper's five actions)."""
FORMAT = "xfer-ppo/1"
ENSEMBLE_FORMAT = "xfer-ppo-ensemble/1"
"""A file of several ``xfer-ppo/1`` dicts that decide together (:mod:`policy.ensemble`)."""
DEFAULT_CHECKPOINT = Path(__file__).resolve().parent / "weights" / "default.pt"


def default_checkpoint(config: ControllerConfig) -> Path:
    """The file a ``ppo`` without a path loads: ``config.checkpoint``, else the shipped one."""
    return Path(config.checkpoint) if config.checkpoint else DEFAULT_CHECKPOINT


def mlp_arch(features: FeatureConfig, hidden: tuple[int, ...] = (512, 512)) -> dict[str, Any]:
    """Arch dict of the paper's fully connected tanh network."""
    return {
        "kind": "mlp",
        "obs_dim": features.obs_dim,
        "n_actions": len(ACTIONS),
        "hidden": list(hidden),
        "activation": "tanh",
        "features": features.to_dict(),
    }


def transformer_arch(
    features: FeatureConfig, d_model: int = 64, n_heads: int = 4, n_layers: int = 2, ff: int = 128
) -> dict[str, Any]:
    """Arch dict of the Transformer encoder over the history (Jazz-style)."""
    return {
        "kind": "transformer",
        "obs_dim": features.obs_dim,
        "n_actions": len(ACTIONS),
        "d_model": d_model,
        "n_heads": n_heads,
        "n_layers": n_layers,
        "ff": ff,
        "hidden": [d_model],
        "activation": "tanh",
        "features": features.to_dict(),
    }


class MLPTrunk(nn.Module):
    """Fully connected layers with tanh (the shared trunk of Table I)."""

    def __init__(self, obs_dim: int, hidden: list[int]) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        d = obs_dim
        for h in hidden:
            layers += [nn.Linear(d, h), nn.Tanh()]
            d = h
        self.net = nn.Sequential(*layers)
        self.out_dim = d

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.net(obs)


class TransformerTrunk(nn.Module):
    """Embeds each history row, runs a Transformer encoder, keeps the newest token."""

    def __init__(
        self, history: int, d_model: int, n_heads: int, n_layers: int, ff: int, n_context: int = 0
    ) -> None:
        super().__init__()
        self.history = history
        self.embed = nn.Linear(N_FEATURES, d_model)
        self.context = nn.Linear(n_context, d_model) if n_context else None
        """Context inputs (``FeatureConfig.own_cc``), added to every token's embedding."""
        self.pos = nn.Parameter(torch.zeros(history, d_model))
        layer = nn.TransformerEncoderLayer(
            d_model, n_heads, ff, dropout=0.0, batch_first=True, norm_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.head = nn.Sequential(nn.Linear(d_model, d_model), nn.Tanh())
        self.out_dim = d_model

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        rows = self.history * N_FEATURES
        x = obs[:, :rows].reshape(obs.shape[0], self.history, N_FEATURES)
        tokens = self.embed(x) + self.pos
        if self.context is not None:
            tokens = tokens + self.context(obs[:, rows:]).unsqueeze(1)
        h = self.encoder(tokens)
        return self.head(h[:, -1])


def build_trunk(arch: dict[str, Any]) -> MLPTrunk | TransformerTrunk:
    """The trunk described by ``arch`` (see the module docstring)."""
    kind = arch.get("kind")
    if kind == "mlp":
        if arch.get("activation", "tanh") != "tanh":
            raise ValueError(f"checkpoint arch: only tanh is supported, got {arch['activation']!r}")
        return MLPTrunk(int(arch["obs_dim"]), [int(h) for h in arch["hidden"]])
    if kind == "transformer":
        feats = FeatureConfig.from_dict(arch["features"])
        return TransformerTrunk(
            feats.history,
            int(arch["d_model"]),
            int(arch["n_heads"]),
            int(arch["n_layers"]),
            int(arch["ff"]),
            feats.n_context,
        )
    raise ValueError(f"checkpoint arch: unknown kind {kind!r} (expected 'mlp' or 'transformer')")


class ActorCritic(nn.Module):
    """Shared trunk, policy head ``pi`` (action logits) and value head ``v``."""

    def __init__(self, arch: dict[str, Any]) -> None:
        super().__init__()
        self.arch = arch
        self.trunk = build_trunk(arch)
        self.pi = nn.Linear(self.trunk.out_dim, int(arch["n_actions"]))
        self.v = nn.Linear(self.trunk.out_dim, 1)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.trunk(obs)
        return self.pi(h), self.v(h).squeeze(-1)


def save_checkpoint(
    path: str | Path, net: ActorCritic, meta: dict[str, Any], initial_streams: int = 2
) -> None:
    """Write ``net`` in the documented checkpoint format."""
    ckpt = {
        "format": FORMAT,
        "arch": net.arch,
        "state_dict": {k: v.detach().cpu().clone() for k, v in net.state_dict().items()},
        "actions": list(ACTIONS),
        "initial_streams": int(initial_streams),
        "meta": _plain(meta),
    }
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    torch.save(ckpt, str(path))


def _plain(x: Any) -> Any:
    """Nested dicts/lists of str/int/float/bool/None only (loadable with ``weights_only``)."""
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if x is None or type(x) in (bool, int, str):
        return x
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, float | np.floating):
        return float(x) if np.isfinite(x) else str(x)
    return str(x)


def _checked(ckpt: Any, where: str) -> dict[str, Any]:
    """One policy's dict, its format and actions checked."""
    if not isinstance(ckpt, dict) or ckpt.get("format") != FORMAT:
        got = ckpt.get("format") if isinstance(ckpt, dict) else type(ckpt).__name__
        raise ValueError(f"ppo: {where} is not an {FORMAT} checkpoint (format {got!r})")
    if list(ckpt["actions"]) != list(ACTIONS):
        raise ValueError(f"ppo: checkpoint actions {ckpt['actions']} differ from {list(ACTIONS)}")
    return ckpt


def read_members(path: str | Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The policies a file holds, checked, and the file's own dict: one for an
    ``xfer-ppo/1`` checkpoint, two or more for an ``xfer-ppo-ensemble/1`` bundle (whose
    members decide together, :mod:`policy.ensemble`). No network is built."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"ppo: checkpoint {str(p)!r} not found")
    try:
        raw = torch.load(str(p), map_location="cpu", weights_only=True)
    except Exception as exc:  # a corrupt file or a pickle that is not plain data
        raise ValueError(f"ppo: cannot load checkpoint {str(p)!r}: {exc}") from exc
    if isinstance(raw, dict) and raw.get("format") == ENSEMBLE_FORMAT:
        members = raw.get("members")
        if not isinstance(members, list) or len(members) < 2:
            raise ValueError(f"ppo: {str(p)!r}: an ensemble needs two or more members")
        where = [f"member {i} of {str(p)!r}" for i in range(len(members))]
        return [_checked(m, w) for m, w in zip(members, where, strict=True)], raw
    return [_checked(raw, repr(str(p)))], raw


def read_checkpoint(path: str | Path) -> dict[str, Any]:
    """A single policy's dict, checked (format, actions) but without building its network.
    An ensemble bundle is refused: training, fine-tuning and shipping start from one
    network (take one of its members)."""
    members, raw = read_members(path)
    if raw.get("format") == ENSEMBLE_FORMAT:
        raise ValueError(
            f"ppo: {str(path)!r} is an ensemble of {len(members)} policies ({ENSEMBLE_FORMAT});"
            " train, fine-tune and ship from one of its members (their paths are in its meta)"
        )
    return members[0]


def save_ensemble(path: str | Path, members: Sequence[str | Path], meta: dict[str, Any]) -> None:
    """Bundle the policies of ``members`` (checkpoints or bundles, flattened) into one file
    that ``ppo:PATH`` runs as an ensemble; ``meta`` records why."""
    ckpts = [m for f in members for m in read_members(f)[0]]
    starts = {int(c.get("initial_streams", 2)) for c in ckpts}
    if len(ckpts) < 2 or len(starts) != 1:
        raise ValueError(
            f"ppo: an ensemble needs two or more members with one initial stream count, got "
            f"{len(ckpts)} starting at {sorted(starts)}"
        )
    bundle = {
        "format": ENSEMBLE_FORMAT,
        "members": ckpts,
        "actions": list(ACTIONS),
        "initial_streams": starts.pop(),
        "meta": _plain({**meta, "member_files": [str(m) for m in members]}),
    }
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    torch.save(bundle, str(path))


def load_checkpoint(path: str | Path) -> tuple[ActorCritic, dict[str, Any]]:
    """Rebuild the exact network of a checkpoint; return it (in eval mode) and the dict."""
    ckpt = read_checkpoint(path)
    net = ActorCritic(ckpt["arch"])
    net.load_state_dict(ckpt["state_dict"])
    net.eval()
    return net, ckpt


def split_options(args: str, allowed: dict[str, type], who: str) -> tuple[dict[str, Any], str]:
    """``[KEY=VALUE,...:]REST`` -> (the values, REST); no options when the first part has no
    ``=`` or has a ``/`` (then it is a path). Keys must be in ``allowed``."""
    head, sep, rest = args.partition(":")
    if "=" not in head or "/" in head:
        return {}, args
    from policy.gd import parse_args

    return parse_args(head, allowed, who), rest if sep else ""


def parse_options(args: str) -> tuple[int, str]:
    """``[KEY=VALUE,...:]PATH`` -> (omit, PATH). A first part with a ``/`` is a path."""
    values, path = split_options(args, {"omit": int}, "ppo")
    omit = int(values.get("omit", 0))
    if omit < 0:
        raise ValueError(f"ppo: omit must be >= 0, got {omit}")
    return omit, path


def combine_mean(probs: np.ndarray) -> int:
    """An ensemble's action: the argmax of the members' mean probabilities (round 13)."""
    return int(np.argmax(probs.mean(axis=0)))


def combine_veto(probs: np.ndarray) -> int:
    """As :func:`combine_mean`, except that a retreat goes only as far as the most reluctant
    member's own argmax would: a member that would hold or add vetoes it (round 20).

    Why: averaging probabilities follows the more confident member, and on the testbed the
    confident one was the one sitting at 1 stream beside loss others caused (round 19's D19:
    seeds of one recipe at 0.23-0.58 on one scenario, the ensemble near its weaker member).
    A retreat the members disagree about is the costly mistake; an add is unchanged."""
    a = combine_mean(probs)
    if ACTIONS[a] >= 0:
        return a
    reluctant = max(ACTIONS[int(i)] for i in probs.argmax(axis=1))
    return ACTIONS.index(max(ACTIONS[a], min(reluctant, 0)))


COMBINE: dict[str, Callable[[np.ndarray], int]] = {"mean": combine_mean, "veto": combine_veto}
"""How an ensemble's members decide together, by name (``ensemble:rule=NAME:A+B``; a bundle's
``meta["rule"]``, ``mean`` when absent)."""


def combiner(name: str) -> Callable[[np.ndarray], int]:
    """The combine rule called ``name``; a clear error for an unknown one."""
    try:
        return COMBINE[name]
    except KeyError:
        raise ValueError(
            f"ensemble: unknown rule {name!r}; choose one of: {', '.join(COMBINE)}"
        ) from None


class StackedActors:
    """The policy heads of several MLP members of one shape, evaluated together: each layer is
    one batched matrix product over all members (``torch.baddbmm``) instead of one call per
    member, so an ensemble's decision costs little more than one member's. Only the actor
    is kept (the value head is not needed to decide), copied when the controller is built.
    :meth:`of` returns None where members differ in shape or are not MLPs; the controller
    then evaluates them one by one."""

    def __init__(self, nets: Sequence[ActorCritic]) -> None:
        per_net = [
            [m for m in n.trunk.modules() if isinstance(m, nn.Linear)] + [n.pi] for n in nets
        ]
        depth = len(per_net[0])
        with torch.no_grad():
            self.weights = [
                torch.stack([layers[i].weight.T for layers in per_net]).contiguous()
                for i in range(depth)
            ]
            self.biases = [
                torch.stack([layers[i].bias.unsqueeze(0) for layers in per_net])
                for i in range(depth)
            ]

    @classmethod
    def of(cls, nets: Sequence[ActorCritic]) -> StackedActors | None:
        shapes = {
            (a.get("kind"), int(a.get("obs_dim", -1)), tuple(a.get("hidden", ())), a["n_actions"])
            for a in (n.arch for n in nets)
        }
        if len(nets) < 2 or len(shapes) != 1 or next(iter(shapes))[0] != "mlp":
            return None
        return cls(nets)

    def logits(self, obs: np.ndarray) -> torch.Tensor:
        """Action logits, one row per member, for one observation per member (rows)."""
        last = len(self.weights) - 1
        with torch.inference_mode():
            h = torch.from_numpy(np.asarray(obs, dtype=np.float32)).unsqueeze(1)
            for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
                h = torch.baddbmm(b, h, w)
                if i < last:
                    h = torch.tanh(h)
        return h[:, 0, :]


class PPOController:
    """``ppo[:CHECKPOINT]``: the learned policy, deterministic (argmax) actions."""

    name = "ppo"

    @staticmethod
    def check(args: str, config: ControllerConfig) -> None:
        """Raise ``ValueError`` if the checkpoint ``args`` names is missing or not a policy
        (:func:`policy.base.check_spec`; the network is not built)."""
        _, args = parse_options(args)
        read_members(Path(args) if args else default_checkpoint(config))

    def __init__(self, args: str, config: ControllerConfig) -> None:
        self.omit, args = parse_options(args)
        self.path = Path(args) if args else default_checkpoint(config)
        self.files: list[Path] = [self.path]
        """The files this controller decides with (:func:`policy.base.checkpoint_files`)."""
        members, raw = read_members(self.path)
        self._build(members, config, raw.get("meta", {}))

    def _build(
        self, members: list[dict[str, Any]], config: ControllerConfig, meta: dict[str, Any]
    ) -> None:
        """Networks and feature histories of one policy or of an ensemble's members."""
        torch.set_num_threads(1)
        self.config = config
        self.nets: list[ActorCritic] = []
        self.trackers: list[FeatureTracker] = []
        for ckpt in members:
            net = ActorCritic(ckpt["arch"])
            net.load_state_dict(ckpt["state_dict"])
            self.nets.append(net.eval())
            feats = FeatureConfig.from_dict(ckpt["arch"]["features"])
            self.trackers.append(FeatureTracker(feats.with_max_streams(config.max_streams)))
        starts = {int(c.get("initial_streams", 2)) for c in members}
        if len(starts) != 1:
            raise ValueError(f"ppo: ensemble members start at different counts {sorted(starts)}")
        self.net, self.features = self.nets[0], self.trackers[0]
        self.stacked = StackedActors.of(self.nets)
        self.meta: dict[str, Any] = meta
        self.combine = combiner(str(meta.get("rule", "mean")))
        self.band: Band | None = None
        """Set when the file's ``meta["band"]`` names one: which members decide on paths of
        which minimum RTT and recent loss (:mod:`policy.band`; member rows split once here)."""
        if meta.get("band") is not None:
            self.band = Band(BandConfig.from_dict(meta["band"]), len(self.nets))
        self.target = config.clip(config.initial_streams or starts.pop())
        self.judge: AddJudge | None = None
        """Set when the file's ``meta["judge"]`` names a judge: large adds are judged by the
        MI after their join MI (:mod:`policy.judge`)."""
        if meta.get("judge") is not None:
            self.judge = AddJudge(JudgeConfig.from_dict(meta["judge"]), config, self.target)
            if self.judge.jc.band and self.band is None:
                raise ValueError("ppo: meta judge band=1 needs a bundle with a band")
        self.warmup: StartGate | None = None
        """Set when the file's ``meta["warmup"]`` names a warm-up: adds wait while the
        youngest streams start (:mod:`policy.warmup`; applied after the judge)."""
        if meta.get("warmup") is not None:
            self.warmup = StartGate(WarmupConfig.from_dict(meta["warmup"]), config, self.target)
        self.ledger: Ledger | None = None
        """Set when the file's ``meta["ledger"]`` names one: a retreat into a count just
        measured as worse is refused or undone (:mod:`policy.ledger`; after the warm-up)."""
        if meta.get("ledger") is not None:
            self.ledger = Ledger(LedgerConfig.from_dict(meta["ledger"]), config, self.target)
        self.shed: Shed | None = None
        """Set when the file's ``meta["shed"]`` names one: a retreat sheds at least a share of
        the streams (:mod:`policy.shed`; after the ledger, so a retreat it refused stays
        refused)."""
        if meta.get("shed") is not None:
            self.shed = Shed(ShedConfig.from_dict(meta["shed"]), config, self.target)
        self.rebound: Rebound | None = None
        """Set when the file's ``meta["rebound"]`` names one: the end of a flood of loss others
        made adds streams at once (:mod:`policy.rebound`; last, so no rule deepens it)."""
        if meta.get("rebound") is not None:
            self.rebound = Rebound(ReboundConfig.from_dict(meta["rebound"]), config, self.target)
        self.fast: FastPhase | None = None
        """Set when the file's ``meta["fast"]`` names one: the first MIs of a short path are
        short (:mod:`policy.fast`; the decisions are the policy's unless ``grow=2`` holds a
        retreat or ``ramp`` owns the short MIs)."""
        if meta.get("fast") is not None:
            self.fast = FastPhase(FastConfig.from_dict(meta["fast"]), config)

    def initial(self) -> int:
        return self.target

    def mi_length(self, k: int, min_rtt_ms: float | None, mi_s: float) -> float:
        """MI ``k``'s length: ``meta["fast"]``'s (:func:`policy.base.mi_length`), else mi_s."""
        return mi_s if self.fast is None else self.fast.length(k, min_rtt_ms, mi_s)

    @staticmethod
    def _logits(net: ActorCritic, obs: np.ndarray) -> torch.Tensor:
        """``net``'s policy-head logits for one observation."""
        with torch.inference_mode():
            logits, _ = net(torch.from_numpy(np.asarray(obs, dtype=np.float32)).unsqueeze(0))
        return logits[0]

    @staticmethod
    def _softmax(logits: torch.Tensor) -> np.ndarray:
        """Probabilities over the last axis (one policy's logits, or one row per member)."""
        return torch.softmax(logits.double(), dim=-1).numpy()

    def act(self, obs: np.ndarray) -> int:
        """Index of the greedy action for one observation."""
        return int(torch.argmax(self._logits(self.net, obs)).item())

    def probabilities(self, obs: np.ndarray) -> np.ndarray:
        """Action probabilities (softmax of the logits) for one observation."""
        return self._softmax(self._logits(self.net, obs))

    def member_probabilities(self, signals: SignalVector) -> np.ndarray:
        """Each member's action probabilities for this MI (rows), every history pushed."""
        if self.stacked is not None:
            obs = np.stack([t.push(signals) for t in self.trackers])
            return self._softmax(self.stacked.logits(obs))
        return np.stack(
            [
                self._softmax(self._logits(net, tracker.push(signals)))
                for net, tracker in zip(self.nets, self.trackers, strict=True)
            ]
        )

    def decide(self, signals: SignalVector) -> int:
        if self.fast is not None and self.fast.owns(signals):  # meta["fast"]'s ramp
            self.target = self.fast.ramp(self.target, signals)
            return self.target
        self._sync_rules()
        if self.omit > 0:  # the start's slow-start MIs: hold, show the policy nothing
            self.omit -= 1
            return self.target
        current = self.target
        if len(self.nets) == 1:
            a = self.act(self.features.push(signals))
        else:  # an ensemble: its combine rule over the members' probabilities
            rows = None
            if self.band is not None:  # only the members that decide on this path
                rows = self.band.rows(
                    signals.min_rtt_ms, signals.cc, signals.loss_rate, signals.streams
                )
                if self.band.restart:  # ``fresh``: it decides as from a start, from here
                    for i in rows:
                        self.trackers[i].reset()
            probs = self.member_probabilities(signals)  # every history pushed
            if rows is not None:
                probs = probs[rows]
            a = self.combine(probs)
        self.target = self.config.clip(self.target + ACTIONS[a])
        if self.judge is not None:
            if not self.judge.jc.band:
                self.target = self.judge.step(self.target, signals)
            elif self.band is not None and self.band.is_open:  # band=1: its member only,
                if self.band.opening:  # judged afresh from each opening
                    self.judge = AddJudge(self.judge.jc, self.config, current, self.judge.recent)
                self.target = self.judge.step(self.target, signals)
            else:  # closed: the judge only keeps the utilities its verdicts average
                self.judge.observe(signals)
        for rule in self._after_judge():  # in this order
            if rule is not None:
                self.target = rule.step(self.target, signals)
        if self.fast is not None:  # outermost, as ``fast:`` around the same bundle
            self.target = self.fast.step(current, self.target, signals)
        return self.target

    def _after_judge(self) -> tuple[StartGate | None, Ledger | None, Shed | None, Rebound | None]:
        """The rules that step the count after the judge, in the order they apply."""
        return self.warmup, self.ledger, self.shed, self.rebound

    def _sync_rules(self) -> None:
        """The count in effect of every rule (judge, warm-up, ledger, shed, rebound) is the
        target, whoever set it last: ``meta["fast"]``'s ramp or held retreat, or a wrapper
        outside (``fast:``, ``start:``), as :class:`policy.base.RuleWrapper` does for a rule of
        its own."""
        for rule in (self.judge, *self._after_judge()):
            if rule is not None:
                rule.current = self.target
