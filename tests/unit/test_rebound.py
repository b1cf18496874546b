"""rebound[:KEY=VALUE,...][:INNER]: the end of a flood of loss that others made adds streams
at once; our own short bursts, floods whose end does not free the link, short paths and
steps that did not pay leave the count to the inner controller."""

from __future__ import annotations

from pathlib import Path

import pytest

from policy.base import ControllerConfig, make_controller
from policy.rebound import ReboundConfig
from policy.signals import SignalVector
from tests.unit.test_shed import Steps  # noqa: F401  (registers the ``steps`` controller)


def _mi(t: int, n: int, bps: float, loss: float, min_rtt_ms: float | None = 80.0) -> SignalVector:
    return SignalVector(
        t=t + 1.0, mi_s=1.0, streams=n, throughput_bps=bps, goodput_bps=bps, loss_rate=loss,
        rtt_ms=90.0, min_rtt_ms=min_rtt_ms, rtt_gradient=0.0, rtt_ratio=1.1,
    )  # fmt: skip


def onoff_lossy(t: int, n: int) -> tuple[float, float]:
    """hand-bbr-onoff-lossy-80ms's shape: 150 Mbit/s, rivals on for MIs 4-11 and 20-27 (our
    streams get 3 Mbit/s at 30 % loss whatever their count), and off between, where each
    stream is held to 6.5 Mbit/s by 0.1 % random loss (Mathis)."""
    if 4 <= t <= 11 or 20 <= t <= 27:
        return 3e6, 0.30
    return min(6.5e6 * n, 140e6), 0.001


def walk(spec: str, world, mis: int, min_rtt_ms: float | None = 80.0) -> list[int]:  # noqa: ANN001
    c = make_controller(spec, ControllerConfig(max_streams=64))
    n, out = c.initial(), []
    for t in range(mis):
        bps, loss = world(t, n)
        n = c.decide(_mi(t, n, bps, loss, min_rtt_ms))
        out.append(n)
    return out


def test_the_end_of_a_rivals_flood_adds_streams_while_they_pay() -> None:
    # the inner walk: -1 after an MI with loss >= 1 %, +1 after one without (Steps keys on any
    # loss, so the path's 0.1 % random loss reads as loss: a Mathis-limited pair that retreats)
    inner = "steps:6_0"
    plain = walk(inner, onoff_lossy, 30)
    both = walk(f"rebound:{inner}", onoff_lossy, 30)
    assert plain[:12] == both[:12]  # the start and the on-period: the inner controller's
    # MI 12 ends the first flood (8 MIs at 30 %; 3 Mbit/s -> 6.5 Mbit/s x n >= 2 x 3): +5, then
    # +5 again since the added streams paid (throughput up >= 10 %), then the climbs are spent
    assert both[12] == plain[11] + 5 and both[13] == both[12] + 5
    assert both[14] == both[13] - 1  # the inner walk again, from the rebound's count
    assert max(both[12:20]) >= max(plain[12:20]) + 8
    assert both[28] == both[27] + 5  # the second flood's end rebounds too


def test_our_own_bursts_and_floods_that_do_not_free_the_link_pass() -> None:
    def burst(t: int, n: int) -> tuple[float, float]:  # 2 MIs at 20 % (a slow-start burst)
        return (50e6, 0.20) if t in (3, 4) else (50e6 + 1e6 * n, 0.0)

    inner = "steps:8_0"
    assert walk(f"rebound:{inner}", burst, 12) == walk(inner, burst, 12)

    def own(t: int, n: int) -> tuple[float, float]:  # a flood of our own: the link stays full
        return (140e6, 0.15) if 3 <= t <= 7 else (130e6, 0.0)

    assert walk(f"rebound:{inner}", own, 12) == walk(inner, own, 12)


def test_short_paths_unknown_rtts_and_the_count_cap_are_gated_out() -> None:
    inner = "steps:6_0"
    plain = walk(inner, onoff_lossy, 16)
    assert walk(f"rebound:{inner}", onoff_lossy, 16, min_rtt_ms=20.0) == plain
    assert walk(f"rebound:{inner}", onoff_lossy, 16, min_rtt_ms=None) == plain
    assert walk(f"rebound:min_rtt_ms=0:{inner}", onoff_lossy, 16, min_rtt_ms=None) != plain
    high = "steps:20_0"  # at MI 12 the inner walk is at 9 streams
    assert walk(f"rebound:max_n=8:{high}", onoff_lossy, 16) == walk(high, onoff_lossy, 16)
    assert walk(f"rebound:max_n=9:{high}", onoff_lossy, 16) != walk(high, onoff_lossy, 16)


def test_a_step_that_did_not_pay_ends_the_climb() -> None:
    def flat(t: int, n: int) -> tuple[float, float]:  # off-period throughput capped at 7
        return (3e6, 0.3) if 4 <= t <= 11 else (min(6.5e6 * n, 7e6), 0.001)

    out = walk("rebound:climbs=3:steps:6_0", flat, 16)
    assert out[12] == out[11] + 5  # the end of the flood
    assert out[13] == out[12] - 1  # 7 Mbit/s is < 1.1 x 6.5: no second step


def _joining(burst: float):  # noqa: ANN202
    """The lossy on/off path where the MI after the count grew by more than one reads the new
    streams' slow start: ``burst`` loss and half the throughput."""
    last = {"n": 0}

    def world(t: int, n: int) -> tuple[float, float]:
        grew, last["n"] = n > last["n"] + 1, n
        if 4 <= t <= 11:
            return 3e6, 0.30
        return (6.5e6 * n * (0.5 if grew else 1.0), burst if grew else 0.001)

    return world


def test_settle_skips_the_added_streams_join_mi_before_judging_the_step() -> None:
    """hand-bbr-onoff-lossy-80ms in round 63: the MI after a step of +5 reads the new streams'
    slow-start loss (3.7-9.9 %, here 8 % or, in a shallow queue, 12 %), then the path carries
    them at its random loss. Without ``settle`` that MI ends the climb; with ``settle=1`` it is
    skipped, neither judged nor read as a new flood, and the MI after it judges the step."""
    for burst in (0.08, 0.12):
        joins = _joining(burst)
        plain = walk("rebound:steps:6_0", joins, 18)
        settled = walk("rebound:settle=1:steps:6_0", _joining(burst), 18)
        assert plain[12] == settled[12] == plain[11] + 5  # the flood's end: +5 in both
        assert plain[13] == plain[12] - 1 and plain[14] == plain[13] - 1  # the climb ended
        assert settled[13] == settled[12] - 1  # the join MI: the inner walk, not judged
        assert settled[14] == settled[13] + 5  # the MI after it: the step paid, the next
        assert settled[15] == settled[14] - 1  # climbs=2 spent


def test_config_checks_and_one_rebound_per_stack() -> None:
    for bad in (
        "lo=0.2", "mis=0", "rise=0.5", "step=0", "climbs=0", "gain=-1", "settle=-1", "max_n=-1",
    ):  # fmt: skip
        with pytest.raises(ValueError, match="rebound"):
            ReboundConfig.parse(bad)
    with pytest.raises(ValueError, match="another rebound"):
        make_controller("rebound:rebound:steps:6_0")


def test_ppo_applies_a_rebound_in_its_meta_as_the_wrapper_does(tmp_path: Path) -> None:
    """``--rebound`` in a bundle decides MI for MI as ``rebound:...:ppo`` around the same
    bundle without it, on the on/off lossy path, and a second rebound around it is refused."""
    from train.ship import ship_ensemble

    cand = Path(__file__).parents[2] / "policy/weights/candidates"
    members = [cand / "hold-s2.pt", cand / "onoff-s4.pt"]
    plain, dest = tmp_path / "plain.pt", tmp_path / "default.pt"
    ship_ensemble(members, plain, note="plain")
    rec = ship_ensemble(members, dest, note="rebound", rebound=ReboundConfig())
    assert rec["shipped"]["rebound"] == ReboundConfig().to_dict()
    assert make_controller(f"ppo:{plain}").rebound is None  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="rebounds already"):
        make_controller(f"rebound:ppo:{dest}")
    paths = [walk(s, onoff_lossy, 30) for s in (f"ppo:{dest}", f"rebound:ppo:{plain}")]
    assert paths[0] == paths[1]
    c = make_controller(f"ppo:{dest}", ControllerConfig(max_streams=64))
    n = c.initial()
    for t in range(30):
        n = c.decide(_mi(t, n, *onoff_lossy(t, n)))
    assert c.rebound.rebounds > 0  # type: ignore[attr-defined]
