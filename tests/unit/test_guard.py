"""guard[:INNER]: probes before letting the inner policy sit at 1-2 streams after loss."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from policy.base import Controller, ControllerConfig, make_controller, register
from policy.guard import Guard
from policy.signals import SignalVector


class Retreat:
    """An inner policy that always asks for one stream (the issue's failure), with a target."""

    name = "retreat"

    def __init__(self, args: str, config: ControllerConfig) -> None:
        self.target = 8

    def initial(self) -> int:
        return self.target

    def decide(self, signals: SignalVector) -> int:
        self.target = 1
        return 1


class NoTarget:
    name = "notarget"

    def __init__(self, args: str, config: ControllerConfig) -> None:
        pass

    def initial(self) -> int:
        return 1

    def decide(self, signals: SignalVector) -> int:
        return 1


class Dip(Retreat):
    """Retreats to one stream for two MIs out of every ten, then climbs back to 8 by itself."""

    name = "dip"

    def __init__(self, args: str, config: ControllerConfig) -> None:
        super().__init__(args, config)
        self.t = 0

    def decide(self, signals: SignalVector) -> int:
        self.t += 1
        self.target = 1 if self.t % 10 in (1, 2) else 8
        return self.target


register("test-retreat", Retreat)
register("test-dip", Dip)
register("test-notarget", NoTarget)


def _run(
    world: Callable[[int], tuple[float, float]],
    mis: int,
    change: Callable[[Guard], Callable[[int], tuple[float, float]]] | None = None,
    spec: str = "guard:test-retreat",
    rtt: float = 30.0,
    cc: str | None = None,
) -> tuple[Guard, list[int]]:
    """Drive a guard around Retreat in a world that maps streams -> (Mbit/s, loss); with
    ``change``, the world becomes ``change(guard)`` from the first MI with more than 1 stream
    (the guard's first probe)."""
    g = make_controller(spec, ControllerConfig())
    assert isinstance(g, Guard)
    n, path = g.initial(), []
    for t in range(mis):
        if change is not None and n > 1 and t > 0:
            world, change = change(g), None
        mbit, loss = world(n)
        s = SignalVector(
            t=t + 1.0, mi_s=1.0, streams=n, throughput_bps=mbit * 1e6, goodput_bps=mbit * 1e6,
            loss_rate=loss, rtt_ms=rtt, min_rtt_ms=rtt, rtt_gradient=0.0, rtt_ratio=1.0, cc=cc,
        )  # fmt: skip
        n = g.decide(s)
        path.append(n)
    return g, path


def test_guard_climbs_where_loss_is_not_ours() -> None:
    # Loss held at 5 % by others; each stream gets 2.5 Mbit/s: utility grows to ~15 streams.
    g, path = _run(lambda n: (2.5 * n, 0.05), 40)
    assert max(path) == 16  # 1 -> 6 -> 11 -> 16, every step paid
    assert sum(path) / len(path) > 5  # the inner alone would sit at 1
    assert g.probes >= 1


def test_guard_backs_off_where_one_stream_is_right() -> None:
    # More streams buy nothing: every probe loses, probes get rarer (cooldown doubles).
    g, path = _run(lambda n: (100.0, 0.01), 60)
    assert path.count(6) <= 2 * g.probes and g.probes <= 4
    assert sum(path) / len(path) < 2.0


def test_guard_is_not_fooled_by_a_competitor_leaving_during_its_probe() -> None:
    # One stream is right throughout, but a competitor leaves just as the first probe starts:
    # the probe's utility beats the low level measured before it (46 -> 87), not the one
    # measured after it (96). A one-sided comparison would climb and hold more streams.
    g, path = _run(lambda n: (50.0, 0.005), 40, change=lambda g: lambda n: (100.0, 0.002))
    assert g.probes >= 1 and 11 not in path
    assert path.count(6) <= 2 * g.probes and sum(path) / len(path) < 2.5


def test_guard_never_probes_without_loss() -> None:
    g, path = _run(lambda n: (100.0, 0.0), 30)
    assert g.probes == 0 and path[1:] == [1] * 29


def test_guard_rejects_inner_without_target_and_nesting() -> None:
    with pytest.raises(ValueError, match="no target"):
        make_controller("guard:test-notarget", ControllerConfig())
    with pytest.raises(ValueError, match="another guard"):
        make_controller("guard:guard", ControllerConfig())
    with pytest.raises(ValueError, match="unknown policy"):
        make_controller("guard:nope", ControllerConfig())


def test_guard_wraps_the_shipped_ppo_by_default() -> None:
    g = make_controller("guard", ControllerConfig())
    assert isinstance(g, Guard) and g.inner.name == "ppo" and g.initial() == 2


def test_guard_options_in_the_spec() -> None:
    g = make_controller("guard:hold=20,hold_growth=2,margin=0.1:test-retreat", ControllerConfig())
    assert isinstance(g, Guard) and g.inner.name == "retreat"
    assert (g.gc.hold, g.gc.hold_growth, g.gc.margin, g.gc.step) == (20, 2.0, 0.1, 5)
    g = make_controller("guard:hold=5", ControllerConfig())
    assert isinstance(g, Guard) and g.inner.name == "ppo" and g.gc.hold == 5
    with pytest.raises(ValueError, match="bad argument 'nope=1'"):
        make_controller("guard:nope=1:ppo", ControllerConfig())
    with pytest.raises(ValueError, match="hold needs a int, got 'x'"):
        make_controller("guard:hold=x:ppo", ControllerConfig())


def test_guard_hold_grows_with_consecutive_wins() -> None:
    # Loss held by others, more streams pay: with a growing hold the guard re-probes less
    # often and spends more MIs at the level it found.
    fixed, p1 = _run(lambda n: (2.5 * n, 0.05), 120)
    grown, p2 = _run(lambda n: (2.5 * n, 0.05), 120, spec="guard:hold_growth=2:test-retreat")
    assert grown.probes < fixed.probes
    assert sum(p2) > sum(p1)


def test_guard_climb_margin_keeps_a_level_no_worse_than_the_one_below() -> None:
    # Loss held at 5 % by others; 11 streams score 2 % below 6 (noise-sized), 16 far below.
    def u(n: int) -> float:
        return {6: 20.0, 11: 19.6, 16: 5.0}.get(n, 1.0)

    def world(n: int) -> tuple[float, float]:  # throughput giving utility u(n) at 5 % loss
        return u(n) / (1 / 1.02**n - 0.5), 0.05

    strict, p1 = _run(world, 14)
    lenient, p2 = _run(world, 14, spec="guard:climb_margin=-0.05:test-retreat")
    assert (strict.best, lenient.best) == (6, 11)  # the levels handed back
    assert 16 not in p1 and 16 in p2  # the strict guard stops climbing at 11


def test_guard_target_is_the_inner_controllers() -> None:
    g = make_controller("guard:test-retreat", ControllerConfig())
    assert isinstance(g, Guard)
    assert g.target == 8
    g.target = 5
    assert g.inner.target == 5  # type: ignore[attr-defined]


def test_a_list_of_specs_keeps_each_specs_own_arguments() -> None:
    from policy.base import split_specs

    assert split_specs("gd,ppo") == ("gd", "ppo")
    assert split_specs("guard:loss_min=0.005,cooldown=32,gd") == (
        "guard:loss_min=0.005,cooldown=32",
        "gd",
    )
    assert split_specs("guard:hold=5,low=1:ppo:/x/a=b.pt, fixed:4,") == (
        "guard:hold=5,low=1:ppo:/x/a=b.pt",
        "fixed:4",
    )
    assert split_specs("ppo:/x/a=b.pt,gd:probe=4,settle=2") == (
        "ppo:/x/a=b.pt",
        "gd:probe=4,settle=2",
    )
    assert split_specs("schedule:2,8,1,16,gd") == ("schedule:2,8,1,16", "gd")
    assert split_specs("nope,gd") == ("nope", "gd")  # the first piece is kept, and refused later


def test_guard_elastic_skips_the_probe_when_the_retreat_cured_the_loss() -> None:
    # The loss is the transfer's own (several streams overflow the queue): at one stream it is
    # gone. The plain guard probes anyway and buys the loss back; the elastic one does not.
    def world(n: int) -> tuple[float, float]:
        return (100.0, 0.03 if n > 2 else 0.0)

    plain, p1 = _run(world, 30)
    elastic, p2 = _run(world, 30, spec="guard:elastic=0.25:test-retreat")
    assert plain.probes >= 1 and 6 in p1
    assert elastic.probes == 0 and elastic.cured == 1 and max(p2[1:]) == 1


def test_guard_elastic_still_probes_loss_that_others_cause() -> None:
    g, path = _run(lambda n: (2.5 * n, 0.05), 40, spec="guard:elastic=0.25:test-retreat")
    assert g.cured == 0 and max(path) == 16


def test_guard_patience_leaves_a_policy_that_climbs_back_by_itself() -> None:
    # The inner dips to 1 stream for 2 MIs and recovers; loss is others' (probing would pay).
    eager, p1 = _run(lambda n: (2.5 * n, 0.05), 40, spec="guard:test-dip")
    patient, p2 = _run(lambda n: (2.5 * n, 0.05), 40, spec="guard:patience=3:test-dip")
    assert eager.probes >= 1 and patient.probes == 0
    assert p2 == [1 if t % 10 in (1, 2) else 8 for t in range(1, 41)]
    # A policy that stays down is still probed, after the wait.
    g, path = _run(lambda n: (2.5 * n, 0.05), 40, spec="guard:patience=3:test-retreat")
    assert g.probes >= 1 and path[:3] == [1, 1, 1] and max(path) == 16


def test_guard_elastic_reads_noisy_loss_by_its_mean() -> None:
    # Others' loss beside BBR reads 0 % one MI and 8 % the next: the retreat cures nothing.
    # Lowest-at-low against highest-before (round 16's first rule) called that cured and
    # never probed; means see 4 % on both sides and probe (more streams pay here).
    ticks = iter(range(10**6))

    def world(n: int) -> tuple[float, float]:
        return (2.5 * n, 0.08 * (next(ticks) % 2))

    g, path = _run(world, 40, spec="guard:patience=3,elastic=0.25:test-retreat")
    assert g.cured == 0 and g.probes >= 1 and max(path) > 6


class Stay(Retreat):
    """Always asks for the same stream count (``test-stay:3``), whatever the loss."""

    name = "stay"

    def __init__(self, args: str, config: ControllerConfig) -> None:
        self.target = self.n = int(args or 3)

    def decide(self, signals: SignalVector) -> int:
        self.target = self.n
        return self.n


register("test-stay", Stay)


def test_guard_shed_finds_that_the_loss_was_its_own() -> None:
    # Our streams on BBR in a shallow queue: 12 % loss at 2-3 streams, 1 % at one, the same
    # throughput. An inner policy that stays at 3 reads the loss as others'; shed tests 1
    # stream, wins, and keeps the inner at or below it (the hold doubling after each win).
    def world(n: int) -> tuple[float, float]:
        return (100.0, 0.12 if n >= 2 else 0.01)

    plain, p1 = _run(world, 60, spec="guard:test-stay:3")
    shed, p2 = _run(world, 60, spec="guard:shed=0.03:test-stay:3")
    assert plain.sheds == 0 and set(p1) == {3}
    assert shed.sheds >= 2 and shed.shed_wins == shed.sheds
    assert p2.count(1) > 40 and shed.probes == 0  # the ceiling also blocks the up-probe


def test_guard_shed_hands_back_where_the_loss_is_shared() -> None:
    # Others hold 5 % loss; each stream gets 2.5 Mbit/s: fewer streams only cost throughput.
    # Every shed loses, and the cooldown doubles (8, 16, 32 MIs): few MIs below 4.
    g, path = _run(lambda n: (2.5 * n, 0.05), 80, spec="guard:shed=0.03:test-stay:4")
    assert g.sheds >= 1 and g.shed_wins == 0
    assert path.count(2) == 2 * g.sheds and g.sheds <= 4
    assert path.count(4) >= 80 - 2 * g.sheds


def test_guard_shed_needs_the_loss_and_a_level_to_halve() -> None:
    g, _ = _run(lambda n: (100.0, 0.01), 30, spec="guard:shed=0.03:test-stay:3")
    assert g.sheds == 0  # 1 % is below the threshold
    g, _ = _run(lambda n: (100.0, 0.2), 30, spec="guard:shed=0.03,low=0:test-stay:1")
    assert g.sheds == 0  # one stream cannot be halved


def test_guard_cc_and_rtt_gates_leave_other_paths_to_the_inner_policy() -> None:
    """``cc=bbr,rtt_above_ms=62.5``: the guard acts only where the shipped warm-up does."""
    spec = "guard:cc=bbr,rtt_above_ms=62.5:test-retreat"
    world = lambda n: (2.5 * n, 0.05)  # noqa: E731 (climbing would pay everywhere)
    for rtt, cc in ((30.0, "bbr"), (200.0, "cubic"), (200.0, None), (62.5, "bbr")):
        g, path = _run(world, 40, spec=spec, rtt=rtt, cc=cc)
        assert g.probes == 0 and path[1:] == [1] * 39, (rtt, cc)
    g, path = _run(world, 40, spec=spec, rtt=200.0, cc="bbr")
    assert g.probes >= 1 and max(path) == 16


def test_guard_settle_rtts_waits_for_the_start_up() -> None:
    """``settle_rtts=16`` at 200 ms: no trigger in the first 3.2 s, and a raised level is read
    only in an MI starting 3.2 s after the rise (the 5th at it), a low level after 2 MIs."""
    g, path = _run(lambda n: (2.5 * n, 0.05), 40, spec="guard:settle_rtts=16:test-retreat",
                   rtt=200.0)  # fmt: skip
    first = path.index(6)
    assert first == 5  # triggers at t = 4 s (>= 3.2 s), holds 1 stream 2 MIs, then probes
    assert path[first : first + 6] == [6] * 5 + [1]  # B read at its 5th MI, then A again
    assert max(path) == 16 and g.probes >= 1
    # at 30 ms the same option adds nothing to the guard's own settle of 2 MIs
    assert (
        _run(lambda n: (2.5 * n, 0.05), 40, spec="guard:settle_rtts=16:test-retreat")[1]
        == (_run(lambda n: (2.5 * n, 0.05), 40)[1])
    )


_CAND = Path(__file__).parents[2] / "policy/weights/candidates"
ROUND13 = f"ensemble:{_CAND / 'hold-s2.pt'}+{_CAND / 'onoff-s4.pt'}"
"""Round 13's bundle without the warm-up the shipped file carried from round 26 (ROUND26)."""
ROUND26 = f"warmup:cc=bbr:{ROUND13}"
"""The policy shipped in rounds 26-35 (round 13's bundle with ``cc=bbr`` inside the file)."""
CANDIDATE27 = f"guard:cc=bbr,rtt_above_ms=62.5,settle_rtts=16,hold_growth=2:{ROUND26}"
"""Round 27's candidate: the guard where round 26's warm-up acts, reading after start-up."""


def world_path(
    spec: str,
    rtt: float,
    cc: str,
    mis: int = 40,
    loss: float = 0.01,
    per_stream: float = 20.0,
    top: float = 1000.0,
) -> tuple[Controller, list[int]]:
    """The controller ``spec`` in a world of ``per_stream`` Mbit/s per stream (a per-stream
    cap) up to ``top`` Mbit/s, with ``loss`` that others cause (also ``test_warmup``'s and
    ``test_ship``'s)."""
    g = make_controller(spec, ControllerConfig(max_streams=64))
    n, path = g.initial(), []
    for t in range(mis):
        mbit = min(per_stream * n, top)
        n = g.decide(
            SignalVector(
                t=t + 1.0,
                mi_s=1.0,
                streams=n,
                throughput_bps=mbit * 1e6,
                goodput_bps=mbit * 1e6,
                loss_rate=loss,
                rtt_ms=rtt,
                min_rtt_ms=rtt,
                rtt_gradient=0.0,
                rtt_ratio=1.0,
                cc=cc,
            )  # fmt: skip
        )
        path.append(n)
    return g, path


def test_round27_candidate_is_round26s_policy_where_the_warm_up_does_not_act() -> None:
    """Around round 26's bundle, the gated guard decides as the bundle does MI for MI on
    cubic streams and on short paths (every gate other than our BBR above 62.5 ms), and on a
    long BBR path it probes, reading each raised level after the start-up."""
    for rtt, cc in ((150.0, "cubic"), (40.0, "bbr")):
        g, path = world_path(CANDIDATE27, rtt, cc)
        assert isinstance(g, Guard)
        assert g.probes == 0 and path == world_path(ROUND26, rtt, cc)[1], (rtt, cc)
    g, path = world_path(CANDIDATE27, 150.0, "bbr")
    assert isinstance(g, Guard)
    alone = world_path(ROUND26, 150.0, "bbr")[1]
    assert g.probes >= 1 and sum(path) > sum(alone), (path, alone)
