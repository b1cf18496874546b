"""Observation features: scale-free, None-safe, identical in the engine and the simulator."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from policy.features import (
    FEATURE_NAMES,
    MEMORY_NAMES,
    N_FEATURES,
    FeatureConfig,
    FeatureState,
    FeatureTracker,
    step_fails,
    step_features,
)
from policy.signals import SignalVector


def _sv(
    thr: float,
    n: int = 4,
    loss: float | None = 0.0,
    ratio: float | None = 1.0,
    grad: float | None = 0.0,
) -> SignalVector:
    return SignalVector(
        t=1.0, mi_s=1.0, streams=n, throughput_bps=thr, goodput_bps=thr, loss_rate=loss,
        rtt_ms=None if ratio is None else 40.0 * ratio, min_rtt_ms=None if ratio is None else 40.0,
        rtt_gradient=grad, rtt_ratio=ratio,
    )  # fmt: skip


def _idx(name: str) -> int:
    return FEATURE_NAMES.index(name)


def test_observation_shape_and_padding() -> None:
    cfg = FeatureConfig(history=5)
    tr = FeatureTracker(cfg)
    assert tr.observation().shape == (5 * N_FEATURES,)
    assert not tr.observation().any()
    obs = tr.push(_sv(1e8)).reshape(5, N_FEATURES)
    assert obs[:4].sum() == 0  # older slots are padding
    assert obs[4, _idx("valid")] == 1.0
    assert obs.dtype == np.float32


def test_unknown_values_map_to_neutral_with_flags() -> None:
    tr = FeatureTracker(FeatureConfig(history=2))
    row = tr.push(_sv(1e8, loss=None, ratio=None, grad=None)).reshape(2, N_FEATURES)[-1]
    assert np.all(np.isfinite(row))
    assert row[_idx("loss")] == 0 and row[_idx("loss_known")] == 0
    assert (
        row[_idx("rtt_ratio")] == 0
        and row[_idx("rtt_gradient")] == 0
        and row[_idx("rtt_known")] == 0
    )
    row = tr.push(_sv(1e8, loss=1e-4, ratio=2.0, grad=0.01)).reshape(2, N_FEATURES)[-1]
    assert row[_idx("loss")] == pytest.approx(1 / 3, abs=1e-6)
    assert row[_idx("loss_known")] == 1 and row[_idx("rtt_known")] == 1
    assert row[_idx("rtt_ratio")] == pytest.approx(np.log(2.0) / 2)


def test_features_are_scale_free() -> None:
    """The same relative history at 50 Mbit/s and at 10 Gbit/s gives the same observation."""
    a, b = FeatureTracker(FeatureConfig()), FeatureTracker(FeatureConfig())
    for k, n in zip([0.3, 0.6, 0.9, 0.95, 0.5], [2, 7, 12, 17, 22], strict=True):
        oa = a.push(_sv(50e6 * k, n, loss=1e-3))
        ob = b.push(_sv(10e9 * k, n, loss=1e-3))
    np.testing.assert_allclose(oa, ob, atol=1e-6)
    assert np.all(np.abs(oa) <= 1.0)


def test_relative_throughput_and_changes() -> None:
    tr = FeatureTracker(FeatureConfig(history=1))
    tr.push(_sv(100e6, 2))
    row = tr.push(_sv(50e6, 7))
    assert row[_idx("thr_rel")] == pytest.approx(50 / (100 * 0.98))
    assert row[_idx("thr_change")] == pytest.approx(np.log(0.5) / 2)
    assert row[_idx("streams_change")] == pytest.approx(0.5)
    assert row[_idx("streams_rel")] == pytest.approx(7 / 64)


def test_batched_path_equals_tracker() -> None:
    cfg = FeatureConfig(history=3)
    st = FeatureState.zeros(2, cfg)
    tr = FeatureTracker(cfg)
    for thr, n in [(1e8, 2), (3e8, 7), (2e8, 6)]:
        out = step_features(
            st, cfg, np.array([thr, 5.0]), np.array([n, 1.0]), np.array([1e-3, np.nan]),
            np.array([0.01, np.nan]), np.array([1.2, np.nan]),
        )  # fmt: skip
        ref = tr.push(_sv(thr, n, loss=1e-3, ratio=1.2, grad=0.01))
    np.testing.assert_allclose(out[0], ref, atol=1e-6)


def test_config_round_trip_and_unknown_keys() -> None:
    cfg = FeatureConfig(history=4, max_streams=32)
    assert FeatureConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match="unknown keys"):
        FeatureConfig.from_dict({**cfg.to_dict(), "bogus": 1})
    assert cfg.with_max_streams(128).max_streams == 128


def test_elasticity_tells_linear_growth_from_saturation() -> None:
    tr = FeatureTracker(FeatureConfig(history=1))
    tr.push(_sv(100e6, 2))
    linear = tr.push(_sv(400e6, 8))  # 4x streams, 4x throughput
    flat = tr.push(_sv(404e6, 13))  # more streams, same throughput
    same = tr.push(_sv(300e6, 13))  # no change of streams: undefined -> 0
    assert linear[_idx("elasticity")] == pytest.approx(0.5)
    assert abs(flat[_idx("elasticity")]) < 0.05
    assert same[_idx("elasticity")] == 0.0
    assert linear[_idx("streams_logchange")] == pytest.approx(np.log(4) / 2)


def _lan(rtt_ms: float, min_ms: float | None) -> SignalVector:
    return SignalVector(
        t=1.0, mi_s=1.0, streams=2, throughput_bps=1e8, goodput_bps=1e8, loss_rate=0.0,
        rtt_ms=rtt_ms, min_rtt_ms=min_ms, rtt_gradient=0.0,
        rtt_ratio=None if min_ms is None else rtt_ms / min_ms,
    )  # fmt: skip


def test_rtt_ratio_floor_keeps_microsecond_jitter_from_reading_as_queueing() -> None:
    # Loopback: min RTT 20 us, MI mean 140 us (scheduling jitter): the raw ratio is 7.
    floored = FeatureTracker(FeatureConfig(history=1)).push(_lan(0.14, 0.02))
    raw = FeatureTracker(FeatureConfig(history=1, rtt_floor_ms=0.0)).push(_lan(0.14, 0.02))
    assert raw[_idx("rtt_ratio")] == pytest.approx(np.log(7.0) / 2, rel=1e-5)
    assert floored[_idx("rtt_ratio")] == pytest.approx(np.log(1.12) / 2, rel=1e-5)
    # 5 ms of real queueing on a LAN still shows against the 1 ms floor: ratio 6.
    queued = FeatureTracker(FeatureConfig(history=1)).push(_lan(5.02, 0.02))
    assert queued[_idx("rtt_ratio")] == pytest.approx(np.log(6.0) / 2, rel=1e-5)
    # Paths at or above the floor are unchanged, and so is an unknown minimum.
    for rtt, base in [(48.0, 40.0), (1.5, 1.0)]:
        wan = FeatureTracker(FeatureConfig(history=1)).push(_lan(rtt, base))
        assert wan[_idx("rtt_ratio")] == pytest.approx(np.log(rtt / base) / 2, rel=1e-5)
    unknown = FeatureTracker(FeatureConfig(history=1)).push(_lan(0.16, None))
    assert unknown[_idx("rtt_known")] == 0


def _cc_sv(cc: str | None, thr: float = 1e8, n: int = 4, loss: float = 0.0) -> SignalVector:
    return replace(_sv(thr, n=n, loss=loss), cc=cc)


def test_own_cc_appends_one_bbr_bit_after_the_history() -> None:
    """FeatureConfig.own_cc: one context input after the history, 1 when our streams ran
    BBR in the newest MI, 0 for loss-based windows and when unknown."""
    cfg = FeatureConfig(history=3, own_cc=True)
    assert cfg.obs_dim == 3 * N_FEATURES + 1
    got = {cc: FeatureTracker(cfg).push(_cc_sv(cc))[-1] for cc in ("bbr", "bbr2", "cubic", None)}
    assert got == {"bbr": 1.0, "bbr2": 1.0, "cubic": 0.0, None: 0.0}
    tr = FeatureTracker(cfg)
    tr.push(_cc_sv("bbr"))
    assert tr.observation()[-1] == 1.0
    assert tr.push(_cc_sv("cubic"))[-1] == 0.0  # follows the streams (--cc auto switches)
    tr.reset()
    assert tr.observation().shape == (cfg.obs_dim,) and not tr.observation().any()


def test_own_cc_off_keeps_the_old_observation() -> None:
    """Checkpoints written before the bit have no own_cc key: their input is unchanged."""
    old = {k: v for k, v in FeatureConfig().to_dict().items() if k != "own_cc"}
    cfg = FeatureConfig.from_dict(old)
    assert not cfg.own_cc and cfg.obs_dim == cfg.history * N_FEATURES
    with_bit = FeatureTracker(FeatureConfig(own_cc=True)).push(_cc_sv("bbr"))
    np.testing.assert_array_equal(FeatureTracker(cfg).push(_cc_sv("bbr")), with_bit[:-1])


def test_own_cc_batched_path_equals_tracker() -> None:
    cfg = FeatureConfig(history=2, own_cc=True)
    st = FeatureState.zeros(3, cfg)
    a = np.array
    out = step_features(
        st, cfg, a([1e8] * 3), a([4.0] * 3), a([0.0] * 3), a([0.0] * 3), a([1.0] * 3),
        a([40.0] * 3), own_bbr=a([1.0, 0.0, np.nan]),
    )  # fmt: skip
    assert list(out[:, -1]) == [1.0, 0.0, 0.0]
    np.testing.assert_allclose(out[0], FeatureTracker(cfg).push(_cc_sv("bbr")), atol=1e-6)
    st.reset(np.array([True, False, False]))
    assert st.observation()[0, -1] == 0.0 and st.observation()[1].any()


def _memory(obs: np.ndarray) -> dict[str, float]:
    return dict(zip(MEMORY_NAMES, (float(x) for x in obs[-len(MEMORY_NAMES) :]), strict=True))


def test_memory_keeps_the_last_changes_outcome_after_the_history_forgets_it() -> None:
    """An add from 2 to 4 streams that doubles the throughput (loss unchanged) reads as
    elasticity 1 (0.5 scaled) for as long as the count stands, 20 MIs after the 8-MI history
    has dropped it; the count's age grows; a retreat replaces the memory."""
    cfg = FeatureConfig(memory=True)
    assert cfg.obs_dim == 8 * N_FEATURES + 5
    tr = FeatureTracker(cfg)
    for _ in range(3):
        m = _memory(tr.push(_sv(1e8, n=2, loss=0.01)))
    assert m["last_logchange"] == 0.0 and m["last_elasticity"] == 0.0  # the start: no change
    assert m["still_log"] == pytest.approx(np.log2(4) / np.log2(65))
    m = _memory(tr.push(_sv(1.4e8, n=4, loss=0.01)))  # join MI: half the rate so far
    assert m["still_log"] == pytest.approx(np.log2(2) / np.log2(65))
    assert m["last_logchange"] == pytest.approx(np.log(2) / 2)
    assert m["last_elasticity"] == pytest.approx(np.log(1.4) / np.log(2) / 2)
    for _ in range(20):
        obs = tr.push(_sv(2e8, n=4, loss=0.01))
    m = _memory(obs)
    assert not obs[: 8 * N_FEATURES].reshape(8, N_FEATURES)[:, _idx("streams_change")].any()
    assert m["last_elasticity"] == pytest.approx(0.5)
    assert m["last_dloss"] == pytest.approx(0.0)
    assert m["last_dutility"] > 0.3  # the utility about doubled, against a 2e8 maximum
    assert m["still_log"] == pytest.approx(np.log2(22) / np.log2(65))
    m = _memory(tr.push(_sv(2e8, n=3, loss=0.03)))  # a retreat that costs nothing but loss
    assert m["last_logchange"] == pytest.approx(np.log(3 / 4) / 2)
    assert m["last_elasticity"] == pytest.approx(0.0, abs=1e-6)
    assert m["last_dloss"] == pytest.approx(np.log10(3) / 6)
    assert m["last_dutility"] < 0


def test_memory_off_keeps_the_old_observation_and_the_batched_path_equals_the_tracker() -> None:
    old = {k: v for k, v in FeatureConfig(own_cc=True).to_dict().items() if k != "memory"}
    cfg = FeatureConfig.from_dict(old)
    assert not cfg.memory and cfg.obs_dim == cfg.history * N_FEATURES + 1
    mem = FeatureConfig(own_cc=True, memory=True)
    seq = [(1e8, 2, 0.0), (1e8, 2, 0.01), (1.5e8, 7, 0.02), (2.5e8, 7, 0.02), (2.4e8, 6, 0.01)]
    plain, with_mem = FeatureTracker(cfg), FeatureTracker(mem)
    st = FeatureState.zeros(3, mem)
    a = np.array
    for thr, n, loss in seq:
        o_plain = plain.push(_cc_sv("bbr", thr=thr, n=n, loss=loss))
        o_mem = with_mem.push(_cc_sv("bbr", thr=thr, n=n, loss=loss))
        np.testing.assert_array_equal(o_plain, o_mem[: cfg.obs_dim])
        out = step_features(
            st, mem, a([thr] * 3), a([float(n)] * 3), a([loss] * 3), a([0.0] * 3),
            a([1.0] * 3), a([40.0] * 3), own_bbr=a([1.0] * 3),
        )  # fmt: skip
        np.testing.assert_allclose(out[1], o_mem, atol=1e-6)
    assert _memory(o_mem)["last_logchange"] == pytest.approx(np.log(6 / 7) / 2)
    sub = st.take(np.array([False, True, False]))
    st.reset(np.array([True, True, False]))
    assert not st.observation()[1].any() and st.observation()[2].any()
    st.put(np.array([False, True, False]), sub)
    np.testing.assert_allclose(st.observation()[1], o_mem, atol=1e-6)
    assert st.still[1] == 1.0 and st.base_thr[1] == 2.5e8


def test_step_fails_counts_probes_undone_at_once_and_clears_on_a_climb_or_a_late_retreat() -> None:
    """The back-off count (shared by the features and the simulator's teacher): +1 then -1
    within 3 MIs is a failed probe (up to 3 in a row); an add after a retreat leaves the
    count; a climb (+ after +), a retreat that goes on (- after -), or a retreat from an add
    that stood longer than 3 MIs clears it."""
    fails, last = np.zeros(1), np.zeros(1)

    def go(d: float, since: float) -> float:
        nonlocal fails, last
        fails, last = step_fails(fails, last, np.array([since]), np.array([d]))
        return float(fails[0])

    assert [go(+1, 8), go(-1, 1), go(0, 5), go(+1, 16), go(-1, 2)] == [0, 1, 1, 1, 2]
    assert [go(+1, 32), go(-1, 3), go(+1, 32), go(-1, 1)] == [2, 3, 3, 3]  # at most 3
    assert [go(+1, 32), go(+1, 1)] == [3, 0]  # a probe that paid: the climb goes on
    assert [go(-1, 1), go(+1, 8), go(-1, 4)] == [1, 1, 0]  # the last - after +: stood 4 MIs
    assert [go(+1, 8), go(-1, 1), go(-1, 1)] == [0, 1, 0]  # a retreat that goes on


def test_backoff_appends_the_failed_probes_after_the_memory() -> None:
    """``probe_fails`` reads 0, then 0.5 after a probe undone the next MI; the memory's five
    inputs are where they were; backoff needs the memory; the batched path equals the
    tracker; off, the observation is the memory's."""
    with pytest.raises(ValueError, match="backoff needs memory"):
        FeatureConfig(backoff=True)
    mem = FeatureConfig(own_cc=True, memory=True)
    cfg = FeatureConfig(own_cc=True, memory=True, backoff=True)
    assert cfg.obs_dim == mem.obs_dim + 1 == 8 * N_FEATURES + 7
    seq = [(1e8, 2), (1e8, 2), (1.2e8, 3), (1e8, 2), (1e8, 2), (1.2e8, 3), (1e8, 2)]
    with_mem, with_bo = FeatureTracker(mem), FeatureTracker(cfg)
    st = FeatureState.zeros(2, cfg)
    a = np.array
    seen = []
    for thr, n in seq:
        o_mem = with_mem.push(_cc_sv("bbr", thr=thr, n=n, loss=0.01))
        o_bo = with_bo.push(_cc_sv("bbr", thr=thr, n=n, loss=0.01))
        np.testing.assert_array_equal(o_mem, o_bo[:-1])
        out = step_features(
            st, cfg, a([thr] * 2), a([float(n)] * 2), a([0.01] * 2), a([0.0] * 2),
            a([1.0] * 2), a([40.0] * 2), own_bbr=a([1.0] * 2),
        )  # fmt: skip
        np.testing.assert_allclose(out[0], o_bo, atol=1e-6)
        seen.append(round(float(o_bo[-1]), 3))
    assert seen == [0, 0, 0, 0.5, 0.5, 0.5, round(np.log2(3) / 2, 3)]
