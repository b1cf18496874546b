"""The controller interface and the registry of controllers by name.

Each MI the engine hands a :class:`SignalVector` to ``Controller.decide`` and gets back the
target number of streams. Controllers are chosen by a spec string ``NAME[:ARGS]`` (e.g.
``fixed:8``, ``schedule:2,8,1,16``, ``ppo:/path/to/ckpt.pt``). Built-in controllers are
listed in :data:`_BUILTIN` as ``module:attribute`` so that heavy imports (torch) happen only
when that controller is chosen; third parties call :func:`register`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar, runtime_checkable

from policy.signals import SignalVector

C = TypeVar("C")
"""A wrapper's config dataclass (:meth:`Wrapper._options`)."""


@dataclass(frozen=True, slots=True)
class ControllerConfig:
    """Settings every controller receives (mapped from ``xfer send`` options)."""

    min_streams: int = 1
    """Never ask for fewer streams than this."""
    max_streams: int = 64
    """Never ask for more streams than this."""
    initial_streams: int | None = None
    """Streams to open before the first MI; ``None`` lets the controller choose."""
    mi_s: float = 1.0
    """Monitoring interval in seconds (informational: controllers are called once per MI)."""
    checkpoint: str = ""
    """The file a ``ppo`` (or ``ensemble`` member ``default``) without a path loads; empty:
    the shipped ``policy/weights/default.pt``. Replays of a block run before a ship set it to
    the file that was shipped then (:func:`train.replay.pinned`)."""

    def __post_init__(self) -> None:
        if self.min_streams < 1:
            raise ValueError(f"min_streams must be >= 1, got {self.min_streams}")
        if self.max_streams < self.min_streams:
            raise ValueError(
                f"max_streams ({self.max_streams}) must be >= min_streams ({self.min_streams})"
            )

    def clip(self, n: int) -> int:
        """Clip a stream count to ``[min_streams, max_streams]``."""
        return max(self.min_streams, min(self.max_streams, int(n)))


@runtime_checkable
class Controller(Protocol):
    """Decides the number of parallel streams once per MI."""

    name: str

    def initial(self) -> int:
        """Streams to open before any measurement."""
        ...

    def decide(self, signals: SignalVector) -> int:
        """Target stream count for the next MI, given what the last MI measured."""
        ...


Factory = Callable[[str, ControllerConfig], Controller]
"""Builds a controller from the ARGS part of its spec and the common config."""

_BUILTIN: dict[str, str] = {
    "fixed": "policy.simple:Fixed",
    "schedule": "policy.simple:Schedule",
    "gd": "policy.gd:GradientDescent",
    "bo": "policy.bo:BayesianOptimizer",
    "ppo": "policy.ppo:PPOController",
    "guard": "policy.guard:Guard",
    "judge": "policy.judge:Judge",
    "warmup": "policy.warmup:Warmup",
    "ensemble": "policy.ensemble:Ensemble",
    "exo": "policy.exo:Exo",
    "ledger": "policy.ledger:LedgerWrapper",
    "start": "policy.start:Start",
    "shed": "policy.shed:ShedWrapper",
    "rebound": "policy.rebound:ReboundWrapper",
    "fast": "policy.fast:Fast",
    "stdin": "policy.external:StdinController",
}
_REGISTRY: dict[str, Factory] = {}


def register(name: str, factory: Factory) -> None:
    """Register a controller factory under ``name`` (overrides a built-in of that name)."""
    _REGISTRY[name] = factory


def available() -> list[str]:
    """Names of every controller that can be chosen."""
    return sorted(set(_BUILTIN) | set(_REGISTRY))


def parse_spec(spec: str) -> tuple[str, str]:
    """Split ``NAME[:ARGS]`` into ``(name, args)``."""
    name, _, args = spec.partition(":")
    return name.strip().lower(), args.strip()


def split_specs(text: str) -> tuple[str, ...]:
    """A comma-separated list of specs (``--policies gd,ppo``) -> the specs.

    A spec's own arguments may hold commas too (``guard:loss_min=0.005,cooldown=32``,
    ``schedule:2,8,1,16``): a piece starts a new spec only if its name (before any ``:``) is
    a controller's; any other piece is an argument of the spec before it."""
    names = set(available())
    out: list[str] = []
    for piece in (p.strip() for p in text.split(",")):
        if not piece:
            continue
        if out and parse_spec(piece)[0] not in names:
            out[-1] = f"{out[-1]},{piece}"
        else:
            out.append(piece)
    return tuple(out)


def _factory(name: str) -> Factory:
    factory = _REGISTRY.get(name)
    if factory is None:
        target = _BUILTIN.get(name)
        if target is None:
            raise ValueError(f"unknown policy {name!r}; choose one of: {', '.join(available())}")
        module, _, attr = target.partition(":")
        factory = getattr(importlib.import_module(module), attr)
    return factory


def make_controller(spec: str, config: ControllerConfig | None = None) -> Controller:
    """Build the controller named by ``spec`` (``NAME[:ARGS]``).

    Raises ``ValueError`` with the list of known names when ``NAME`` is unknown, and whatever
    the controller raises (also ``ValueError``) when its ARGS are bad.
    """
    name, args = parse_spec(spec)
    return _factory(name)(args, config or ControllerConfig())


class Wrapper:
    """Plumbing of a controller around another (``guard``, ``judge``): ``NAME[:INNER]``, the
    inner controller (default ``ppo``) built by :meth:`_wrap`, and its stream-count target
    exposed as the wrapper's own (setting it moves the inner controller, as a caller holding
    a history does, e.g. ``train.gates``)."""

    name: str
    inner: Controller

    @staticmethod
    def _options(args: str, parse: Callable[[str], C], given: C) -> tuple[C, str]:
        """Split ``KEY=VALUE,...[:INNER]`` into the options (read by ``parse``) and the inner
        spec; ``args`` without options keeps ``given`` and is all inner spec."""
        head, _, rest = args.partition(":")
        return (parse(head), rest) if "=" in head else (given, args)

    def _wrap(self, spec: str, config: ControllerConfig, what: str | None) -> Controller:
        """Build the inner controller ``spec``; ``what`` says what the target is needed for.
        It may not be another controller of this kind, and it must have a ``target`` unless
        ``what`` is ``None`` (a wrapper that only edits what its inner controller sees)."""
        spec = spec or "ppo"
        if parse_spec(spec)[0] == self.name:
            raise ValueError(f"{self.name}: the inner controller cannot be another {self.name}")
        inner = make_controller(spec, config)
        if what is not None and not hasattr(inner, "target"):
            raise ValueError(
                f"{self.name}: inner controller {spec!r} has no target the {self.name} can "
                f"{what} (use ppo[:CKPT], ensemble:... or stdin)"
            )
        return inner

    def mi_length(self, k: int, min_rtt_ms: float | None, mi_s: float) -> float:
        """Length of MI ``k`` (1-based): the inner controller's wish (``fast``), else ``mi_s``.
        The engine asks it before each MI starts (:func:`mi_length`)."""
        return mi_length(self.inner, k, min_rtt_ms, mi_s)

    @property
    def target(self) -> int:
        """The inner controller's stream-count target."""
        return int(self.inner.target)  # type: ignore[attr-defined]

    @target.setter
    def target(self, n: int) -> None:
        self.inner.target = n  # type: ignore[attr-defined]


class RuleWrapper(Wrapper):
    """A wrapper whose count is a rule's verdict on the inner controller's proposal each MI
    (``judge``, ``warmup``). ``rule`` has ``current`` (the count in effect) and
    ``step(proposed, signals) -> count``; a bundle may carry the same rule in its meta
    (``meta[name]``), and then wrapping it again is refused."""

    rule: RuleStep

    @property
    def target(self) -> int:
        """The inner controller's stream-count target."""
        return int(self.inner.target)  # type: ignore[attr-defined]

    @target.setter
    def target(self, n: int) -> None:
        """Move the inner controller and the rule's count in effect together (an outer
        wrapper that sets the count, e.g. ``fast``'s ramp, sets both)."""
        self.inner.target = n  # type: ignore[attr-defined]
        self.rule.current = n

    def _wrap_once(self, spec: str, config: ControllerConfig, what: str, doing: str) -> Controller:
        """:meth:`_wrap`, refusing an inner controller that applies this rule itself."""
        inner = self._wrap(spec, config, what)
        if getattr(inner, self.name, None) is not None:
            raise ValueError(
                f"{self.name}: {spec or 'ppo'!r} {doing} already (its checkpoint's meta names one)"
            )
        return inner

    def initial(self) -> int:
        return self.rule.current

    def decide(self, signals: SignalVector) -> int:
        proposed = self.inner.decide(signals)  # always: the inner history stays whole
        n = self.rule.step(proposed, signals)
        if n != self.target:
            self.target = n
        return n


class RuleStep(Protocol):
    """What :class:`RuleWrapper` needs of its rule."""

    current: int

    def step(self, proposed: int, signals: SignalVector) -> int: ...


def mi_length(controller: object, k: int, min_rtt_ms: float | None, mi_s: float) -> float:
    """How long MI ``k`` (1-based) of a transfer should last: ``controller.mi_length(k,
    min_rtt_ms, mi_s)`` if it has one (``fast``, or a wrapper around it), else ``mi_s``. The
    answer is clipped to [mi_s / 64, mi_s]: a controller may ask for shorter MIs, never
    longer ones, and never so short that an MI holds no data."""
    f = getattr(controller, "mi_length", None)
    got = mi_s if f is None else float(f(k, min_rtt_ms, mi_s))
    return max(mi_s / 64, min(mi_s, got))


def checkpoint_files(controller: object) -> list[Path]:
    """The policy files a built controller decides with: its own ``files`` and those of the
    controllers it wraps (through ``inner``), in order, each once. Empty for a controller
    without learned weights (``gd``, ``fixed``)."""
    out: list[Path] = []
    seen: set[int] = set()
    c: object | None = controller
    while c is not None and id(c) not in seen:
        seen.add(id(c))
        out += [Path(f) for f in getattr(c, "files", ()) if Path(f) not in out]
        c = getattr(c, "inner", None)
    return out


def check_spec(spec: str, config: ControllerConfig | None = None) -> None:
    """Raise ``ValueError`` if ``spec`` would not build a controller, without keeping one.

    A controller whose factory has a ``check(args, config)`` (``ppo``: the checkpoint is read
    and checked, the network is not built) is checked by it; cheap ones are built and dropped.
    """
    name, args = parse_spec(spec)
    factory = _factory(name)
    cfg = config or ControllerConfig()
    check = getattr(factory, "check", None)
    if check is not None:
        check(args, cfg)
    else:
        factory(args, cfg)
