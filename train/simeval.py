"""Evaluation of a policy in the simulator against the best fixed stream count.

Each network is simulated in lock-step as ``1 + max_streams`` copies that share one world
(background, competition, capacity changes): copy 0 runs the controller under test through
the engine's own code path (``Controller.decide`` on :class:`SignalVector`), copy ``N`` runs
``N`` fixed streams. Per network:

* ``utility_ratio``: the controller's mean utility / the best fixed N's mean utility;
* ``time_to_n_opt``: MIs until the controller first runs >= (steady-state optimum - 2)
  streams (the paper-fig1 check: 1 Gbit/s, 40 ms, 50 Mbit/s cap, optimum ~20);
* ``time_to_optimum_s``: the issue's definition, first time from which the 3-MI moving
  average of throughput stays within 10 % of the best fixed throughput;
* mean throughput of the controller and of the best fixed N.

A *world class* (:data:`WORLD_CLASSES`) restricts the held-out random networks to one kind of
world that a testbed failure belongs to, drawn from a config's own ranges with some of its
probabilities forced (``xfer evaluate --sim --sim-config CFG --world-class NAME``): a cheap
check, before any testbed time, of whether training learned that kind of world at all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from policy.base import Controller, ControllerConfig
from train.sim import F64, NetParams, SimConfig, Simulator, fixed_params, sample_params, utility_of

SLOW_START: dict[str, float] = dict(
    start_burst=0.03, ss_burst=0.08, ss_burst_elastic=0.015, ss_overshoot=4.0
)
"""Slow-start effects of every named network, mid-range of the testbed's measurements
(``docs/learning.md``): without them a named network is a corner training never visits."""

NAMED: dict[str, dict[str, float]] = {
    name: {**SLOW_START, **kw}
    for name, kw in {
        "paper-fig1 (1G 40ms cap50M)": dict(capacity=1e9, rtt=0.04, cap=50e6),
        "1G 40ms no cap": dict(capacity=1e9, rtt=0.04),
        "10G 100ms 16MB buffers": dict(capacity=10e9, rtt=0.1, wmax=16e6),
        "10G 2ms": dict(capacity=10e9, rtt=0.002),
        "100M 200ms loss 0.1% reno": dict(capacity=100e6, rtt=0.2, loss=1e-3, cc=0),
        "1G 100ms loss 1% cubic": dict(capacity=1e9, rtt=0.1, loss=1e-2),
        "10G 50ms bbr 8MB": dict(capacity=10e9, rtt=0.05, cc=2, wmax=8e6),
        "500M 20ms cap20M": dict(capacity=500e6, rtt=0.02, cap=20e6),
        "1G 40ms bg 50%": dict(capacity=1e9, rtt=0.04, bg_level=0.5, bg_on_p=1.0, bg_off_p=0.0),
        "1G 40ms cap50M competing 8": dict(capacity=1e9, rtt=0.04, cap=50e6, comp_streams=8),
        "1G 40ms competing 8": dict(capacity=1e9, rtt=0.04, comp_streams=8),
        "fig3-like: cap50M, 17 paced competing": dict(
            capacity=1e9, rtt=0.04, cap=50e6, comp_streams=17, comp_cap=50e6
        ),
    }.items()
}


WORLD_CLASSES: dict[str, tuple[str, dict[str, Any]]] = {
    "lan-competitor": (
        "a LAN (the config's lan_rtt_ms) shared from the first MI to the last with a loss-based "
        "competing transfer (unpaced, not BBR): the test set's worst class (issue #16: t05, "
        "hand-lan-reno), where the shipped policy holds 1-2 streams and 3-10 are best",
        dict(p_lan=1.0, p_competing=1.0, p_competing_paced=0.0, p_comp_bbr=0.0,
             p_competing_at_start=1.0),
    ),
    "bbr-competitor": (
        "any path of the config shared from the first MI to the last with a BBR transfer that "
        "holds loss we did not cause (the config's comp_bbr_* ranges): the issue's third "
        "situation (hand-bbr-shared-1g), where the shipped policy sits at one stream",
        dict(p_competing=1.0, p_comp_bbr=1.0, p_competing_at_start=1.0),
    ),
    "lossy-long": (
        "a long path (100-250 ms) with random loss of 0.01-0.1 % and nobody else on it: the "
        "issue's first situation (hand-lossy-long), where many streams pay",
        dict(rtt_ms=(100.0, 250.0), loss=(1e-4, 1e-3), p_no_loss=0.0, p_lan=0.0,
             p_competing=0.0, p_background=0.0, p_capacity_change=0.0),
    ),
    "lossy-lan": (
        "a LAN (the config's lan_rtt_ms) of 50 Mbit/s-1 Gbit/s with random loss of 0.05-0.5 % "
        "and nobody else on it, where a few streams fill the link and more only add their own "
        "loss: the price side of lan-competitor (issue #16 round 10: gen-v1-v06, t13)",
        dict(p_lan=1.0, capacity_bps=(50e6, 1e9), loss=(5e-4, 5e-3), p_no_loss=0.0,
             p_competing=0.0, p_background=0.0, p_capacity_change=0.0),
    ),
    "bbr-onoff-lan": (
        "a LAN (the config's lan_rtt_ms) of 50 Mbit/s-2 Gbit/s with random loss of 0.03-0.6 % "
        "and a BBR transfer that comes and goes every 4-12 MIs, off at the start: where the "
        "round-10 candidate lost its test set (gen-v1-v06, t13, t17, t18), climbing while the "
        "rival's loss is on and staying high after it leaves",
        dict(p_lan=1.0, capacity_bps=(50e6, 2e9), loss=(3e-4, 6e-3), p_no_loss=0.0,
             p_competing=1.0, p_comp_bbr=1.0, p_competing_at_start=0.0,
             comp_bbr_flip_p=(0.08, 0.25), p_background=0.0, p_capacity_change=0.0),
    ),
    "peer": (
        "any path of the config shared with a transfer like ours (a peer: paced as ours, "
        "stepping towards its best response to our streams; running from the start or "
        "joining with 2 streams): the simulator's fig3, where round 11's candidates drifted "
        "apart from copies of themselves",
        dict(p_competing=1.0, p_comp_bbr=0.0, p_comp_peer=1.0),
    ),
}  # fmt: skip
"""name -> (what it is, the ``SimConfig`` fields forced to draw it: probabilities, and ranges
for the lossy classes). A class world's competitor, if any, stays on (or off) for the whole
episode, except in ``bbr-onoff-lan``, whose rival switches every 4-12 MIs, and ``peer``,
whose peer comes and goes as the config draws it."""


def check_world_class(world_class: str) -> None:
    """Raise ``ValueError`` naming the known classes if ``world_class`` is not one of them."""
    if world_class not in WORLD_CLASSES:
        raise ValueError(
            f"unknown world class {world_class!r}; known: {', '.join(sorted(WORLD_CLASSES))}"
        )


def class_networks(
    sim_cfg: SimConfig, world_class: str, n: int, rng: np.random.Generator
) -> tuple[NetParams, SimConfig]:
    """``n`` networks of ``world_class`` from ``sim_cfg``'s ranges, and the config to run them."""
    check_world_class(world_class)
    cfg = replace(sim_cfg, **WORLD_CLASSES[world_class][1])
    p = sample_params(cfg, rng, n)
    if not {"comp_bbr_flip_p", "p_comp_peer"} & set(WORLD_CLASSES[world_class][1]):
        p.comp_flip_p = np.zeros(n)
    return p, cfg


class SyncedSimulator(Simulator):
    """Groups of ``group`` consecutive environments share the world of their first one."""

    def __init__(self, n_groups: int, group: int, cfg: SimConfig, seed: int) -> None:
        super().__init__(n_groups * group, cfg, seed)
        self.group = group

    def _advance_world(self) -> None:
        super()._advance_world()
        g = self.group
        for name in ("bg_on", "comp_on", "capacity", "joined"):
            a = getattr(self, name).reshape(-1, g)
            a[:] = a[:, :1]


def _repeat(p: NetParams, g: int) -> NetParams:
    return NetParams(**{k: np.repeat(v, g) for k, v in vars(p).items()})


def run_episodes(
    make: Callable[[], Controller],
    params: NetParams,
    episode_len: int,
    seed: int,
    sim_cfg: SimConfig | None = None,
) -> dict[str, F64]:
    """Simulate every network of ``params`` with the controller and with every fixed N."""
    cfg = sim_cfg or SimConfig()
    k = cfg.max_streams
    b, g = len(params.capacity), k + 1
    sim = SyncedSimulator(b, g, cfg, seed)
    sim.reset(np.ones(b * g, dtype=bool), _repeat(params, g))
    for name in ("bg_on", "comp_on"):
        a = getattr(sim, name).reshape(-1, g)
        a[:] = a[:, :1]
    ctrls = [make() for _ in range(b)]
    streams = np.tile(np.arange(0, g, dtype=np.float64), b).reshape(b, g)
    streams[:, 0] = [c.initial() for c in ctrls]
    u = np.zeros((episode_len, b, g))
    thr = np.zeros((episode_len, b, g))
    n_hist = np.zeros((episode_len, b))
    n_opt = sim.optimum()[0].reshape(b, g)[:, 0]
    for t in range(episode_len):
        m = sim.step(streams.reshape(-1))
        u[t] = utility_of(m).reshape(b, g)
        thr[t] = m.throughput_bps.reshape(b, g)
        n_hist[t] = streams[:, 0]
        for i, c in enumerate(ctrls):
            streams[i, 0] = c.decide(m.signal(i * g, float(t + 1), cfg.mi_s))
    return {"u": u, "thr": thr, "streams": n_hist, "n_opt": n_opt}


def _time_to_optimum(thr: F64, best: float) -> float:
    """The issue's time to optimum (``lab.metrics``), MIs of 1 s ending at t = 1, 2, ...;
    inf when it never settles."""
    from lab.metrics import time_to_optimum

    got = time_to_optimum(np.arange(1, len(thr) + 1, dtype=float), thr, best)
    return float("inf") if got is None else got


def summarise(r: dict[str, F64], i: int) -> dict[str, Any]:
    """One network's row of the evaluation table."""
    u, thr, n = r["u"][:, i], r["thr"][:, i], r["streams"][:, i]
    mean_u = u.mean(axis=0)
    best_n = int(np.argmax(mean_u[1:])) + 1
    best_u = float(mean_u[best_n])
    best_thr = float(thr[:, 1:].mean(axis=0).max())
    n_opt = float(r["n_opt"][i])
    reach = np.flatnonzero(n >= n_opt - 2)
    return {
        "utility_ratio": float(mean_u[0] / best_u) if best_u > 0 else float("nan"),
        "best_fixed_n": best_n,
        "n_opt_steady": int(n_opt),
        "final_streams": float(n[-10:].mean()),
        "time_to_n_opt": int(reach[0]) if reach.size else None,
        "time_to_optimum_s": _time_to_optimum(thr[:, 0], best_thr),
        "mean_throughput_bps": float(thr[:, 0].mean()),
        "best_fixed_throughput_bps": best_thr,
    }


def evaluate(
    make: Callable[[], Controller],
    n_networks: int,
    seed: int,
    episode_len: int = 60,
    sim_cfg: SimConfig | None = None,
    world_class: str | None = None,
) -> dict[str, Any]:
    """Named settings plus ``n_networks`` held-out random networks, drawn from ``sim_cfg``
    (default: ``SimConfig()``) with ``seed``, all of ``world_class`` if one is named."""
    sim_cfg = sim_cfg or SimConfig()
    rng = np.random.default_rng(seed)  # the held-out draws first: a bad class fails at once
    if world_class is None:
        rand, rand_cfg = sample_params(sim_cfg, rng, n_networks), sim_cfg
    else:
        rand, rand_cfg = class_networks(sim_cfg, world_class, n_networks, rng)
    named_p = [fixed_params(1, **kw) for kw in NAMED.values()]
    params = NetParams(
        **{k: np.concatenate([getattr(p, k) for p in named_p]) for k in vars(named_p[0])}
    )
    r = run_episodes(make, params, episode_len, seed, sim_cfg)
    named = [{"network": name, **summarise(r, i)} for i, name in enumerate(NAMED)]
    rr = run_episodes(make, rand, episode_len, seed + 1, rand_cfg)
    rows = [summarise(rr, i) for i in range(n_networks)]
    ratios = np.array([x["utility_ratio"] for x in rows])
    ratios = ratios[np.isfinite(ratios)]
    if not len(ratios):  # no network where some fixed N has a positive utility
        ratios = np.full(1, np.nan)
    return {
        "episode_len": episode_len,
        "seed": seed,
        "named": named,
        "random": {
            "networks": n_networks,
            "scored": int(np.isfinite(ratios).sum()),
            "world_class": world_class,
            "mean_streams": float(rr["streams"][episode_len // 4 :].mean()),
            "best_fixed_n_median": float(np.median([x["best_fixed_n"] for x in rows])),
            "utility_ratio_mean": float(ratios.mean()),
            "utility_ratio_median": float(np.median(ratios)),
            "utility_ratio_p10": float(np.percentile(ratios, 10)),
            "fraction_ge_0.9": float((ratios >= 0.9).mean()),
        },
    }


def evaluate_checkpoint(
    path: str | Path, n_networks: int = 100, seed: int = 1_000_003
) -> dict[str, Any]:
    """:func:`evaluate` for the ``ppo`` controller loaded from ``path``."""
    from policy.ppo import PPOController

    cfg = ControllerConfig(max_streams=SimConfig().max_streams)
    return {
        "policy": f"ppo:{path}",
        **evaluate(lambda: PPOController(str(path), cfg), n_networks, seed),
    }


def format_table(result: dict[str, Any]) -> str:
    """A plain-text table of an evaluation result."""
    lines = [
        f"{'network':32} {'U/U*best':>8} {'bestN':>5} {'final N':>7} {'t->N*':>5} {'t_opt':>5} {'Mbit/s':>8}",
    ]
    for row in result["named"]:
        lines.append(
            f"{row['network']:32} {row['utility_ratio']:8.3f} {row['best_fixed_n']:5d} "
            f"{row['final_streams']:7.1f} {str(row['time_to_n_opt']):>5} "
            f"{row['time_to_optimum_s']:5.0f} {row['mean_throughput_bps'] / 1e6:8.1f}"
        )
    rnd = result["random"]
    lines.append(
        f"{rnd['networks']} held-out random networks: utility ratio mean {rnd['utility_ratio_mean']:.3f}, "
        f"median {rnd['utility_ratio_median']:.3f}, p10 {rnd['utility_ratio_p10']:.3f}, "
        f">= 0.9 in {100 * rnd['fraction_ge_0.9']:.0f} %"
    )
    return "\n".join(lines)


def screen_summary(by_class: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The screen of ``--world-class all``: per policy, each class's median and p10 of the
    utility ratio and the mean of the class medians (every class weighs the same, however
    many networks it has; a class where nothing scored has a NaN median, and so has the mean).
    ``by_class`` maps class -> policy -> :func:`evaluate`'s result."""
    specs = list(next(iter(by_class.values())))
    out: dict[str, dict[str, Any]] = {}
    for spec in specs:
        med = {c: float(r[spec]["random"]["utility_ratio_median"]) for c, r in by_class.items()}
        p10 = {c: float(r[spec]["random"]["utility_ratio_p10"]) for c, r in by_class.items()}
        out[spec] = {
            "median": med,
            "p10": p10,
            "mean_of_medians": float(np.mean(list(med.values()))),
        }
    return out
