"""World classes of the simulated evaluation: held-out networks of one kind of world."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from policy.base import ControllerConfig, make_controller
from train.config import load_config
from train.sim import Simulator
from train.simeval import class_networks, evaluate

FLOOR = Path(__file__).resolve().parents[2] / "configs" / "train" / "floor.toml"


def test_lan_competitor_worlds_are_lans_with_a_competitor_on_throughout() -> None:
    cfg = load_config(FLOOR).env.sim
    p, ccfg = class_networks(cfg, "lan-competitor", 200, np.random.default_rng(3))
    assert (p.rtt <= cfg.lan_rtt_ms[1] / 1e3 + 1e-12).all()
    assert (p.comp_streams >= 1).all()
    assert (p.comp_loss == 0).all() and np.isinf(p.comp_cap).all()  # loss-based, unpaced
    assert (p.queue_extra >= 0).all() and (p.queue_extra > 0).any()  # floor.toml's queue floor
    sim = Simulator(len(p.capacity), ccfg, seed=5)
    sim.reset(np.ones(len(p.capacity), dtype=bool), p)
    for _ in range(80):
        sim.step(np.full(len(p.capacity), 2.0))
        assert (sim.comp_on == 1).all()


def test_in_lan_competitor_worlds_one_stream_is_rarely_best() -> None:
    """The class is the failure it names: beside the competitor more streams pay (the
    testbed's calibration beside competitors: best N 4-8)."""
    cfg = load_config(FLOOR).env.sim
    cc = ControllerConfig(max_streams=cfg.max_streams)
    r = evaluate(lambda: make_controller("fixed:1", cc), 24, 11, 30, cfg, "lan-competitor")
    rnd = r["random"]
    assert rnd["world_class"] == "lan-competitor"
    assert rnd["best_fixed_n_median"] >= 3
    assert rnd["utility_ratio_mean"] < 0.8  # one stream leaves most of the utility


def test_bbr_competitor_worlds_hold_loss_we_did_not_cause_throughout() -> None:
    cfg = load_config(FLOOR).env.sim  # floor.toml draws no BBR competitor; the class forces it
    p, ccfg = class_networks(cfg, "bbr-competitor", 100, np.random.default_rng(4))
    lo, hi = cfg.comp_bbr_loss
    assert (p.comp_streams >= 1).all() and ((p.comp_loss >= lo) & (p.comp_loss <= hi)).all()
    sim = Simulator(len(p.capacity), ccfg, seed=6)
    sim.reset(np.ones(len(p.capacity), dtype=bool), p)
    for _ in range(40):
        m = sim.step(np.ones(len(p.capacity)))
        assert (sim.comp_on == 1).all()
    assert (m.loss_rate >= lo / 2).mean() > 0.9  # one stream alone still sees their loss


def test_lossy_long_worlds_are_long_lossy_and_alone() -> None:
    p, _ = class_networks(load_config(FLOOR).env.sim, "lossy-long", 100, np.random.default_rng(5))
    assert ((p.rtt >= 0.1) & (p.rtt <= 0.25)).all()
    assert ((p.loss >= 1e-4) & (p.loss <= 1e-3)).all()
    assert (p.comp_streams == 0).all() and (p.bg_level == 0).all()
    assert np.isinf(p.cap_change_t).all()


def test_unknown_world_class_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown world class 'wan'.*lan-competitor"):
        class_networks(load_config(FLOOR).env.sim, "wan", 4, np.random.default_rng(0))


def test_lossy_lan_worlds_are_short_lossy_and_alone() -> None:
    cfg = load_config(FLOOR).env.sim
    p, _ = class_networks(cfg, "lossy-lan", 100, np.random.default_rng(7))
    lo, hi = cfg.lan_rtt_ms
    assert ((p.rtt >= lo / 1e3) & (p.rtt <= hi / 1e3)).all()
    assert ((p.loss >= 5e-4) & (p.loss <= 5e-3)).all()
    assert ((p.capacity >= 50e6) & (p.capacity <= 1e9)).all()
    assert (p.comp_streams == 0).all() and (p.bg_level == 0).all()


def test_bbr_onoff_lan_worlds_have_a_rival_that_comes_and_goes() -> None:
    """The only class whose competitor switches: every world has a BBR rival (loss we did not
    cause), off at the start, flipping with probability 0.08-0.25 per MI."""
    from train.sim import Simulator

    cfg = load_config(FLOOR).env.sim
    p, c = class_networks(cfg, "bbr-onoff-lan", 50, np.random.default_rng(3))
    lo, hi = cfg.lan_rtt_ms
    assert ((p.rtt >= lo / 1e3) & (p.rtt <= hi / 1e3)).all() and (p.loss >= 3e-4).all()
    assert (p.comp_streams > 0).all() and (p.comp_loss > 0).all()
    assert ((p.comp_flip_p >= 0.08) & (p.comp_flip_p <= 0.25)).all()
    sim = Simulator(50, c, seed=1)
    sim.reset(np.ones(50, dtype=bool), p)
    assert not sim.comp_on.any()
    on = np.zeros((100, 50), dtype=bool)
    for t in range(100):
        sim.step(np.full(50, 2.0))
        on[t] = sim.comp_on > 0
    assert on.any(axis=0).all() and (~on[1:]).any(axis=0).all()  # each rival came and went


def test_peer_worlds_have_a_transfer_like_ours_that_answers_our_streams() -> None:
    cfg = load_config(FLOOR.with_name("peer.toml")).env.sim
    p, c = class_networks(cfg, "peer", 40, np.random.default_rng(3))
    assert (p.comp_peer > 0).all() and (p.comp_loss == 0).all()
    assert np.array_equal(p.comp_cap, p.cap) and (p.comp_flip_p > 0).all()
    sim = Simulator(40, c, seed=1)
    sim.reset(np.ones(40, dtype=bool), p)
    for _ in range(30):
        sim.step(np.full(40, 8.0))
    moved = sim.params.comp_streams != p.comp_streams
    assert moved.mean() > 0.5  # most peers have left the count they started with
