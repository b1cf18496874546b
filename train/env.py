"""Gymnasium environments: the simulator (batched and single) and the design of the live one.

One step = one monitoring interval. The agent sees the observation of
:mod:`policy.features` (the same code the engine's ``ppo`` controller runs), picks one of
the paper's five actions (+5, +1, 0, -1, -5 streams, clipped to ``[1, max_streams]``) and
gets a reward computed from the utility U = T / K^n - T L B of the MI that followed:

* ``reward = "ratio"`` (default): U_t / U*_t, where U*_t is the steady-state utility of the
  best fixed stream count in the current simulated world. Scale-free (a 50 Mbit/s and a
  10 Gbit/s network give the same reward for the same relative quality) and directly the
  quantity the evaluation reports (``utility_ratio``).
* ``reward = "paper"``: the paper's +x / y / 0 on the sign of U_t - U_{t-1}, with the dead
  band epsilon given relative to U* (so it is scale-free too).

Live environment: :class:`LiveEnv` (defined in :mod:`train.live`, re-exported here) is the
same observation, action and reward over a real ``xfer send`` in ``testbeds.Testbed``, one
MI per step, steered through the engine's ``--policy stdin`` controller; U* there is the
measured utility of the best fixed stream count. ``xfer train --finetune CKPT --live
SCENARIO`` fine-tunes on it (:mod:`train.finetune`; see ``docs/learning.md``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
import numpy.typing as npt

from policy.features import FeatureConfig, FeatureState, step_fails, step_features
from policy.ppo import ACTIONS
from train.live import LiveConfig, LiveEnv
from train.sim import CC_NAMES, Measurement, NetParams, SimConfig, Simulator, utility_of

__all__ = ["EnvConfig", "LiveConfig", "LiveEnv", "SimVecEnv", "XferSimEnv", "teacher_action"]

F64 = npt.NDArray[np.float64]


@dataclass(frozen=True)
class EnvConfig:
    """The simulated environment: network ranges, episode shape, observation and reward."""

    sim: SimConfig = field(default_factory=SimConfig)
    """Domain randomisation of the simulator."""
    features: FeatureConfig = field(default_factory=FeatureConfig)
    """Observation (history length and normalisation)."""
    episode_len: tuple[int, int] = (40, 120)
    """Episode length range in MIs (uniform, inclusive)."""
    p_initial_default: float = 0.6
    """Fraction of episodes that start at ``initial_streams`` (what the controller opens)."""
    initial_streams: int = 2
    """Stream count opened before the first MI in most episodes (the others start uniform
    in [1, max_streams] so that the policy also learns to go down)."""
    p_hold: float = 0.0
    """Share of episodes whose first ``hold_mis`` MIs keep the initial stream count whatever
    the agent asks: histories that are stationary at any N, as after a controller held there
    (issue #16: once its 8-MI history was stationary the shipped policy held at any N, even
    at 2 streams alone on an idle 1 Gbit/s link). 0: no draws, the episodes of before."""
    hold_mis: tuple[int, int] = (4, 16)
    """Range (uniform, inclusive) of the held MIs of such an episode."""
    warmup_rtts: float = 0.0
    """The shipped policy's warm-up (:class:`policy.warmup.StartGate`) in the training loop:
    an add the agent asks for while the youngest streams have had fewer than this many
    round trips (of the minimum RTT seen) since they joined is not applied, as the engine's
    ``ppo`` does with a bundle's ``meta["warmup"]``. 0: off (every add applied, the episodes
    of before). Round 28: the shipped members never saw a deferral, and after one a history
    stationary at the held count often asks nothing again (docs/results/issue16-round27/)."""
    warmup_cc: str = "bbr"
    """Apply ``warmup_rtts`` only while our streams run this cc (``any``: always)."""
    reset_steps_all: bool = True
    """When an episode ends, its reset runs the new episode's first MI in every simulated
    world, so the other environments advance one MI that their agent never observes (about
    one step in five with 16 environments and 40-120-MI episodes; found in round 28's
    review). False: only the reset worlds advance (``Simulator.step``'s mask). True, the
    default, keeps the episodes every shipped policy was trained on bit for bit."""
    teacher_probe: int = 0
    """The privileged teacher (DAgger warm start, kickstarting) labels +1 instead of 0 at the
    best N once the count has run unchanged for this many MIs (:func:`teacher_action`). 0:
    off, the teacher of before."""
    teacher_probe_above: bool = False
    """With ``teacher_probe``: the probe replaces a retreat too (a stationary count above the
    best N), not only the 0 at it."""
    teacher_backoff: int = 0
    """With ``teacher_probe``: after k probes in a row that did not pay
    (:func:`policy.features.step_fails`) the teacher waits ``teacher_probe`` x 2^min(k, this)
    still MIs before the next (2: 8, 16, 32 MIs). 0: the same wait after every probe."""
    probe_cap: int = 0
    """An add asked for once the count has stood unchanged for this many MIs (the MI just
    measured included) is applied as one stream, as ``ppo`` does with a bundle's
    ``meta["warmup"]["probe"]`` (:class:`policy.warmup.StartGate`). 0: off, adds as asked."""
    climb_cap: int = 0
    """1: an add of more than one stream that does not continue a climb (the count's last
    change was a retreat, or the warm-up deferred an add before the first change) is applied
    as one stream; 2: the episode's first add as well. As ``ppo`` does with a bundle's
    ``meta["warmup"]["climb"]`` (:class:`policy.warmup.StartGate`). 0: off."""
    climb_loss: float = 0.0
    """Apply ``climb_cap`` only when the MI just measured lost at least this fraction (0:
    always), as ``meta["warmup"]["climb_loss"]``."""
    climb_peak: int = 0
    """1: read ``climb_loss`` on the largest loss since the count's last change, the MI that
    decided it included, as ``meta["warmup"]["climb_peak"]``. 0: the MI just measured."""
    climb_probe: int = 0
    """1: an add cut by ``climb_cap`` is a probe: the next add of more than one stream is cut
    too unless the MI just measured lost less than ``climb_loss``, as
    ``meta["warmup"]["climb_probe"]``. 0: off."""
    reward: str = "ratio"
    """``ratio`` (U / U*) or ``paper`` (sign of the change of U)."""
    reward_x: float = 1.0
    """``paper`` reward: value when U rose by more than epsilon."""
    reward_y: float = -1.0
    """``paper`` reward: value when U fell by more than epsilon."""
    reward_epsilon: float = 0.02
    """``paper`` reward: dead band, as a fraction of U* (scale-free)."""

    def __post_init__(self) -> None:
        if self.reward not in ("ratio", "paper"):
            raise ValueError(f"env reward must be 'ratio' or 'paper', got {self.reward!r}")
        if not 0.0 <= self.p_hold <= 1.0 or not 0 <= self.hold_mis[0] <= self.hold_mis[1]:
            raise ValueError(
                f"env p_hold must be in [0, 1] and hold_mis a range, got {self.p_hold}, "
                f"{self.hold_mis}"
            )
        if min(self.teacher_probe, self.teacher_backoff, self.probe_cap) < 0:
            raise ValueError(
                f"env teacher_probe, teacher_backoff and probe_cap must be >= 0, got "
                f"{self.teacher_probe}, {self.teacher_backoff}, {self.probe_cap}"
            )
        if (
            self.climb_cap not in (0, 1, 2)
            or not 0.0 <= self.climb_loss <= 1.0
            or self.climb_peak not in (0, 1)
            or self.climb_probe not in (0, 1)
        ):
            raise ValueError(
                f"env climb_cap must be 0, 1 or 2, climb_loss in [0, 1], climb_peak and "
                f"climb_probe 0 or 1, got {self.climb_cap}, {self.climb_loss}, "
                f"{self.climb_peak}, {self.climb_probe}"
            )
        if self.warmup_rtts < 0 or self.warmup_cc not in (*CC_NAMES, "any"):
            raise ValueError(
                f"env warmup_rtts must be >= 0 and warmup_cc one of {(*CC_NAMES, 'any')}, "
                f"got {self.warmup_rtts}, {self.warmup_cc!r}"
            )
        if self.features.max_streams != self.sim.max_streams:
            raise ValueError(
                f"features.max_streams ({self.features.max_streams}) must equal "
                f"sim.max_streams ({self.sim.max_streams})"
            )


def teacher_action(
    streams: F64,
    n_opt: F64,
    still: F64 | None = None,
    probe_after: int = 0,
    probe_above: bool = False,
    fails: F64 | None = None,
    backoff: int = 0,
) -> npt.NDArray[np.int64]:
    """The privileged teacher's action index (+5, +1, 0, -1, -5): towards the best fixed N of
    the current world, by 5 while at least 5 away, by 1 when closer, 0 at it. Used by the
    DAgger warm start (:mod:`train.bc`) and the kickstarting term (:mod:`train.kickstart`).

    ``probe_after`` > 0 (``EnvConfig.teacher_probe``): at the best N, once the count has run
    unchanged for ``still`` >= ``probe_after`` MIs, +1 instead of 0 (and the -1 back is the
    label one above it). A stationary history reads the same at the best N as below it
    beside loss others cause (round 30's ``stays`` gate): imitating 0 there teaches the
    student to hold wherever its history is stationary. ``probe_above``
    (``EnvConfig.teacher_probe_above``): above the best N too, so the retreat follows a probe
    that did not pay (a history held above the best N at 2.5 % loss of our own reads the same
    as one held below it beside a rival's). ``backoff`` (``EnvConfig.teacher_backoff``): after
    ``fails`` probes in a row that did not pay the wait is ``probe_after`` x 2^min(fails,
    backoff)."""
    d = n_opt - streams
    out = np.select([d >= 5, d >= 1, d <= -5, d <= -1], [0, 1, 4, 3], default=2).astype(np.int64)
    if probe_after > 0 and still is not None:
        at = (out >= 2) if probe_above else (out == 2)
        wait: F64 | float = float(probe_after)
        if backoff > 0 and fails is not None:
            wait = probe_after * 2.0 ** np.minimum(fails, backoff)
        out = np.where(at & (still >= wait), 1, out)
    return out


PRIVILEGED_DIM = 4
"""Length of :meth:`SimVecEnv.privileged`."""


class SimVecEnv:
    """E simulated transfers stepped together (numpy); auto-resets finished episodes.

    ``step`` returns ``(obs, reward, terminated, truncated, info)`` where the first four are
    arrays over environments; when an episode ends, ``info["final_obs"]`` holds the last
    observation of those environments and ``obs`` already holds their new first one.
    """

    render_mode: str | None = None
    """Gymnasium attribute (no rendering); SB3 asks for it."""

    def __init__(self, n_envs: int, cfg: EnvConfig | None = None, seed: int | None = None) -> None:
        self.cfg = cfg or EnvConfig()
        self.n_envs = n_envs
        self.sim = Simulator(n_envs, self.cfg.sim, seed)
        self.rng = np.random.default_rng(None if seed is None else seed + 7919)
        self.fstate = FeatureState.zeros(n_envs, self.cfg.features)
        self.actions = np.asarray(ACTIONS, dtype=np.float64)
        self.streams = np.ones(n_envs)
        self.length = np.zeros(n_envs)
        self.steps = np.zeros(n_envs)
        self.hold_left = np.zeros(n_envs)
        """MIs left in which the agent's action is ignored (``EnvConfig.p_hold``)."""
        self.clock = np.zeros(n_envs)
        """Transfer time (s) at the end of the last MI the agent saw (warm-up rule). Not
        ``sim.t``: with ``reset_steps_all`` an episode's reset steps every simulated world one
        MI that the other environments do not observe, so ``sim.t`` runs ahead of what the
        agent saw."""
        self.joined_at = np.zeros(n_envs)
        """Transfer time (s) at which the youngest streams joined (warm-up rule)."""
        self.min_rtt_ms = np.zeros(n_envs)
        """The minimum RTT of the last MI the agent saw (warm-up rule)."""
        self.deferred = np.zeros(n_envs)
        """Adds deferred by the warm-up rule in the current episode."""
        self.still = np.zeros(n_envs)
        """MIs run at the current stream count so far (the teacher's probe, the probe cap)."""
        self.fails = np.zeros(n_envs)
        """Probes in a row that did not pay (the teacher's back-off)."""
        self.last_dir = np.zeros(n_envs)
        """Sign of the count's last change, 0 before the first (the teacher's back-off, the
        climb cap)."""
        self.held = np.zeros(n_envs, dtype=bool)
        """Has the warm-up deferred an add since the count's last change (the climb cap)?"""
        self.peak = np.zeros(n_envs)
        """The largest loss since the count's last change, the deciding MI included
        (``climb_peak``)."""
        self.probing = np.zeros(n_envs, dtype=bool)
        """Was the count's last change an add cut by the climb cap (``climb_probe``)?"""
        self.u_prev = np.zeros(n_envs)
        self.obs = np.zeros((n_envs, self.cfg.features.obs_dim), np.float32)
        self.last: Measurement | None = None

    @property
    def obs_dim(self) -> int:
        """Length of one observation."""
        return self.cfg.features.obs_dim

    def teacher(
        self,
        n_opt: F64,
        streams: F64 | None = None,
        still: F64 | None = None,
        fails: F64 | None = None,
    ) -> npt.NDArray[np.int64]:
        """The privileged teacher's action (this env's probe settings), given the world's best
        N: at the current state, or at ``streams`` / ``still`` / ``fails`` kept from before a
        step."""
        c = self.cfg
        return teacher_action(
            self.streams if streams is None else streams,
            n_opt,
            self.still if still is None else still,
            c.teacher_probe,
            c.teacher_probe_above,
            self.fails if fails is None else fails,
            c.teacher_backoff,
        )

    def privileged(self, n_opt: F64 | None = None) -> npt.NDArray[np.float32]:
        """What only the simulator knows, for an asymmetric critic (never for the policy):
        per environment, log2 of the best fixed stream count, log2 of streams over it (both
        /6, clipped to [-1, 1]), a competing transfer on, background load on. ``n_opt``: the
        best count if already known (else computed: one more sweep of the utility curve)."""
        if n_opt is None:
            n_opt = self.sim.optimum()[0]
        n = self.streams
        log_opt = np.log2(np.maximum(n_opt, 1.0)) / 6.0
        rel = np.log2(np.maximum(n, 1.0) / np.maximum(n_opt, 1.0)) / 6.0
        out = np.stack([log_opt, rel, self.sim.comp_on > 0, self.sim.bg_on > 0], axis=1)
        return np.clip(out, -1.0, 1.0).astype(np.float32)

    def reset(
        self, seed: int | None = None, params: NetParams | None = None
    ) -> npt.NDArray[np.float32]:
        """Start new episodes in every environment; return the first observations."""
        if seed is not None:
            self.sim.rng = np.random.default_rng(seed)
            self.rng = np.random.default_rng(seed + 7919)
        self._reset(np.ones(self.n_envs, dtype=bool), params)
        return self.obs.copy()

    def _reset(self, mask: npt.NDArray[np.bool_], params: NetParams | None = None) -> None:
        k = int(mask.sum())
        c = self.cfg
        self.sim.reset(mask, params)
        self.fstate.reset(mask)
        default = self.rng.random(k) < c.p_initial_default
        n0 = np.where(
            default, c.initial_streams, self.rng.integers(1, c.sim.max_streams, k, endpoint=True)
        )
        self.streams[mask] = n0
        self.length[mask] = self.rng.integers(c.episode_len[0], c.episode_len[1], k, endpoint=True)
        self.steps[mask] = 0
        if c.p_hold > 0:  # no draws otherwise: the default episodes stay bit for bit
            lo, hi = c.hold_mis
            held = self.rng.random(k) < c.p_hold
            self.hold_left[mask] = np.where(held, self.rng.integers(lo, hi, k, endpoint=True), 0)
        self.clock[mask], self.joined_at[mask], self.deferred[mask] = 0.0, 0.0, 0.0
        self.still[mask] = 1.0  # the first MI below runs at the initial count
        self.fails[mask], self.last_dir[mask] = 0.0, 0.0
        self.held[mask], self.peak[mask], self.probing[mask] = False, 0.0, False
        # The first MI runs with the initial streams before the agent decides anything.
        m = self.sim.step(self.streams, None if self.cfg.reset_steps_all else mask)
        self.last = m
        self._seen(m, mask)
        self._observe(m, mask)
        self.u_prev[mask] = utility_of(m)[mask]

    def _seen(self, m: Measurement, mask: npt.NDArray[np.bool_] | None = None) -> None:
        """Keep what the warm-up rule reads of the MI just measured."""
        sel = slice(None) if mask is None else mask
        self.clock[sel] += self.cfg.sim.mi_s
        self.min_rtt_ms[sel] = m.min_rtt_ms[sel]

    def starting(self) -> npt.NDArray[np.bool_]:
        """Per environment: are the youngest streams within their warm-up (as
        :meth:`policy.warmup.StartGate.starting`; all False when ``warmup_rtts`` is 0)?"""
        c = self.cfg
        if c.warmup_rtts <= 0:
            return np.zeros(self.n_envs, dtype=bool)
        ours = np.ones(self.n_envs, dtype=bool)
        if c.warmup_cc != "any":
            ours = self.sim.params.cc == CC_NAMES.index(c.warmup_cc)
        young = self.clock - self.joined_at < c.warmup_rtts * self.min_rtt_ms / 1000.0
        return ours & (self.min_rtt_ms > 0) & young

    def _observe(self, m: Measurement, mask: npt.NDArray[np.bool_] | None = None) -> None:
        """Push measurement ``m`` into the features of the environments in ``mask``."""
        if mask is None or mask.all():
            self.obs = self._features(self.fstate, m)
            return
        sub = self.fstate.take(mask)
        pick = Measurement(**{k: v[mask] for k, v in vars(m).items()})
        self.obs[mask] = self._features(sub, pick)
        self.fstate.put(mask, sub)

    def _features(self, st: FeatureState, m: Measurement) -> npt.NDArray[np.float32]:
        return step_features(
            st,
            self.cfg.features,
            m.throughput_bps,
            m.streams,
            m.loss_rate,
            m.rtt_gradient,
            m.rtt_ratio,
            m.min_rtt_ms,
            (m.cc == CC_NAMES.index("bbr")).astype(np.float64),
        )

    def step(self, action: npt.NDArray[np.integer]) -> tuple[Any, F64, Any, Any, dict[str, Any]]:
        """Apply one action per environment, run one MI, return the batch step tuple."""
        a = np.asarray(action, dtype=np.int64).reshape(self.n_envs)
        delta = np.where(self.hold_left > 0, 0.0, self.actions[a])
        self.hold_left = np.maximum(self.hold_left - 1, 0)
        new = np.clip(self.streams + delta, 1, self.cfg.sim.max_streams)
        if self.cfg.probe_cap > 0:
            capped = (self.still >= self.cfg.probe_cap) & (new > self.streams + 1)
            new = np.where(capped, self.streams + 1, new)
        cut = np.zeros(self.n_envs, dtype=bool)
        loss = np.zeros(self.n_envs) if self.last is None else self.last.loss_rate
        self.peak = np.maximum(self.peak, loss)
        if self.cfg.climb_cap > 0:
            c = self.cfg
            fresh = (self.last_dir < 0) | self.held | (c.climb_cap == 2)
            read = self.peak if c.climb_peak else loss
            cut = (self.last_dir <= 0) & fresh & (read >= c.climb_loss)
            if c.climb_probe:  # a probe that lost: the climb stays one stream at a time
                cut |= (self.last_dir > 0) & self.probing & (loss >= c.climb_loss)
            cut &= new > self.streams + 1
            new = np.where(cut, self.streams + 1, new)
        if self.cfg.warmup_rtts > 0:
            adds = new > self.streams
            held = adds & self.starting()
            self.deferred += held
            self.held |= held
            new = np.where(held, self.streams, new)
            self.joined_at = np.where(adds & ~held, self.clock, self.joined_at)
        d = np.sign(new - self.streams)
        if self.cfg.teacher_backoff > 0:
            self.fails = step_fails(self.fails, self.last_dir, self.still, d)[0]
        self.still = np.where(new == self.streams, self.still + 1.0, 1.0)
        moved = d != 0
        self.last_dir = np.where(moved, d, self.last_dir)
        self.held &= ~moved
        self.peak = np.where(moved, loss, self.peak)
        self.probing = np.where(moved, cut & (d > 0), self.probing)
        self.streams = new
        n_opt, u_opt = self.sim.optimum()
        m = self.sim.step(self.streams)
        self._seen(m)
        self.last = m
        u = utility_of(m)
        reward = self._reward(u, u_opt)
        self.u_prev = u
        self._observe(m)
        self.steps += 1
        truncated = self.steps >= self.length
        terminated = np.zeros(self.n_envs, dtype=bool)
        info: dict[str, Any] = {
            "utility": u,
            "u_opt": u_opt,
            "n_opt": n_opt,
            "streams": self.streams.copy(),
        }
        if truncated.any():
            info["final_obs"] = self.obs[truncated].copy()
            info["final_privileged"] = self.privileged(n_opt)[truncated]
            self._reset(truncated)
        return self.obs.copy(), reward, terminated, truncated, info

    def _reward(self, u: F64, u_opt: F64) -> F64:
        scale = np.maximum(np.abs(u_opt), 1e-6)
        if self.cfg.reward == "ratio":
            return np.clip(u / scale, -2.0, 1.5)
        du = (u - self.u_prev) / scale
        eps = self.cfg.reward_epsilon
        return np.where(du > eps, self.cfg.reward_x, np.where(du < -eps, self.cfg.reward_y, 0.0))


class XferSimEnv(gym.Env[npt.NDArray[np.float32], np.int64]):
    """One simulated transfer as a standard gymnasium environment (passes ``check_env``)."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, cfg: EnvConfig | None = None) -> None:
        self.cfg = cfg or EnvConfig()
        self.vec = SimVecEnv(1, self.cfg)
        d = self.cfg.features.obs_dim
        self.observation_space = gym.spaces.Box(-1.0, 1.0, shape=(d,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(len(ACTIONS))

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[npt.NDArray[np.float32], dict[str, Any]]:
        super().reset(seed=seed)
        s = seed if seed is not None else int(self.np_random.integers(2**31))
        self.vec.reset(seed=s)
        self._len = int(self.vec.length[0])
        self.vec.length[0] = np.inf  # truncation is handled here, without auto-reset
        self._t = 0
        return self.vec.obs[0].copy(), {"streams": int(self.vec.streams[0])}

    def step(
        self, action: np.int64
    ) -> tuple[npt.NDArray[np.float32], float, bool, bool, dict[str, Any]]:
        obs, r, _, _, info = self.vec.step(np.array([int(action)]))
        self._t += 1
        out = {"streams": int(info["streams"][0]), "utility": float(info["utility"][0])}
        return obs[0], float(r[0]), False, self._t >= self._len, out
