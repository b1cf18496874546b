"""Observation features for the learned policy: the last n signal vectors, scale-free.

The same code serves the engine (one transfer, one :class:`SignalVector` per MI, through
:class:`FeatureTracker`) and the simulator (many environments at once, through
:func:`step_features` on numpy arrays). Nothing here depends on the absolute capacity or
RTT of the path, so one policy works from 50 Mbit/s to 10 Gbit/s and from 2 to 200 ms:

===  ===================  ===============================================================
idx  name                 value
===  ===================  ===============================================================
0    ``valid``            1 if this history slot holds a measurement, 0 for padding
1    ``thr_rel``          throughput / decaying maximum throughput seen in this transfer
2    ``thr_change``       log(T_t / T_{t-1}) clipped to [-2, 2], divided by 2
3    ``loss``             (log10(max(loss, 1e-6)) + 6) / 6, so 0 -> 0, 1e-4 -> 0.33, 1 -> 1
4    ``loss_known``       1 if the loss rate was measured, else 0 (and ``loss`` is 0)
5    ``rtt_gradient``     tanh(10 * RTT gradient in s/s); 0 if unknown
6    ``rtt_ratio``        log(RTT ratio) clipped to [0, 2], divided by 2; 0 if unknown. The
                          ratio is taken against max(min RTT, ``rtt_floor_ms``): queueing
                          delay (RTT - min RTT) over that base, plus 1
                          (:func:`floored_rtt_ratio`)
7    ``rtt_known``        1 if RTT ratio and gradient were measured, else 0
8    ``streams_rel``      streams / max_streams
9    ``streams_log``      log2(1 + streams) / log2(1 + streams_scale)
10   ``streams_change``   (streams_t - streams_{t-1}) / 5 clipped to [-2, 2], divided by 2
11   ``utility_rel``      U(T, n, L) / decaying maximum throughput, clipped to [-1, 1]
12   ``streams_logchange`` log(n_t / n_{t-1}) clipped to [-2, 2], divided by 2
13   ``elasticity``       log(T_t / T_{t-1}) / log(n_t / n_{t-1}) clipped to [-2, 2],
                          divided by 2 (about 0.5 where throughput grows in proportion to
                          the streams, 0 where more streams buy nothing); 0 if n unchanged
===  ===================  ===============================================================

The observation is the history of the last ``history`` such rows, oldest first, flattened
(``history * 14`` floats); slots before the first MI are all zero.

With ``FeatureConfig.own_cc`` one context input follows the history: ``own_bbr``, 1 if our
own streams ran BBR in the newest MI (the engine's ``SignalVector.cc``; the simulator's
per-network congestion control), else 0 (also when unknown). Our BBR streams lose 6-25 % in a
shallow queue with nobody else there (issue #16 round 18), where a loss-based window loses
next to nothing: without the bit the policy cannot tell its own loss from another transfer's.

With ``FeatureConfig.memory`` five more context inputs follow (:data:`MEMORY_NAMES`): what
became of the last change of the stream count, kept for as long as the count stands, however
long that is (the history forgets it after 8 MIs):

==================  =======================================================================
``still_log``       log2(1 + MIs measured at the current count, this one included; at most
                    64) / 6: 1 MI -> 0.17, 8 -> 0.53, 64 -> 1
``last_logchange``  log(n / n before the last change) clipped to [-2, 2], divided by 2; 0
                    before the first change (the transfer's start is not a change)
``last_elasticity`` log(T now / T in the MI before the last change) / log(n / n before),
                    clipped to [-2, 2], divided by 2: the change's elasticity as it settles
                    (added streams that reach their rate MIs after they join read low in the
                    join MI and higher later; the history's ``elasticity`` is the join MI's)
``last_dloss``      ``loss`` now minus ``loss`` in the MI before the last change, clipped to
                    [-1, 1]: did the change bring loss with it
``last_dutility``   (U now - U in the MI before the last change) / the decaying maximum
                    throughput, clipped to [-1, 1]: did the change pay
==================  =======================================================================

Why (issue #16 round 30, ``docs/results/issue16-round30/``): a stationary history reads the
same at the best N (loss of our own) as below it beside loss that others cause, so every
policy answers it with its training distribution's prior, 0 or -1. What tells the two apart
is a change and its outcome (an add whose throughput grew in proportion while the loss
stayed), and how long ago the count last moved; neither outlives the 8-MI history without
this memory.

With ``FeatureConfig.backoff`` (on top of the memory) one more input follows,
``probe_fails``: log2(1 + the probes in a row that did not pay, at most 3) / 2 (0, 0.5, 0.79,
1). A probe that did not pay is an add undone within :data:`PROBE_WINDOW` MIs of it; a change
in the same direction as the one before (a climb or a retreat that goes on), or a retreat
from a count that stood longer than the window, sets it back to 0 (:func:`step_fails`). Why
(round 32, ``docs/results/issue16-round32/``): round 31's students probed every 8-10 MIs,
at the same rate after probes that failed; a teacher that waits 8, 16, 32 MIs after each
failed probe can only be imitated by a policy that can read how many failed.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np
import numpy.typing as npt

from policy.signals import SignalVector
from policy.utility import UtilityConfig

FloatArray = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

FEATURE_NAMES: tuple[str, ...] = (
    "valid",
    "thr_rel",
    "thr_change",
    "loss",
    "loss_known",
    "rtt_gradient",
    "rtt_ratio",
    "rtt_known",
    "streams_rel",
    "streams_log",
    "streams_change",
    "utility_rel",
    "streams_logchange",
    "elasticity",
)
N_FEATURES = len(FEATURE_NAMES)

MEMORY_NAMES: tuple[str, ...] = (
    "still_log",
    "last_logchange",
    "last_elasticity",
    "last_dloss",
    "last_dutility",
)
"""Context inputs of ``FeatureConfig.memory`` (module docstring), after ``own_bbr``."""
STILL_CAP = 64
"""``still_log``'s MIs are counted up to this."""
BACKOFF_NAMES: tuple[str, ...] = ("probe_fails",)
"""Context input of ``FeatureConfig.backoff`` (module docstring), after the memory."""
FAILS_CAP = 3
"""``probe_fails`` counts up to this."""
PROBE_WINDOW = 3
"""An add undone after at most this many MIs at the added count is a probe that did not
pay."""


@dataclass(frozen=True, slots=True)
class FeatureConfig:
    """How signal vectors become an observation (stored in every checkpoint)."""

    history: int = 8
    """Number of past MIs in the observation (the paper's n)."""
    max_streams: int = 64
    """Denominator of ``streams_rel``; the engine passes its ``--max-streams``."""
    streams_scale: int = 64
    """Fixed scale of ``streams_log`` (absolute stream count matters for the K^n cost)."""
    max_decay: float = 0.98
    """Per-MI decay of the running maximum throughput (lets ``thr_rel`` recover after the
    capacity drops: the maximum halves in about 35 MIs)."""
    utility_k: float = 1.02
    """K of the utility used for ``utility_rel``."""
    utility_b: float = 10.0
    """B of the utility used for ``utility_rel``."""
    rtt_floor_ms: float = 1.0
    """Smallest base of the RTT ratio, ms. On a LAN or loopback the minimum RTT is tens of
    microseconds and scheduling jitter alone reads as a ratio of 6-10 (issue #16, situation
    4); against a 1 ms floor that jitter is a ratio near 1, as it should be. Paths of
    >= 1 ms are unchanged. 0 turns the floor off (checkpoints before it: their inputs on
    sub-ms paths change, nothing else)."""
    own_cc: bool = False
    """Append the ``own_bbr`` context input after the history (module docstring). Off in
    every checkpoint written before it (their key is absent: the observation is unchanged)."""
    memory: bool = False
    """Append the five inputs of :data:`MEMORY_NAMES` (the outcome of the last change of the
    stream count, and how long the count has stood) after ``own_bbr``. Off in every checkpoint
    written before it."""
    backoff: bool = False
    """Append ``probe_fails`` (:data:`BACKOFF_NAMES`: the probes in a row that did not pay)
    after the memory; needs ``memory``. Off in every checkpoint written before it."""

    def __post_init__(self) -> None:
        if self.backoff and not self.memory:
            raise ValueError("features: backoff needs memory")

    @property
    def n_context(self) -> int:
        """Inputs after the history (``own_bbr``, then the memory, then the back-off)."""
        return (
            int(self.own_cc)
            + len(MEMORY_NAMES) * int(self.memory)
            + len(BACKOFF_NAMES) * int(self.backoff)
        )

    @property
    def obs_dim(self) -> int:
        """Length of the flattened observation."""
        return self.history * N_FEATURES + self.n_context

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for checkpoints."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FeatureConfig:
        """Inverse of :meth:`to_dict`; unknown keys are an error (a newer checkpoint)."""
        known = set(cls.__dataclass_fields__)
        extra = set(d) - known
        if extra:
            raise ValueError(f"checkpoint features config has unknown keys {sorted(extra)}")
        return cls(**d)

    def with_max_streams(self, max_streams: int) -> FeatureConfig:
        """Same config for a transfer with another ``--max-streams``."""
        d = self.to_dict()
        d["max_streams"] = max_streams
        return FeatureConfig(**d)


@dataclass
class FeatureState:
    """Per-environment running state of the features (arrays with one row per environment)."""

    thr_max: npt.NDArray[np.float64]
    """Decaying maximum throughput, bit/s."""
    thr_prev: npt.NDArray[np.float64]
    """Throughput of the previous MI (0 before the first)."""
    streams_prev: npt.NDArray[np.float64]
    """Streams of the previous MI (0 before the first)."""
    hist: FloatArray
    """History of feature rows, shape ``(E, history, N_FEATURES)``, oldest first."""
    ctx: FloatArray
    """Context inputs of the newest MI, shape ``(E, n_context)``."""
    loss_prev: npt.NDArray[np.float64]
    """``loss`` input of the previous MI (memory)."""
    util_prev: npt.NDArray[np.float64]
    """Utility of the previous MI, bit/s (memory)."""
    still: npt.NDArray[np.float64]
    """MIs measured at the current count, the newest included (memory)."""
    last_dlogn: npt.NDArray[np.float64]
    """log(n / n before) of the last change; 0 before the first (memory)."""
    base_thr: npt.NDArray[np.float64]
    """Throughput of the MI before the last change (memory)."""
    base_loss: npt.NDArray[np.float64]
    """``loss`` input of the MI before the last change (memory)."""
    base_util: npt.NDArray[np.float64]
    """Utility of the MI before the last change, bit/s (memory)."""
    fails: npt.NDArray[np.float64]
    """Probes in a row that did not pay, at most :data:`FAILS_CAP` (back-off)."""
    last_dir: npt.NDArray[np.float64]
    """Sign of the last count change; 0 before the first (back-off)."""

    @classmethod
    def zeros(cls, n_envs: int, cfg: FeatureConfig) -> FeatureState:
        """Fresh state for ``n_envs`` transfers that have not measured anything yet."""
        arrays: dict[str, Any] = {f.name: np.zeros(n_envs, np.float64) for f in fields(cls)}
        arrays["hist"] = np.zeros((n_envs, cfg.history, N_FEATURES), np.float32)
        arrays["ctx"] = np.zeros((n_envs, cfg.n_context), np.float32)
        return cls(**arrays)

    def observation(self) -> FloatArray:
        """The flattened observations ``(E, obs_dim)``: history, then context."""
        flat = self.hist.reshape(self.hist.shape[0], -1)
        return np.concatenate([flat, self.ctx], axis=1) if self.ctx.shape[1] else flat.copy()

    def reset(self, mask: npt.NDArray[np.bool_]) -> None:
        """Forget the environments selected by ``mask`` (a new transfer starts there)."""
        for f in fields(self):
            getattr(self, f.name)[mask] = 0.0

    def take(self, mask: npt.NDArray[np.bool_]) -> FeatureState:
        """A copy of the rows selected by ``mask`` (every field)."""
        return FeatureState(**{f.name: getattr(self, f.name)[mask] for f in fields(self)})

    def put(self, mask: npt.NDArray[np.bool_], sub: FeatureState) -> None:
        """Write ``sub`` (from :meth:`take` with the same ``mask``) back into those rows."""
        for f in fields(self):
            getattr(self, f.name)[mask] = getattr(sub, f.name)


def _nan_to(x: npt.NDArray[np.float64], v: float) -> npt.NDArray[np.float64]:
    return np.where(np.isnan(x), v, x)


def floored_rtt_ratio(
    rtt_ratio: npt.NDArray[np.float64], min_rtt_ms: npt.NDArray[np.float64], floor_ms: float
) -> npt.NDArray[np.float64]:
    """The RTT ratio against ``max(min RTT, floor)``: ``1 + (ratio - 1) x min / max(min,
    floor)``, i.e. the queueing delay over the floored base. Unchanged where the minimum RTT
    is unknown (NaN) or at least the floor, and where ``floor_ms`` is 0."""
    if floor_ms <= 0:
        return rtt_ratio
    base = np.where(np.isnan(min_rtt_ms), np.inf, np.maximum(min_rtt_ms, 1e-9))
    scale = np.where(base < floor_ms, base / floor_ms, 1.0)
    return 1.0 + (rtt_ratio - 1.0) * scale


def step_features(
    st: FeatureState,
    cfg: FeatureConfig,
    throughput_bps: npt.NDArray[np.float64],
    streams: npt.NDArray[np.float64],
    loss_rate: npt.NDArray[np.float64],
    rtt_gradient: npt.NDArray[np.float64],
    rtt_ratio: npt.NDArray[np.float64],
    min_rtt_ms: npt.NDArray[np.float64] | None = None,
    own_bbr: npt.NDArray[np.float64] | None = None,
) -> FloatArray:
    """Push one MI's measurements (NaN = unknown) into ``st``; return observations ``(E, D)``.
    ``min_rtt_ms`` (NaN or ``None`` = unknown) sets the base of the RTT ratio
    (``FeatureConfig.rtt_floor_ms``). ``own_bbr`` (1 = our streams run BBR; ``None`` =
    unknown, read as 0) is the context input of ``FeatureConfig.own_cc``."""
    if min_rtt_ms is not None:
        rtt_ratio = floored_rtt_ratio(rtt_ratio, min_rtt_ms, cfg.rtt_floor_ms)
    thr = np.maximum(throughput_bps, 0.0)
    st.thr_max = np.maximum(thr, st.thr_max * cfg.max_decay)
    tmax = np.maximum(st.thr_max, 1.0)
    row = np.zeros((thr.shape[0], N_FEATURES), dtype=np.float64)
    row[:, 0] = 1.0
    row[:, 1] = thr / tmax
    had_prev = st.thr_prev > 0
    ratio = np.where(had_prev, np.maximum(thr, 1.0) / np.maximum(st.thr_prev, 1.0), 1.0)
    row[:, 2] = np.clip(np.log(ratio), -2.0, 2.0) / 2.0
    loss_known = ~np.isnan(loss_rate)
    loss = np.clip(_nan_to(loss_rate, 0.0), 0.0, 1.0)
    row[:, 3] = np.where(loss_known, (np.log10(np.maximum(loss, 1e-6)) + 6.0) / 6.0, 0.0)
    row[:, 4] = loss_known
    rtt_known = ~np.isnan(rtt_ratio)
    row[:, 5] = np.tanh(10.0 * _nan_to(rtt_gradient, 0.0))
    row[:, 6] = np.clip(np.log(np.maximum(_nan_to(rtt_ratio, 1.0), 1e-9)), 0.0, 2.0) / 2.0
    row[:, 7] = rtt_known
    n = np.maximum(streams, 0.0)
    row[:, 8] = n / max(cfg.max_streams, 1)
    row[:, 9] = np.log2(1.0 + n) / np.log2(1.0 + cfg.streams_scale)
    dn = np.where(st.streams_prev > 0, n - st.streams_prev, 0.0)
    row[:, 10] = np.clip(dn / 5.0, -2.0, 2.0) / 2.0
    util = thr / cfg.utility_k**n - thr * loss * cfg.utility_b
    row[:, 11] = np.clip(util / tmax, -1.0, 1.0)
    had_n = (st.streams_prev > 0) & (n > 0)
    dlog_n = np.where(had_n, np.log(np.maximum(n, 1e-9) / np.maximum(st.streams_prev, 1e-9)), 0.0)
    row[:, 12] = np.clip(dlog_n, -2.0, 2.0) / 2.0
    moved = np.abs(dlog_n) > 1e-3
    elast = np.log(ratio) / np.where(moved, dlog_n, 1.0)
    row[:, 13] = np.where(moved & had_prev, np.clip(elast, -2.0, 2.0) / 2.0, 0.0)
    if cfg.backoff:  # before the memory moves ``still`` on: here it is the old count's
        d = np.where(moved, np.sign(dlog_n), 0.0)
        st.fails, st.last_dir = step_fails(st.fails, st.last_dir, st.still, d)
        st.ctx[:, -1] = np.log2(1.0 + st.fails) / np.log2(1.0 + FAILS_CAP)
    if cfg.memory:
        mem = slice(int(cfg.own_cc), int(cfg.own_cc) + len(MEMORY_NAMES))
        st.ctx[:, mem] = _step_memory(st, thr, tmax, row[:, 3], util, dlog_n, moved)
    st.thr_prev = thr
    st.streams_prev = n
    st.hist[:, :-1] = st.hist[:, 1:]
    st.hist[:, -1] = row
    if cfg.own_cc:
        bit = np.zeros_like(thr) if own_bbr is None else np.nan_to_num(own_bbr, nan=0.0)
        st.ctx[:, 0] = bit > 0.5
    return st.observation()


def step_fails(fails: F64, last_dir: F64, since: F64, d: F64) -> tuple[F64, F64]:
    """The back-off count after one step. ``d``: the sign of this step's count change (0:
    none); ``since``: the MIs run at the count before it. A retreat within
    :data:`PROBE_WINDOW` MIs of an add is one more probe that did not pay; a change in the
    last one's direction, or a retreat from an add that stood longer, clears the count; an
    add after a retreat (the next probe) leaves it. Returns ``(fails, last_dir)``. Shared by
    the features and the simulator's teacher (:func:`train.env.teacher_action`)."""
    moved = d != 0
    up_before = last_dir > 0
    failed = (d < 0) & up_before & (since <= PROBE_WINDOW)
    clear = moved & ((d == last_dir) | ((d < 0) & up_before & ~failed))
    fails = np.where(failed, np.minimum(fails + 1.0, FAILS_CAP), np.where(clear, 0.0, fails))
    return fails, np.where(moved, d, last_dir)


def _step_memory(
    st: FeatureState, thr: F64, tmax: F64, loss_f: F64, util: F64, dlog_n: F64, moved: BoolArray
) -> npt.NDArray[np.float64]:
    """Update the memory of the last count change with this MI (``moved``: the count changed
    since the previous MI, by ``dlog_n``); return the :data:`MEMORY_NAMES` inputs ``(E, 5)``.
    Called before ``st``'s previous-MI fields move on."""
    st.still = np.where(moved, 1.0, np.minimum(st.still + 1.0, STILL_CAP))
    st.last_dlogn = np.where(moved, dlog_n, st.last_dlogn)
    st.base_thr = np.where(moved, st.thr_prev, st.base_thr)
    st.base_loss = np.where(moved, st.loss_prev, st.base_loss)
    st.base_util = np.where(moved, st.util_prev, st.base_util)
    st.loss_prev, st.util_prev = loss_f.copy(), util.copy()
    changed = np.abs(st.last_dlogn) > 1e-3
    known = changed & (st.base_thr > 0)
    thr_ratio = np.maximum(thr, 1.0) / np.maximum(st.base_thr, 1.0)
    elast = np.log(thr_ratio) / np.where(changed, st.last_dlogn, 1.0)
    out = np.zeros((thr.shape[0], len(MEMORY_NAMES)), dtype=np.float64)
    out[:, 0] = np.log2(1.0 + st.still) / np.log2(1.0 + STILL_CAP)
    out[:, 1] = np.clip(st.last_dlogn, -2.0, 2.0) / 2.0
    out[:, 2] = np.where(known, np.clip(elast, -2.0, 2.0) / 2.0, 0.0)
    out[:, 3] = np.where(known, np.clip(loss_f - st.base_loss, -1.0, 1.0), 0.0)
    out[:, 4] = np.where(known, np.clip((util - st.base_util) / tmax, -1.0, 1.0), 0.0)
    return out


def _f(x: float | None) -> float:
    return float("nan") if x is None else float(x)


def own_bbr_bit(cc: str | None) -> float:
    """The ``own_bbr`` input for a congestion-control name: 1 for BBR (any version), 0 for
    anything else, NaN when unknown."""
    if cc is None:
        return float("nan")
    return 1.0 if cc.lower().startswith("bbr") else 0.0


class FeatureTracker:
    """Features of one transfer, fed one :class:`SignalVector` per MI (the engine's side)."""

    def __init__(self, cfg: FeatureConfig) -> None:
        self.cfg = cfg
        self.state = FeatureState.zeros(1, cfg)

    def reset(self) -> None:
        """Forget everything (a new transfer)."""
        self.state = FeatureState.zeros(1, self.cfg)

    def observation(self) -> FloatArray:
        """The current observation without pushing anything, shape ``(obs_dim,)``."""
        return self.state.observation()[0]

    def push(self, s: SignalVector) -> FloatArray:
        """Add one MI's signal vector; return the observation, shape ``(obs_dim,)``."""
        a = np.array
        obs = step_features(
            self.state,
            self.cfg,
            a([float(s.throughput_bps)]),
            a([float(s.streams)]),
            a([_f(s.loss_rate)]),
            a([_f(s.rtt_gradient)]),
            a([_f(s.rtt_ratio)]),
            a([_f(s.min_rtt_ms)]),
            a([own_bbr_bit(s.cc)]),
        )
        return obs[0]


def utility_config(cfg: FeatureConfig) -> UtilityConfig:
    """The utility constants the features were computed with."""
    return UtilityConfig(k=cfg.utility_k, b=cfg.utility_b)
