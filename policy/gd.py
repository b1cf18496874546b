"""``gd``: Falcon's online gradient descent over the stream count.

A faithful port of ``gradient_opt_fast`` from Falcon's ``search.py``
(arif-zaman/Falcon-File-Transfer-Optimizer). Falcon runs a *probe* at a stream count for a few
seconds (``probing_sec``) and scores it; xfer calls the controller once per MI, so a probe is
``probe`` MIs long. The first ``settle`` MIs of a probe are not scored (Falcon sleeps one second
after changing the count before it reads the counters); the score then is, as in Falcon's
``sample_transfer``::

    T = mean of the last two MIs' throughput (Mbit/s by default)
    L = retransmitted / sent segments over the scored MIs (0 if unknown)
    score = round(-(T / K^n - T * L * B))            # lower is better

and the descent rule is Falcon's: start at 1 stream (or ``initial_streams``), then 2; then::

    gradient  = (score_now - score_prev) / max(1, |Δn|)   (signed along the direction of Δn)
    change    = |gradient / score_prev|
    theta     = theta ± 1 while the gradient keeps its sign, reset to ±1 when it flips
    next n    = clip(n + int(theta * ceil(n * change)), min_streams, best n so far + 10)

Spec: ``gd[:probe=3,settle=1,k=1.02,b=10]`` (probe and settle default to 3 s and 1 s in MIs).
The probe helpers here are shared with ``bo``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, ClassVar, Self

from policy.base import C, ControllerConfig
from policy.signals import SignalVector
from policy.utility import UtilityConfig, utility


def parse_args(args: str, allowed: dict[str, type], who: str) -> dict[str, float]:
    """Parse ``key=value,key=value`` controller ARGS; each key must be in ``allowed``."""
    out: dict[str, float] = {}
    for item in (x.strip() for x in args.split(",")):
        if not item:
            continue
        key, sep, value = item.partition("=")
        key = key.strip().lower()
        if not sep or key not in allowed:
            raise ValueError(
                f"{who}: bad argument {item!r}; expected key=value with key in "
                f"{', '.join(sorted(allowed))}"
            )
        try:
            out[key] = allowed[key](value.strip())
        except ValueError:
            raise ValueError(
                f"{who}: {key} needs a {allowed[key].__name__}, got {value!r}"
            ) from None
    return out


def parse_config(cls: type[C], text: str, who: str) -> C:
    """``KEY=VALUE[,KEY=VALUE...]`` over the defaults of the config dataclass ``cls`` (a
    wrapper's options, e.g. ``guard:hold=20,hold_growth=2``); each key must be a field."""
    kinds = {f.name: type(f.default) for f in fields(cls)}  # type: ignore[arg-type]
    values: dict[str, Any] = parse_args(text, kinds, who)
    return replace(cls(), **values)  # type: ignore[type-var]


class RuleConfig:
    """Mixin of a wrapper rule's config dataclass (``judge``, ``warmup``): its options as
    ``KEY=VALUE[,KEY=VALUE...]`` over the defaults, and the round trip through a checkpoint's
    meta (``meta[who]``), where unknown keys are an error (a newer checkpoint)."""

    __slots__ = ()
    who: ClassVar[str]

    @classmethod
    def parse(cls, text: str) -> Self:
        """``KEY=VALUE[,KEY=VALUE...]`` over the defaults, e.g. ``rtts=8,cc=bbr``."""
        return parse_config(cls, text, cls.who)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for a checkpoint's ``meta[who]``."""
        return asdict(self)  # type: ignore[call-overload]

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Self:
        """Inverse of :meth:`to_dict`."""
        extra = set(d) - {f.name for f in fields(cls)}  # type: ignore[arg-type]
        if extra:
            raise ValueError(f"checkpoint {cls.who} config has unknown keys {sorted(extra)}")
        return cls(**d)


@dataclass(frozen=True, slots=True)
class ProbeConfig:
    """How one probe (one evaluation of a stream count) is measured and scored."""

    probe_mis: int = 3
    """MIs spent at a stream count before it is scored (Falcon's ``probing_sec`` at a 1 s MI)."""
    settle_mis: int = 1
    """Leading MIs of a probe that are not scored (streams opening, TCP ramping up)."""
    utility: UtilityConfig = UtilityConfig()
    """Constants K, B and the throughput unit of the score."""

    def __post_init__(self) -> None:
        if self.probe_mis < 1:
            raise ValueError(f"probe must be >= 1 MI, got {self.probe_mis}")
        if not 0 <= self.settle_mis < self.probe_mis:
            raise ValueError(
                f"settle must be >= 0 and < probe ({self.probe_mis}), got {self.settle_mis}"
            )

    @classmethod
    def from_args(cls, kv: dict[str, float], who: str, mi_s: float = 1.0) -> ProbeConfig:
        """Build from parsed ARGS (keys ``probe``, ``settle``, ``k``, ``b``) of controller ``who``.

        Defaults follow Falcon in seconds: a 3 s probe whose first second is not scored, i.e.
        3 and 1 MIs at a 1 s MI, 6 and 2 at 0.5 s, 2 and 1 at 2 s."""
        probe = int(kv.get("probe", max(2, round(3.0 / mi_s))))
        settle = int(kv.get("settle", min(max(1, round(1.0 / mi_s)), probe - 1)))
        util = UtilityConfig(k=float(kv.get("k", 1.02)), b=float(kv.get("b", 10.0)))
        try:
            return cls(probe_mis=probe, settle_mis=settle, utility=util)
        except ValueError as exc:
            raise ValueError(f"{who}: {exc}") from None


PROBE_ARGS: dict[str, type] = {"probe": int, "settle": int, "k": float, "b": float}
"""ARGS understood by every probing controller."""


def falcon_score(signals: list[SignalVector], streams: int, cfg: UtilityConfig) -> float:
    """Falcon's ``sample_transfer`` score of the scored MIs of one probe (lower is better)."""
    thr = sum(s.throughput_bps for s in signals[-2:]) / len(signals[-2:])
    sent = sum(s.data_segs_out for s in signals)
    resent = sum(s.retrans_segs for s in signals)
    if sent > 0:
        loss = resent / sent if sent > resent else 0.0
    else:  # segment counters unknown: fall back on the per-MI loss rates
        known = [s.loss_rate for s in signals if s.loss_rate is not None]
        loss = sum(known) / len(known) if known else 0.0
    return float(round(-utility(thr, streams, loss, cfg)))


class Probe:
    """Collects the MIs of the current probe and scores it when it is complete."""

    def __init__(self, cfg: ProbeConfig) -> None:
        self.cfg = cfg
        self._seen = 0
        self._scored: list[SignalVector] = []

    def restart(self) -> None:
        """Start a new probe (the stream count has just been changed)."""
        self._seen = 0
        self._scored = []

    def add(self, s: SignalVector, streams: int) -> float | None:
        """Add one MI measured at ``streams``; the score once the probe is complete, else None."""
        self._seen += 1
        if self._seen > self.cfg.settle_mis:
            self._scored.append(s)
        if self._seen < self.cfg.probe_mis:
            return None
        score = falcon_score(self._scored, streams, self.cfg.utility)
        self.restart()
        return score


class GradientDescent:
    """Falcon's ``gradient_opt_fast``, driven one MI at a time."""

    name = "gd"

    def __init__(self, args: str, config: ControllerConfig) -> None:
        kv = parse_args(args, PROBE_ARGS, "gd")
        self.config = config
        self.probe = Probe(ProbeConfig.from_args(kv, "gd", config.mi_s))
        self.ccs: list[int] = [config.clip(config.initial_streams or 1)]
        """Stream counts probed so far (Falcon's ``ccs``); the last one is being probed."""
        self.values: list[float] = []
        """Scores of the completed probes (Falcon's ``values``)."""
        self.theta = 0
        self.soft_limit = config.max_streams
        self.least_cost = 0.0

    def initial(self) -> int:
        return self.ccs[-1]

    def decide(self, signals: SignalVector) -> int:
        score = self.probe.add(signals, self.ccs[-1])
        if score is None:
            return self.ccs[-1]
        self.ccs.append(self._step(score))
        return self.ccs[-1]

    def _step(self, score: float) -> int:
        """One iteration of Falcon's loop after a probe scored ``score``; the next count."""
        cc = self.ccs[-1]
        self.values.append(score)
        if score < self.least_cost:
            self.least_cost = score
            self.soft_limit = min(cc + 10, self.config.max_streams)
        if len(self.ccs) == 1:
            return self.config.clip(cc + 1)
        prev_cc, prev, curr = self.ccs[-2], self.values[-2], self.values[-1]
        dist = max(1, abs(cc - prev_cc))
        gradient = (curr - prev) / dist if cc > prev_cc else (prev - curr) / dist
        change = abs(gradient / prev) if prev != 0 else abs(gradient)
        if gradient > 0:
            self.theta = self.theta - 1 if self.theta <= 0 else -1
        else:
            self.theta = self.theta + 1 if self.theta >= 0 else 1
        update = int(self.theta * math.ceil(cc * change))
        nxt = min(max(cc + update, self.config.min_streams), self.soft_limit)
        return self.config.clip(nxt)
