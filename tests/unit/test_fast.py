"""fast[:mis=K,div=D,max_rtt_ms=M,min_rtts=R][:INNER]: short MIs at the start on short paths,
the inner controller's decisions unchanged."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from policy.base import Controller, ControllerConfig, make_controller, mi_length, register
from policy.fast import FastConfig
from policy.signals import SignalVector
from tests.unit import test_judge  # noqa: F401  (registers test-climb)
from tests.unit.test_start import _path, _signals


def test_short_mis_only_at_the_start_of_a_short_path() -> None:
    f = FastConfig()  # 8 MIs of mi/4 at <= 1 ms, 50 round trips per short MI
    assert [f.length(k, 0.07, 1.0) for k in (1, 8, 9, 30)] == [0.25, 0.25, 1.0, 1.0]
    assert f.length(1, 1.0, 1.0) == 0.25 and f.length(1, 1.6, 1.0) == 1.0  # past max_rtt_ms
    five = FastConfig.parse("max_rtt_ms=5")  # round 41's F41
    assert five.length(1, 5.0, 1.0) == 0.25  # 50 round trips of 5 ms in 0.25 s: just
    assert five.length(1, 5.01, 1.0) == 1.0
    assert f.length(1, None, 1.0) == 1.0  # RTT unknown: the configured MI
    assert f.length(1, 40.0, 1.0) == 1.0  # fig1's and fig3's paths are never touched
    g = FastConfig.parse("mis=3,div=10,max_rtt_ms=20,min_rtts=10")
    assert g.length(3, 10.0, 1.0) == pytest.approx(0.1) and g.length(4, 10.0, 1.0) == 1.0
    assert g.length(1, 11.0, 1.0) == 1.0  # 0.1 s would hold fewer than 10 round trips
    assert FastConfig.parse("mis=0").length(1, 0.01, 1.0) == 1.0  # off
    with pytest.raises(ValueError, match="div >= 1"):
        FastConfig.parse("div=0")
    with pytest.raises(ValueError, match="fast: bad argument"):
        FastConfig.parse("nope=1")


def test_short_mis_are_a_prefix_of_the_transfer() -> None:
    """A path that starts above the bound stays at the configured MI when its minimum RTT
    later reads lower (gen-v7-v03, 1.6 ms: the kernel's minimum drops to the 1.000 ms of a
    timestamp-tick sample after the first loss)."""
    c = make_controller("fast:max_rtt_ms=1:fixed:2", ControllerConfig())
    assert [mi_length(c, k, r, 1.0) for k, r in ((1, 1.6), (2, 1.0), (3, 1.0))] == [1.0] * 3
    lan = make_controller("fast:fixed:2", ControllerConfig())
    got = [mi_length(lan, k, 0.05, 1.0) for k in range(1, 12)]
    assert got == [0.25] * 8 + [1.0] * 3
    late = make_controller("fast:fixed:2", ControllerConfig())  # RTT unknown at MI 1
    assert [mi_length(late, k, r, 1.0) for k, r in ((1, None), (2, 0.05))] == [1.0, 1.0]


def test_decisions_are_the_inner_controllers() -> None:
    assert _path("fast:test-climb", 5) == _path("test-climb", 5) == [1, 6, 11, 16, 21]
    c = make_controller("fast:mis=2:fixed:3", ControllerConfig())
    assert c.initial() == 3 and mi_length(c, 1, 0.1, 1.0) == 0.25
    assert mi_length(c, 3, 0.1, 1.0) == 1.0


def test_the_engine_hears_it_through_other_wrappers_and_clips_it() -> None:
    outer = make_controller("start:n=4,mis=2:fast:test-climb", ControllerConfig())
    assert mi_length(outer, 1, 0.1, 1.0) == 0.25 and mi_length(outer, 9, 0.1, 1.0) == 1.0
    assert mi_length(make_controller("fixed:2"), 1, 0.1, 1.0) == 1.0  # no wish: the MI
    assert mi_length(make_controller("start:n=4:test-climb"), 1, 0.1, 1.0) == 1.0

    class Greedy:
        def mi_length(self, k: int, rtt: float | None, mi: float) -> float:
            return 0.0 if k == 1 else 5.0

    assert mi_length(Greedy(), 1, 0.1, 1.0) == 1.0 / 64  # never an MI without data
    assert mi_length(Greedy(), 2, 0.1, 1.0) == 1.0  # never longer than the MI


def test_grow_ends_the_fast_phase_at_the_first_retreat() -> None:
    """grow=1 (F41c): short MIs while the inner controller adds or holds; its first retreat
    is taken, and the MI after the one it runs in is the configured length."""
    c = make_controller("fast:grow=1:schedule:2,7,12,11,12", ControllerConfig())
    got = [mi_length(c, 1, 0.05, 1.0)]  # MI 1: sized before anything is decided
    for k, n in enumerate([2, 7, 12, 11], start=2):
        got.append(mi_length(c, k, 0.05, 1.0))  # MI k, sized before MI k-1's decision
        assert c.decide(_signals(k, n)) == [7, 12, 11, 12][k - 2]
    # MI 3's decision is the retreat to 11: it runs in MI 4 (short, sized before it), and
    # MI 5 on are the configured length
    assert got == [0.25, 0.25, 0.25, 0.25, 1.0]
    assert mi_length(c, 6, 0.05, 1.0) == 1.0
    plain = make_controller("fast:schedule:2,7,12,11,12", ControllerConfig())
    for k, n in enumerate([2, 7, 12, 11], start=2):
        plain.decide(_signals(k, n))
    assert mi_length(plain, 6, 0.05, 1.0) == 0.25  # without grow the phase runs its 8 MIs
    with pytest.raises(ValueError, match="grow 0, 1 or 2"):
        FastConfig.parse("grow=3")


class LossStep:
    """+5 streams after an MI without loss, -5 after one with loss (has a ``target``)."""

    name = "test-lossstep"

    def __init__(self, args: str, config: ControllerConfig) -> None:
        self.config, self.target = config, 2
        self.seen: list[float] = []
        """The MI lengths it was shown."""

    def initial(self) -> int:
        return self.target

    def decide(self, signals: SignalVector) -> int:
        self.seen.append(signals.mi_s)
        self.target = self.config.clip(self.target + (-5 if signals.loss_rate else 5))
        return self.target


register("test-lossstep", LossStep)


def clocked(
    spec: str,
    loss: dict[int, float] | Callable[[int, int | None], float],
    rtt: float = 0.05,
    mis: int = 10,
    most: int = 64,
) -> tuple[list[int], list[float], Controller]:
    """``spec`` run as the engine runs it: MI k+1's length is asked as MI k ends, before MI
    k's decision (the decider thread); MI k's signal vector is measured over its length, with
    ``loss[n]`` at n streams (or ``loss(n, the count of the MI before)``). Returns the count
    and the length of each MI, and the controller."""
    c = make_controller(spec, ControllerConfig(max_streams=most))
    lost = loss if callable(loss) else (lambda n, _before: loss.get(n, 0.0))
    n, out, lengths = c.initial(), [], []
    mi = mi_length(c, 1, rtt, 1.0)
    for k in range(1, mis + 1):
        lengths.append(mi)
        out.append(n)
        following = mi_length(c, k + 1, rtt, 1.0)
        n = c.decide(
            SignalVector(
                t=sum(lengths),
                mi_s=mi,
                streams=n,
                throughput_bps=n * 1e8,
                goodput_bps=n * 1e8,
                loss_rate=lost(n, out[-2] if len(out) > 1 else None),
                rtt_ms=rtt,
                min_rtt_ms=rtt,
                rtt_gradient=0.0,
                rtt_ratio=1.0,
            )
        )
        mi = following
    return out, lengths, c


def test_grow_2_takes_no_retreat_on_a_short_mi() -> None:
    """grow=2 (F42): the ramp on short MIs as asked; a retreat asked on a short MI is not
    taken and ends the phase; the MI sized before that decision is short too, so a retreat
    asked on it is not taken either; on MIs of the configured length retreats are taken."""
    spec = "fast:grow=2:test-ramp-walk"  # 2, 7, 12, then one stream fewer per MI
    got, lengths, c = clocked(spec, {})
    assert c.phase.held == 2  # type: ignore[attr-defined]
    assert lengths == [0.25] * 4 + [1.0] * 6
    # 12 -> 11 asked on MI 3 (short): held, the phase ends; MI 4 (short, sized before the
    # decision) asks 11 again: held; MI 5 (1 s) on: one stream fewer per MI
    assert got == [2, 7, 12, 12, 12, 11, 10, 9, 8, 7]
    grow1, lengths1, _ = clocked("fast:grow=1:test-ramp-walk", {})
    assert grow1 == [2, 7, 12, 11, 10, 9, 8, 7, 6, 5] and lengths1 == lengths
    plain, lengths0, _ = clocked("fast:test-ramp-walk", {})
    assert plain == grow1 and lengths0 == [0.25] * 8 + [1.0] * 2
    # never short (a 40-ms path): grow=2 is the inner controller, MI for MI
    assert clocked(spec, {}, rtt=40.0)[:2] == clocked("test-ramp-walk", {}, rtt=40.0)[:2]


def test_grow_2_sets_the_inner_target_back_and_it_goes_on_from_there() -> None:
    """A held retreat sets the inner controller's target back, so its next step starts from
    the held count."""
    held, lengths, c = clocked("fast:grow=2:test-lossstep", {12: 0.05}, mis=6)
    # 2, 7, 12 on short MIs; 12 lost on MI 3 and MI 4 (short): both -5 held; MI 5 (1 s): taken
    assert lengths == [0.25] * 4 + [1.0] * 2 and held == [2, 7, 12, 12, 12, 7]
    # without the hold, the -5 on MI 3 runs MI 4 at 7, which adds again (7 -> 12 -> 7 ...)
    assert clocked("fast:grow=1:test-lossstep", {12: 0.05}, mis=6)[0] == [2, 7, 12, 7, 12, 7]
    assert c.phase.held == 2  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="has no target"):
        make_controller("fast:grow=2:fixed:2", ControllerConfig())


def test_ramp_owns_the_short_mis_and_hands_the_inner_controller_its_count() -> None:
    """ramp=5 (F43): +5 streams after each short MI whose utility beats every earlier one;
    at the first that does not, back to the best count, and the phase ends. The inner
    controller is shown no short MI and decides from the ramp's count."""
    got, lengths, c = clocked("fast:ramp=5:test-lossstep", {12: 0.2}, mis=7)
    # MI 3 at 12 loses (utility below 7's): back to 7; MI 4 (short, sized before): held
    assert lengths == [0.25] * 4 + [1.0] * 3 and got == [2, 7, 12, 7, 7, 12, 7]
    assert c.inner.seen == [1.0] * 3  # type: ignore[attr-defined]
    assert c.phase.best == (pytest.approx(7 * 1e8 / 1.02**7 / 1e6, rel=0.05), 7)  # type: ignore[attr-defined]
    up, lengths, c = clocked("fast:ramp=5:test-lossstep", {}, mis=10)  # never falls
    assert up == [2, 7, 12, 17, 22, 27, 32, 37, 42, 47] and lengths == [0.25] * 8 + [1.0] * 2
    assert c.inner.seen == [1.0] * 2  # type: ignore[attr-defined]
    capped, lengths, _ = clocked("fast:ramp=5:test-lossstep", {}, mis=6, most=12)
    assert capped == [2, 7, 12, 12, 12, 12] and lengths == [0.25] * 4 + [1.0] * 2
    # a 40-ms path: no short MI, the inner controller decides every MI
    far, lengths, c = clocked("fast:ramp=5:test-lossstep", {12: 0.2}, rtt=40.0, mis=4)
    assert far == [2, 7, 12, 7] and c.inner.seen == [1.0] * 4  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="has no target"):
        make_controller("fast:ramp=5:fixed:2", ControllerConfig())
    with pytest.raises(ValueError, match="ramp >= 0"):
        FastConfig.parse("ramp=-1")


def test_fine_searches_below_the_count_that_ended_the_climb() -> None:
    """ramp=5,fine=1 (F44): the climb's first short MI that is not the best (7 here) starts a
    search from the best count (2) in steps of one, each judged as the climb's were; it ends
    at the first that is not the best (back to the best) or below the count that failed."""
    lossy = {n: 0.2 for n in range(5, 20)}
    got, lengths, c = clocked("fast:ramp=5,fine=1:test-lossstep", lossy, mis=9)
    # 7 loses to 2: search 3, 4 (both beat); 5 loses: back to 4; MI 6 (sized before): held;
    # the inner controller from 4 on 1-s MIs (no loss at 4: +5; loss at 9: -5)
    assert got == [2, 7, 3, 4, 5, 4, 4, 9, 4]
    assert lengths == [0.25] * 6 + [1.0] * 3
    assert c.inner.seen == [1.0] * 3  # type: ignore[attr-defined]
    # the search reaches the failed count from below: it stops one short of it
    got, lengths, _ = clocked("fast:ramp=5,fine=1:test-lossstep", {7: 0.2}, mis=8)
    assert got[:7] == [2, 7, 3, 4, 5, 6, 6] and lengths == [0.25] * 7 + [1.0]
    # a climb that never misses never searches: F43's ramp
    assert (
        clocked("fast:ramp=5,fine=1:test-lossstep", {}, mis=10)[0]
        == clocked("fast:ramp=5:test-lossstep", {}, mis=10)[0]
    )
    # where best + fine reaches the failed count there is nothing to search: F43's return
    f43 = clocked("fast:ramp=5:test-lossstep", {12: 0.2}, mis=7)[:2]
    assert clocked("fast:ramp=5,fine=5:test-lossstep", {12: 0.2}, mis=7)[:2] == f43
    with pytest.raises(ValueError, match="only with ramp"):
        FastConfig.parse("fine=1")


def test_settle_judges_a_count_on_its_second_short_mi() -> None:
    """settle=1 (F45): a short MI at a count other than the one before it carries that count's
    queue, so it is not judged; the count runs one more short MI and that one is. Here every
    MI after a change loses (a join burst going up, a queue draining going down) and 5 or
    more streams lose for good: F44 takes every drain for a miss and goes back to 2; F45
    searches 3 and 4 on their second MIs and hands the policy 4."""

    def lossy(n: int, before: int | None) -> float:
        return 0.2 if n >= 5 or (before is not None and before != n) else 0.0

    f44, lengths44, _ = clocked("fast:ramp=5,fine=1:test-lossstep", lossy, mis=8)
    assert f44[:5] == [2, 7, 3, 2, 2] and lengths44 == [0.25] * 4 + [1.0] * 4
    spec = "fast:mis=12,ramp=5,fine=1,settle=1:test-lossstep"
    got, lengths, c = clocked(spec, lossy, mis=12)
    # 2 judged; 7 twice (the second loses: its own loss); 3 twice, 4 twice (both beat); 5
    # twice (loses): back to 4; one more short MI (sized before) at 4; the policy from 4 on
    # 1-s MIs
    assert got[:11] == [2, 7, 7, 3, 3, 4, 4, 5, 5, 4, 4]
    assert lengths == [0.25] * 10 + [1.0] * 2
    assert c.phase.best[1] == 4 and c.inner.seen == [1.0] * 2  # type: ignore[attr-defined]
    # with the default 8 short MIs the phase ends on 5's first MI: the policy decides from 5
    # on 1-s MIs (as F43 hands over the count after its last judged one)
    got8 = clocked("fast:ramp=5,fine=1,settle=1:test-lossstep", lossy, mis=9)[0]
    assert got8[:9] == [2, 7, 7, 3, 3, 4, 4, 5, 5]
    # without a change there is nothing to settle: the first MI is judged, and a ramp that
    # never misses runs each count twice
    up = clocked("fast:ramp=5,settle=1:test-lossstep", {}, mis=10)[0]
    assert up == [2, 7, 7, 12, 12, 17, 17, 22, 22, 27]
    with pytest.raises(ValueError, match="settle 0 or 1"):
        FastConfig.parse("settle=1")


def test_the_ramp_moves_a_rule_inside_it_too() -> None:
    """A rule between ``fast`` and its policy (``warmup``) counts from the ramp's count, so
    the policy's first own add is judged as an add from there, not from the initial count."""
    got, _, c = clocked("fast:ramp=5:warmup:test-lossstep", {12: 0.2}, mis=4)
    assert got == [2, 7, 12, 7]  # the ramp's, back to 7; the policy has not decided yet
    assert c.inner.rule.current == c.target == 7  # type: ignore[attr-defined]


def test_the_ramp_moves_the_shipped_bundles_own_rules_too(tmp_path) -> None:
    """A bundle whose meta names the ramp, and ``fast:ramp=5`` around a bundle: the bundle's
    warm-up counts from the ramp's count (``PPOController._sync_rules``). Here the warm-up
    defers every add for 5 s; had it kept the initial 2 as its count, the policy's first
    decision after the ramp would have been taken as an add from 2 and sent back to 2."""
    from pathlib import Path

    from policy.warmup import WarmupConfig
    from train.ship import ship_ensemble

    cand = Path(__file__).parents[2] / "policy/weights/candidates"
    members = [cand / "hold-s2.pt", cand / "onoff-s4.pt"]
    slow = WarmupConfig(rtts=100_000)  # 100,000 round trips of 0.05 ms: 5 s
    inside, plain = tmp_path / "ramp.pt", tmp_path / "plain.pt"
    ship_ensemble(members, inside, note="t", warmup=slow, fast=FastConfig(ramp=5))
    ship_ensemble(members, plain, note="t", warmup=slow)
    for spec in (f"ppo:{inside}", f"fast:ramp=5:ppo:{plain}"):
        got, lengths, _ = clocked(spec, {n: 0.2 for n in range(17, 65)}, mis=7)
        assert got[:6] == [2, 7, 12, 17, 12, 12] and lengths[5] == 1.0, spec
        assert got[6] >= 7, (spec, got)  # the policy's first decision, from 12
