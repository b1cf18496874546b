"""Training smoke tests: environments, configs, a tiny PPO run whose checkpoint loads."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from policy.base import ControllerConfig, make_controller
from policy.features import FeatureConfig
from policy.ppo import ACTIONS
from train.config import ModelConfig, TrainConfig, load_config
from train.env import EnvConfig, SimVecEnv, XferSimEnv
from train.sim import CC_NAMES, fixed_params

ROOT = Path(__file__).resolve().parents[2]


def test_single_env_passes_the_gymnasium_checker() -> None:
    env = XferSimEnv()
    check_env(env, skip_render_check=True)
    obs, _ = env.reset(seed=3)
    again, _ = env.reset(seed=3)
    np.testing.assert_array_equal(obs, again)


def test_vec_env_auto_resets_and_rewards_the_optimum() -> None:
    cfg = EnvConfig(episode_len=(5, 5), p_initial_default=1.0, initial_streams=19)
    env = SimVecEnv(2, cfg, seed=0)
    env.reset(params=fixed_params(2, capacity=1e9, rtt=0.04, cap=50e6))
    total = np.zeros(2)
    for _ in range(5):
        obs, r, term, trunc, info = env.step(np.array([2, 4]))  # hold 19 / go down by 5
        total += r
    assert trunc.all() and not term.any() and "final_obs" in info
    assert obs.shape == (2, cfg.features.obs_dim)
    assert total[0] > 4.5 and total[1] < total[0]  # U/U* ~ 1 at the optimum


def test_the_own_cc_bit_is_the_networks_congestion_control() -> None:
    """features.own_cc in the simulator: 1 exactly where our streams run BBR, through resets
    of some environments and not others."""
    cfg = EnvConfig(features=FeatureConfig(history=2, own_cc=True), episode_len=(2, 4))
    env = SimVecEnv(64, cfg, seed=11)
    obs = env.reset()
    for _ in range(6):
        bbr = env.sim.params.cc == CC_NAMES.index("bbr")
        assert 0 < bbr.sum() < 64
        np.testing.assert_array_equal(obs[:, -1], bbr.astype(np.float32))
        obs, *_ = env.step(np.zeros(64, dtype=np.int64))


def test_a_held_start_ignores_the_agent_then_lets_go() -> None:
    """p_hold: the first hold_mis MIs keep the initial count (a stationary history at any N,
    the state the shipped policy froze in), then actions apply again."""
    cfg = EnvConfig(p_hold=1.0, hold_mis=(3, 3), p_initial_default=1.0, initial_streams=4)
    env = SimVecEnv(2, cfg, seed=5)
    env.reset(params=fixed_params(2, capacity=1e9, rtt=0.04, cap=50e6))
    seen = []
    for _ in range(4):
        env.step(np.array([0, 4]))  # +5 / -5, asked every MI
        seen.append(env.streams.tolist())
    assert seen == [[4, 4], [4, 4], [4, 4], [9, 1]]
    with pytest.raises(ValueError, match="p_hold"):
        EnvConfig(p_hold=1.5)
    # off by default, and then it draws nothing: the default episodes stay as they were
    a, b = SimVecEnv(3, EnvConfig(), seed=9), SimVecEnv(3, EnvConfig(hold_mis=(1, 2)), seed=9)
    np.testing.assert_array_equal(a.reset(), b.reset())
    assert (a.length == b.length).all() and not b.hold_left.any()


def test_the_warm_up_defers_adds_in_training_as_the_shipped_gate_does() -> None:
    """warmup_rtts: on a 150-ms BBR path (16 RTTs = 2.4 s) an add asked in the first MIs, or
    within 2.4 s of the last add, is not applied; the same asks on cubic streams are. Every
    count matches policy.warmup.StartGate fed the same measurements (the engine's rule)."""
    from policy.warmup import StartGate, WarmupConfig

    cfg = EnvConfig(p_initial_default=1.0, initial_streams=2, warmup_rtts=16.0)
    counts = {}
    for cc in (2, 1):  # bbr, cubic
        env = SimVecEnv(1, cfg, seed=3)
        env.reset(params=fixed_params(1, capacity=1e9, rtt=0.15, cap=20e6, cc=cc))
        gate = StartGate(WarmupConfig(cc="bbr"), ControllerConfig(max_streams=64), 2)
        m, seen = None, []
        for _ in range(7):
            if m is not None:
                assert gate.step(int(env.streams[0]) + 5, m.signal(0, env.clock[0], 1.0)) == (
                    int(env.streams[0]) + 5 if not env.starting()[0] else int(env.streams[0])
                )
            env.step(np.array([0]))  # +5, asked every MI
            m = env.last
            seen.append(int(env.streams[0]))
        counts[CC_NAMES[cc]] = seen
        assert env.deferred[0] == (5 if cc == 2 else 0)
    assert counts == {"bbr": [2, 2, 7, 7, 7, 12, 12], "cubic": [7, 12, 17, 22, 27, 32, 37]}
    # retreats pass at once; off by default, and then the episodes are the ones of before
    env = SimVecEnv(1, cfg, seed=3)
    env.reset(params=fixed_params(1, capacity=1e9, rtt=0.15, cap=20e6, cc=2))
    env.step(np.array([4]))
    assert env.streams[0] == 1
    a, b = SimVecEnv(3, EnvConfig(), seed=9), SimVecEnv(3, EnvConfig(warmup_rtts=0.0), seed=9)
    np.testing.assert_array_equal(a.reset(), b.reset())
    np.testing.assert_array_equal(
        a.step(np.zeros(3, np.int64))[0], b.step(np.zeros(3, np.int64))[0]
    )
    with pytest.raises(ValueError, match="warmup_cc"):
        EnvConfig(warmup_cc="vegas")


def test_a_reset_steps_every_world_unless_told_to_step_only_its_own() -> None:
    """reset_steps_all (default True, the episodes every shipped policy was trained on):
    an episode's reset runs its first MI in every simulated world, so the others advance
    MIs their agent never sees (sim.t runs ahead of the MIs observed). False: every world's
    time is exactly the MIs its agent saw."""
    seen = {}
    for steps_all in (True, False):
        env = SimVecEnv(4, EnvConfig(episode_len=(3, 7), reset_steps_all=steps_all), seed=2)
        env.reset()
        for _ in range(40):
            env.step(np.full(4, 2, np.int64))
        seen[steps_all] = env.sim.t - env.clock
    assert (seen[True] > 0).any()
    np.testing.assert_array_equal(seen[False], 0.0)
    # the default is the episodes of before: no mask at all
    a, b = SimVecEnv(3, EnvConfig(), seed=9), SimVecEnv(3, EnvConfig(reset_steps_all=True), seed=9)
    np.testing.assert_array_equal(a.reset(), b.reset())


def test_configs_load_and_reject_unknown_keys(tmp_path: Path) -> None:
    for name in ("default", "paper", "transformer"):
        cfg = load_config(ROOT / "configs" / "train" / f"{name}.toml")
        assert cfg.ppo.n_epochs == 30 and cfg.ppo.batch_size == 1000 and cfg.ppo.clip_range == 0.3
        assert (
            cfg.ppo.clip_range_vf == 10.0 and cfg.ppo.target_kl == 0.01 and cfg.ppo.ent_coef == 0.01
        )
    paper = load_config(ROOT / "configs/train/paper.toml")
    assert (
        paper.ppo.gamma == 1.0 and paper.ppo.learning_rate == 5e-5 and paper.env.reward == "paper"
    )
    assert load_config(ROOT / "configs/train/transformer.toml").model.kind == "transformer"
    bad = tmp_path / "bad.toml"
    bad.write_text("[ppo]\nlearning_rat = 1e-3\n")
    with pytest.raises(ValueError, match=r"\[ppo\]: unknown keys \['learning_rat'\]"):
        load_config(bad)
    bad.write_text('[model]\nkind = "lstm"\n')
    with pytest.raises(ValueError, match="kind must be"):
        load_config(bad)


def test_extends_lays_a_file_over_its_base_section_by_section(tmp_path: Path) -> None:
    (tmp_path / "base.toml").write_text(
        "[ppo]\nseed = 3\nlearning_rate = 1e-4\n[sim]\np_lan = 0.2\nslow_recovery = true\n"
    )
    (tmp_path / "mid.toml").write_text('extends = "base.toml"\n[sim]\np_lan = 0.3\n')
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "top.toml").write_text('extends = "../mid.toml"\n[ppo]\nseed = 7\n')
    cfg = load_config(sub / "top.toml")
    # this file's key wins, the rest is kept
    assert cfg.ppo.seed == 7 and cfg.ppo.learning_rate == 1e-4
    assert cfg.env.sim.p_lan == 0.3 and cfg.env.sim.slow_recovery  # the nearer base wins
    # the shipped candidates are deltas: robust-bbr = default + robust + noburst + bursts
    bbr = load_config(ROOT / "configs/train/robust-bbr.toml")
    default = load_config(ROOT / "configs/train/default.toml")
    assert bbr.ppo == default.ppo and bbr.env.sim.p_comp_bbr == 0.7 and bbr.env.sim.slow_recovery
    assert bbr.env.sim.comp_bbr_start_burst == (0.05, 0.2)
    # an unknown key is named under the file that holds it, not the file that was loaded
    (tmp_path / "base.toml").write_text("[sim]\np_lan = 0.2\np_typo = 1\n")
    with pytest.raises(ValueError, match=r"base\.toml \[sim\]: unknown keys \['p_typo'\]"):
        load_config(sub / "top.toml")
    (tmp_path / "base.toml").write_text("[simulator]\np_lan = 0.2\n")
    with pytest.raises(ValueError, match=r"base\.toml: unknown sections \['simulator'\]"):
        load_config(sub / "top.toml")
    (tmp_path / "base.toml").write_text('extends = "sub/top.toml"\n')
    with pytest.raises(ValueError, match="extends makes a cycle: .*top.toml -> .*mid.toml"):
        load_config(sub / "top.toml")
    (tmp_path / "mid.toml").write_text('extends = "nowhere.toml"\n')
    with pytest.raises(ValueError, match="nowhere.toml.*not found"):
        load_config(sub / "top.toml")
    (tmp_path / "mid.toml").write_text("extends = 3\n")
    with pytest.raises(ValueError, match="extends must be a file name"):
        load_config(sub / "top.toml")


@pytest.mark.parametrize("kind", ["mlp", "transformer"])
def test_tiny_training_run_gives_a_loadable_deterministic_policy(tmp_path: Path, kind: str) -> None:
    import torch

    from train.trainer import train

    base = TrainConfig()
    cfg = replace(
        base,
        ppo=replace(
            base.ppo, total_timesteps=400, n_envs=4, n_steps=50, batch_size=100, n_epochs=2, seed=1
        ),
        model=ModelConfig(kind=kind, hidden=(32,), d_model=16, n_heads=2, n_layers=1, ff=32),
    )
    _, meta = train(cfg, tmp_path)
    assert meta["timesteps"] >= 400 and meta["seed"] == 1
    # where its floating point came from (round 57: rebuilds part on the BLAS's rounding)
    assert meta["numerics"]["capability"] == torch.backends.cpu.get_cpu_capability()
    assert meta["numerics"]["cpu"] and isinstance(meta["numerics"]["env"], dict)
    assert (tmp_path / "progress.csv").read_text().startswith(("rollout", "time", "train"))
    seqs = []
    for _ in range(2):
        c = make_controller(f"ppo:{tmp_path / 'policy.pt'}", ControllerConfig())
        env = SimVecEnv(1, EnvConfig(), seed=5)
        env.reset(params=fixed_params(1, cap=50e6))
        n, seq = c.initial(), []
        for t in range(8):
            m = env.sim.step(np.array([n]))
            n = c.decide(m.signal(0, t + 1.0, 1.0))
            seq.append(n)
        seqs.append(seq)
    assert seqs[0] == seqs[1]


def test_teacher_moves_towards_the_best_fixed_n_and_warm_start_runs(tmp_path: Path) -> None:
    from train.bc import pretrain, teacher_action

    acts = teacher_action(np.array([2.0, 17.0, 19.0, 20.0, 40.0]), np.full(5, 19.0))
    assert acts.tolist() == [0, 1, 2, 3, 4]  # +5, +1, 0, -1, -5
    base = TrainConfig()
    cfg = replace(base, model=ModelConfig(hidden=(32,)), ppo=replace(base.ppo, seed=2))
    meta = pretrain(cfg, tmp_path / "ws.pt", rounds=2, steps=60, envs=4, echo=lambda s: None)
    assert meta["samples"] == 2 * 20 * 4
    ckpt = f"ppo:{tmp_path / 'ws.pt'}"
    a, b = (make_controller(ckpt, ControllerConfig()) for _ in range(2))
    da, db = a.decide(_signal()), b.decide(_signal())
    # loads, takes one of the five actions from its initial count, deterministically
    assert da - a.initial() in ACTIONS and da == db


def test_the_probing_teacher_adds_one_at_the_best_n_once_the_count_has_stood_still() -> None:
    from train.env import teacher_action

    n, best = np.array([19.0, 19.0, 19.0, 20.0, 2.0]), np.full(5, 19.0)
    still = np.array([7.0, 8.0, 30.0, 30.0, 30.0])
    assert teacher_action(n, best, still).tolist() == [2, 2, 2, 3, 0]  # off by default
    assert teacher_action(n, best, still, probe_after=8).tolist() == [2, 1, 1, 3, 0]
    assert teacher_action(n, best, still, 8, probe_above=True).tolist() == [2, 1, 1, 1, 0]
    with pytest.raises(ValueError, match="teacher_probe"):
        EnvConfig(teacher_probe=-1)
    # the env counts the MIs run at the current count: 1 after the reset's MI, +1 per MI
    # held, back to 1 after a change; its teacher reads that count
    env = SimVecEnv(2, EnvConfig(p_initial_default=1.0, teacher_probe=3), seed=1)
    env.reset(params=fixed_params(2, cap=50e6))
    assert env.still.tolist() == [1.0, 1.0]
    hold, add = ACTIONS.index(0), ACTIONS.index(+1)
    for _ in range(2):
        env.step(np.array([hold, hold]))
    env.step(np.array([hold, add]))
    assert env.still.tolist() == [4.0, 1.0] and env.streams.tolist() == [2.0, 3.0]
    at_best = env.streams.copy()  # pretend both counts are their world's best
    assert env.teacher(at_best).tolist() == [1, 2]


def test_the_probing_teacher_backs_off_after_probes_that_did_not_pay() -> None:
    """teacher_backoff: after k failed probes in a row the teacher waits 8 x 2^min(k, 2) still
    MIs (8, 16, 32, 32); the env counts failed probes as the features do (+1 undone at once)."""
    from train.env import teacher_action

    n = best = np.full(4, 19.0)
    still, fails = np.array([8.0, 8.0, 16.0, 32.0]), np.array([0.0, 1.0, 2.0, 3.0])
    assert teacher_action(n, best, still, 8, True, fails).tolist() == [1, 1, 1, 1]  # off
    assert teacher_action(n, best, still, 8, True, fails, backoff=2).tolist() == [1, 2, 2, 1]
    assert teacher_action(n, best, still * 2, 8, True, fails, 2).tolist() == [1, 1, 1, 1]
    with pytest.raises(ValueError, match="teacher_backoff"):
        EnvConfig(teacher_backoff=-1)
    env = SimVecEnv(1, EnvConfig(p_initial_default=1.0, teacher_probe=8, teacher_backoff=2))
    env.reset(params=fixed_params(1, cap=50e6))
    add, back, hold = ACTIONS.index(+1), ACTIONS.index(-1), ACTIONS.index(0)
    for a, want in ((add, 0), (back, 1), (hold, 1), (add, 1), (back, 2), (add, 2), (add, 0)):
        env.step(np.array([a]))
        assert env.fails[0] == want


def test_the_probe_cap_applies_adds_from_a_still_count_as_one_stream_as_the_shipped_gate_does() -> (
    None
):
    """probe_cap=3: +5 asked once the count has stood 3 MIs adds one stream; the +5 right
    after it is applied whole (the count has stood one MI). Every count matches
    policy.warmup.StartGate with probe=3 fed the same measurements (the engine's rule); off
    by default."""
    from policy.warmup import StartGate, WarmupConfig

    env = SimVecEnv(1, EnvConfig(p_initial_default=1.0, initial_streams=2, probe_cap=3), seed=3)
    env.reset(params=fixed_params(1, capacity=1e9, rtt=0.05, cap=20e6, cc=1))
    gate = StartGate(WarmupConfig(cc="bbr", probe=3), ControllerConfig(max_streams=64), 2)
    add5, hold = ACTIONS.index(+5), ACTIONS.index(0)
    seen = []
    for a in (hold, hold, add5, add5, hold, hold, add5, add5):
        ask = int(env.streams[0]) + ACTIONS[a]
        assert env.last is not None  # the MI just measured (the reset's, at first)
        want = gate.step(ask, env.last.signal(0, env.clock[0], 1.0))
        env.step(np.array([a]))
        assert want == int(env.streams[0])
        seen.append(int(env.streams[0]))
    assert seen == [2, 2, 3, 8, 8, 8, 9, 14] and gate.capped == 2
    with pytest.raises(ValueError, match="probe"):
        WarmupConfig(probe=-1)
    env = SimVecEnv(1, EnvConfig(p_initial_default=1.0, initial_streams=2), seed=3)
    env.reset(params=fixed_params(1, capacity=1e9, rtt=0.05, cap=20e6, cc=1))
    for _ in range(3):
        env.step(np.array([hold]))
    env.step(np.array([add5]))
    assert env.streams[0] == 7


@pytest.mark.parametrize("climb", [1, 2])
def test_the_climb_cap_cuts_adds_that_do_not_continue_a_climb_as_the_shipped_gate_does(
    climb: int,
) -> None:
    """climb_cap with the warm-up on a 150-ms BBR path: the first add after the start-up's
    deferral and the first after a retreat are one stream, an add right after an add is
    taken whole; with 2 the episode's first add is cut even where nothing was deferred.
    Every count matches policy.warmup.StartGate fed the same measurements."""
    from policy.warmup import StartGate, WarmupConfig

    cfg = EnvConfig(p_initial_default=1.0, initial_streams=2, warmup_rtts=16.0, climb_cap=climb)
    env = SimVecEnv(1, cfg, seed=3)
    env.reset(params=fixed_params(1, capacity=1e9, rtt=0.15, cap=20e6, cc=2))
    gate = StartGate(WarmupConfig(cc="bbr", climb=climb), ControllerConfig(max_streams=64), 2)
    add5, back, hold = ACTIONS.index(+5), ACTIONS.index(-1), ACTIONS.index(0)
    seen = []
    for a in (add5, add5, add5, hold, hold, add5, hold, hold, back, add5, add5, add5, add5):
        ask = int(env.streams[0]) + ACTIONS[a]
        assert env.last is not None
        want = gate.step(ask, env.last.signal(0, env.clock[0], 1.0))
        env.step(np.array([a]))
        assert want == int(env.streams[0])
        seen.append(int(env.streams[0]))
    # asks cut: the two after the start-up's deferral (the first one then deferred too), the
    # one after the retreat, and with climb=2 the very first (deferred either way)
    assert seen == [2, 2, 3, 3, 3, 8, 8, 8, 7, 8, 8, 8, 13] and gate.cut == 2 + climb
    # climb_loss above any MI's loss: nothing is cut, in the env as in the gate
    cfg = EnvConfig(
        p_initial_default=1.0, initial_streams=2, warmup_rtts=16.0, climb_cap=climb,
        climb_loss=0.5,
    )  # fmt: skip
    env = SimVecEnv(1, cfg, seed=3)
    env.reset(params=fixed_params(1, capacity=1e9, rtt=0.15, cap=20e6, cc=2))
    wc = WarmupConfig(cc="bbr", climb=climb, climb_loss=0.5)
    gate = StartGate(wc, ControllerConfig(max_streams=64), 2)
    for a in (add5, add5, add5, hold, hold, back, add5):
        assert env.last is not None
        want = gate.step(int(env.streams[0]) + ACTIONS[a], env.last.signal(0, env.clock[0], 1.0))
        env.step(np.array([a]))
        assert want == int(env.streams[0])
    assert int(env.streams[0]) == 11 and gate.cut == 0
    # without the warm-up (a 50-ms path) climb=1 leaves the first +5 alone, climb=2 cuts it
    env = SimVecEnv(1, EnvConfig(p_initial_default=1.0, initial_streams=2, climb_cap=climb), seed=3)
    env.reset(params=fixed_params(1, capacity=1e9, rtt=0.05, cap=20e6, cc=1))
    env.step(np.array([add5]))
    assert int(env.streams[0]) == (7 if climb == 1 else 3)
    with pytest.raises(ValueError, match="climb_cap"):
        EnvConfig(climb_cap=3)


@pytest.mark.parametrize(
    ("options", "cut", "path"),
    [
        ({"climb_loss": 0.01}, 0, [7, 12, 7, 7, 2, 2, 7, 12, 17, 22]),
        ({"climb_loss": 0.01, "climb_peak": 1}, 1, [7, 12, 7, 7, 2, 2, 3, 8, 13, 18]),
        (
            {"climb_loss": 0.003, "climb_peak": 1, "climb_probe": 1},
            4,
            [7, 12, 7, 7, 2, 2, 3, 4, 5, 6],
        ),
    ],
)
def test_climb_peak_and_climb_probe_in_the_env_as_in_the_shipped_gate(
    options: dict[str, Any], cut: int, path: list[int]
) -> None:
    """A 100 Mbit/s 20-ms path with a shallow queue, where our own streams cause the loss
    (2.7 % at 7 streams, 0.4-0.7 % at 2): after the retreat 7 -> 2, decided at 2.5 % loss, the
    MI at 2 streams reads 0.4 %. climb_peak reads the 2.5 % and cuts the +5 that follows;
    climb_probe keeps the climb at one stream while the probed count loses climb_loss or more.
    Every count matches policy.warmup.StartGate fed the same measurements."""
    from policy.warmup import StartGate, WarmupConfig

    env = SimVecEnv(
        1, EnvConfig(p_initial_default=1.0, initial_streams=2, climb_cap=1, **options), seed=3
    )
    env.reset(params=fixed_params(1, capacity=1e8, rtt=0.02, buffer=0.1))
    gate = StartGate(WarmupConfig(climb=1, **options), ControllerConfig(max_streams=64), 2)
    seen = []
    for d in (+5, +5, -5, 0, -5, 0, +5, +5, +5, +5):
        assert env.last is not None
        want = gate.step(int(env.streams[0]) + d, env.last.signal(0, env.clock[0], 1.0))
        env.step(np.array([ACTIONS.index(d)]))
        assert want == int(env.streams[0])
        seen.append(want)
    assert seen == path and gate.cut == cut
    with pytest.raises(ValueError, match="climb_peak"):
        EnvConfig(climb_peak=2)


def _signal():  # type: ignore[no-untyped-def]
    from policy.signals import SignalVector

    return SignalVector(
        t=1.0, mi_s=1.0, streams=2, throughput_bps=1e8, goodput_bps=1e8, loss_rate=0.0,
        rtt_ms=40.0, min_rtt_ms=40.0, rtt_gradient=0.0, rtt_ratio=1.0,
    )  # fmt: skip


def test_privileged_state_reads_the_simulators_hidden_world() -> None:
    env = SimVecEnv(3, EnvConfig(), seed=4)
    env.reset(params=fixed_params(3, cap=200e6))
    n_opt = env.sim.optimum()[0]
    env.streams = n_opt.copy()
    env.streams[1] = max(1.0, n_opt[1] / 4)
    priv = env.privileged()
    assert priv.shape == (3, 4) and priv.dtype == np.float32
    assert np.allclose(priv[:, 0], np.log2(n_opt) / 6, atol=1e-6)
    assert priv[0, 1] == 0.0 and priv[1, 1] < 0  # at the optimum; below it
    assert np.all(np.abs(priv) <= 1.0)
    with pytest.raises(ValueError, match="critic must be"):
        ModelConfig(critic="oracle")


def test_asymmetric_critic_trains_apart_from_the_actor_and_does_not_ship(tmp_path: Path) -> None:
    """The actor reads only the observation (the privileged columns do not move its
    output), the value loss reaches only the critic, and the checkpoint's actor is SB3's
    exactly while its value head is zero (no privileged input exists on a real network)."""
    import torch

    from train.env import PRIVILEGED_DIM
    from train.trainer import PrivilegedCriticPolicy, SB3SimVecEnv, make_model, train

    base = TrainConfig()
    cfg = replace(
        base,
        ppo=replace(
            base.ppo, total_timesteps=400, n_envs=4, n_steps=50, batch_size=100, n_epochs=2, seed=1
        ),
        model=ModelConfig(hidden=(32,), critic="privileged", critic_hidden=(16,)),
    )
    venv = SB3SimVecEnv(SimVecEnv(4, cfg.env, seed=1), privileged=True)
    obs = torch.from_numpy(venv.reset())
    d = cfg.env.features.obs_dim
    assert obs.shape == (4, d + PRIVILEGED_DIM)
    model = make_model(cfg, venv, None)
    pol = model.policy
    assert isinstance(pol, PrivilegedCriticPolicy)
    other = obs.clone()
    other[:, d:] = torch.rand(4, PRIVILEGED_DIM)
    with torch.no_grad():
        a = pol.get_distribution(obs).distribution.logits
        b = pol.get_distribution(other).distribution.logits
        assert torch.equal(a, b)  # the actor cannot see the privileged columns
        assert not torch.equal(pol.predict_values(obs), pol.predict_values(other))
    pol.predict_values(obs).sum().backward()
    fx = pol.features_extractor
    assert all(p.grad is None or not p.grad.any() for p in fx.trunk.parameters())
    assert any(p.grad is not None and p.grad.any() for p in fx.critic.parameters())
    _, meta = train(cfg, tmp_path)
    assert meta["timesteps"] >= 400
    c = make_controller(f"ppo:{tmp_path / 'policy.pt'}", ControllerConfig())
    assert c.decide(_signal()) - c.initial() in ACTIONS
    ck = torch.load(tmp_path / "policy.pt", weights_only=False)
    v = {k: t for k, t in ck["state_dict"].items() if k.startswith("v.")}
    assert v and all(not t.any() for t in v.values())
