"""warmup[:INNER]: no add while the youngest streams are within their first round trips."""

from __future__ import annotations

import pytest

from policy.base import ControllerConfig, make_controller, register
from policy.signals import SignalVector
from policy.warmup import Warmup, WarmupConfig
from tests.unit import test_guard  # noqa: F401  (registers test-notarget)
from tests.unit.test_guard import ROUND13, ROUND26, world_path
from tests.unit.test_judge import Climb


class Descend(Climb):
    """Starts at 20 streams and retreats 5 every MI."""

    def __init__(self, args: str, config: ControllerConfig) -> None:
        super().__init__(args, config)
        self.target = 20

    def decide(self, signals: SignalVector) -> int:
        self.target = self.config.clip(self.target - 5)
        return self.target


register("test-descend", Descend)


def _sig(t: float, n: int, rtt_ms: float, cc: str | None = "cubic", mbit: float = 100.0):
    return SignalVector(
        t=t, mi_s=1.0, streams=n, throughput_bps=mbit * 1e6, goodput_bps=mbit * 1e6,
        loss_rate=0.0, rtt_ms=rtt_ms, min_rtt_ms=rtt_ms, rtt_gradient=0.0, rtt_ratio=1.0, cc=cc,
    )  # fmt: skip


def _path(spec: str, rtt_ms: float, mis: int, cc: str | None = "cubic") -> tuple[Warmup, list[int]]:
    w = make_controller(spec, ControllerConfig(max_streams=64))
    n, path = w.initial(), []
    for i in range(mis):
        n = w.decide(_sig(i + 1.0, n, rtt_ms, cc))
        path.append(n)
    return w, path  # type: ignore[return-value]


def test_short_paths_are_left_alone() -> None:
    # 16 round trips of 40 ms (fig1's path) fit in one 1-s MI: the +5 ramp is not slowed
    w, path = _path("warmup:test-climb", 40.0, 5)
    assert path == [6, 11, 16, 21, 26] and w.deferred == 0
    # 60 ms (the paper's capped path): 0.96 s, still inside the first MI
    assert _path("warmup:test-climb", 60.0, 3)[1] == [6, 11, 16]


def test_long_paths_wait_for_the_youngest_streams() -> None:
    # 150 ms: 16 round trips are 2.4 s, so each add waits until 2.4 s after the last one
    w, path = _path("warmup:test-climb", 150.0, 9)
    # t=1, 2: the first streams are 1-2 s old (defer); t=3: add; t=4, 5: defer; t=6: add ...
    assert path == [1, 1, 6, 6, 6, 11, 11, 11, 16]
    assert w.deferred == 6
    # the inner controller is held at the deferred count, so it climbs from there
    assert w.inner.target == 16  # type: ignore[attr-defined]
    # fewer round trips: 8 x 150 ms = 1.2 s, so every other MI
    assert _path("warmup:rtts=8:test-climb", 150.0, 5)[1] == [1, 6, 6, 11, 11]


def test_retreats_pass_at_once() -> None:
    w, path = _path("warmup:test-descend", 200.0, 4)
    assert path == [15, 10, 5, 1] and w.deferred == 0


def test_cc_bbr_applies_only_to_bbr_streams() -> None:
    assert _path("warmup:cc=bbr:test-climb", 150.0, 3, cc="cubic")[1] == [6, 11, 16]
    assert _path("warmup:cc=bbr:test-climb", 150.0, 3, cc="bbr")[1] == [1, 1, 6]
    # an unknown RTT or cc does not hold anything back
    assert _path("warmup:cc=bbr:test-climb", 150.0, 2, cc=None)[1] == [6, 11]


def test_around_round13s_bundle_on_fig1s_path_nothing_changes() -> None:
    """Round 13's bundle on a 40-ms path whose throughput grows with the count: the same
    decisions with and without the warm-up, even with any cc (the rule cannot cost fig1's
    ramp), and round 26's (``cc=bbr``) decides as they do."""
    paths = [
        world_path(spec, 40.0, "cubic", 12, loss=0.0, per_stream=50.0, top=950.0)[1]
        for spec in (ROUND13, f"warmup:{ROUND13}", ROUND26)
    ]
    assert paths[0] == paths[1] == paths[2]
    assert max(paths[0]) >= 17  # it ramped: the comparison covers adds


def test_cc_bbr_is_inert_while_our_streams_run_cubic() -> None:
    """`warmup:cc=bbr` around round 13's bundle on a 150-ms path with cubic streams decides
    as the bundle does, MI for MI: on such paths (every hand-written scenario, fig1, fig3) it
    is round 13's policy, and with BBR streams on the same path it holds the first adds back."""
    paths = {
        (spec, cc): world_path(spec, 150.0, cc, 12, loss=0.0, per_stream=50.0, top=950.0)[1]
        for spec, cc in ((ROUND13, "cubic"), (ROUND26, "cubic"), (ROUND26, "bbr"))
    }
    assert paths[ROUND26, "cubic"] == paths[ROUND13, "cubic"]
    assert paths[ROUND26, "bbr"][:2] == [2, 2] != paths[ROUND13, "cubic"][:2]


def test_options_and_errors() -> None:
    assert WarmupConfig.parse("rtts=8,cc=bbr") == WarmupConfig(rtts=8.0, cc="bbr")
    with pytest.raises(ValueError, match="rtts"):
        WarmupConfig(rtts=-1)
    with pytest.raises(ValueError):
        make_controller("warmup:nope=1", ControllerConfig())
    with pytest.raises(ValueError, match="another warmup"):
        make_controller("warmup:warmup", ControllerConfig())
    with pytest.raises(ValueError, match="no target"):
        make_controller("warmup:test-notarget", ControllerConfig())


class AddTwice(Descend):
    """Asks for 5 more streams in its first two MIs, then holds whatever count it was given."""

    def __init__(self, args: str, config: ControllerConfig) -> None:
        super().__init__(args, config)
        self.target, self.n = 1, 0

    def decide(self, signals: SignalVector) -> int:
        self.n += 1
        if self.n <= 2:
            self.target = self.config.clip(self.target + 5)
        return self.target


register("test-addtwice", AddTwice)


def test_carry_grants_the_add_deferred_during_the_start_up() -> None:
    # 200 ms: 16 round trips are 3.2 s. Both asks fall inside the start-up; without carry the
    # policy is left at its first count, with carry it gets the add at t = 4 s, once.
    assert _path("warmup:test-addtwice", 200.0, 6)[1] == [1] * 6
    w, path = _path("warmup:carry=1:test-addtwice", 200.0, 6)
    assert path == [1, 1, 1, 6, 6, 6] and w.rule.owed == 0
    assert w.inner.target == 6  # type: ignore[attr-defined]
    # where the start-up fits in an MI nothing is deferred, so nothing is owed
    assert _path("warmup:carry=1:test-climb", 40.0, 4)[1] == [6, 11, 16, 21]
    # carry keeps round 26's pacing where the policy keeps asking (it takes the larger ask)
    assert _path("warmup:carry=1:test-climb", 150.0, 9)[1] == [1, 1, 6, 6, 6, 11, 11, 11, 16]


class AddThenRetreat(AddTwice):
    """Starts at 3 streams, asks for 5 more in its first MI, then for one fewer than it holds."""

    def __init__(self, args: str, config: ControllerConfig) -> None:
        super().__init__(args, config)
        self.target = 3

    def decide(self, signals: SignalVector) -> int:
        self.n += 1
        step = 5 if self.n == 1 else -1
        self.target = self.config.clip(self.target + step)
        return self.target


register("test-addretreat", AddThenRetreat)


def test_carry_drops_the_debt_on_a_retreat() -> None:
    w, path = _path("warmup:carry=1:test-addretreat", 200.0, 6)
    assert path == [3, 2, 1, 1, 1, 1] and w.rule.owed == 0


def test_carry_around_round13_on_a_long_bbr_path() -> None:
    """Round 13's bundle on a 150-ms path of 20 Mbit/s per stream with 1 % loss that others
    cause: with round 26's warm-up it never leaves 2 streams (its asks fall in the start-up,
    and a history of MIs at 2 streams does not ask again); with carry it is given the add at
    the start-up's end and climbs on from what it then sees. On cubic streams, unchanged."""

    def run(spec: str, cc: str) -> list[int]:
        return world_path(spec, 150.0, cc, 20)[1]

    carry = f"warmup:cc=bbr,carry=1:{ROUND13}"
    assert run(carry, "cubic") == run(ROUND13, "cubic")
    dropped = run(ROUND26, "bbr")
    assert max(dropped) == 2
    carried = run(carry, "bbr")
    assert carried[:3] == [2, 2, 7] and max(carried) > 7


class RetreatThenClimb(AddTwice):
    """Starts at 6 streams, retreats to 1 in its first MI, then asks for 5 more every MI."""

    def __init__(self, args: str, config: ControllerConfig) -> None:
        super().__init__(args, config)
        self.target = 6

    def decide(self, signals: SignalVector) -> int:
        self.n += 1
        self.target = self.config.clip(1 if self.n == 1 else self.target + 5)
        return self.target


register("test-retreatclimb", RetreatThenClimb)


def test_climb_cuts_a_large_add_that_does_not_continue_a_climb() -> None:
    # after a retreat the first add is one stream; the next one continues a climb: as asked
    w, path = _path("warmup:climb=1:test-retreatclimb", 40.0, 5)
    assert path == [1, 2, 7, 12, 17] and w.rule.cut == 1
    assert _path("warmup:test-retreatclimb", 40.0, 3)[1] == [1, 6, 11]
    # the first decision is left alone where nothing was deferred (fig1's +5 ramp) ...
    w, path = _path("warmup:climb=1:test-climb", 40.0, 4)
    assert path == [6, 11, 16, 21] and w.rule.cut == 0
    # ... and cut with climb=2
    assert _path("warmup:climb=2:test-climb", 40.0, 4)[1] == [2, 7, 12, 17]
    # a start-up that deferred an add: the first add granted is one stream (150 ms: the
    # youngest streams are 2.4 s old at t=3), then the deferral paces the climb as before.
    # The ask at t=2 is cut too (then deferred): cut counts asks, not grants.
    w, path = _path("warmup:climb=1:test-climb", 150.0, 7)
    assert path == [1, 1, 2, 2, 2, 7, 7] and w.rule.cut == 2
    # a deferral inside a climb does not cut the next add: the last change was an add
    # (8 round trips of 150 ms: the ask at t=3 is deferred, the one at t=4 is taken as +5)
    w, path = _path("warmup:rtts=8,climb=1:test-climb", 150.0, 5)
    assert path == [1, 2, 2, 7, 7] and w.rule.cut == 1
    # retreats pass as asked
    assert _path("warmup:climb=2:test-descend", 40.0, 4)[1] == [15, 10, 5, 1]
    with pytest.raises(ValueError, match="climb"):
        WarmupConfig(climb=3)


def _lossy(t: float, n: int, loss: float) -> SignalVector:
    s = _sig(t, n, 40.0)
    return SignalVector(**{**{f: getattr(s, f) for f in s.__dataclass_fields__}, "loss_rate": loss})


def test_climb_loss_cuts_only_after_a_lossy_mi() -> None:
    # a see-saw of -5/+5: without climb_loss every +5 after a -5 is one stream (the ratchet);
    # with climb_loss=0.01 only where the MI just measured lost 1 % or more
    from policy.warmup import StartGate

    def seesaw(wc: WarmupConfig, losses: list[float]) -> list[int]:
        gate, n, path = StartGate(wc, ControllerConfig(max_streams=64), 40), 40, []
        for i, loss in enumerate(losses):
            n = gate.step(n - 5 if i % 2 == 0 else n + 5, _lossy(i + 1.0, n, loss))
            path.append(n)
        return path

    assert seesaw(WarmupConfig(climb=1), [0.001] * 6) == [35, 36, 31, 32, 27, 28]
    assert seesaw(WarmupConfig(climb=1, climb_loss=0.01), [0.001] * 6) == [35, 40] * 3
    assert seesaw(WarmupConfig(climb=1, climb_loss=0.01), [0.05] * 6) == [35, 36, 31, 32, 27, 28]
    assert WarmupConfig.parse("climb=1,climb_loss=0.01").climb_loss == 0.01
    with pytest.raises(ValueError, match="climb_loss"):
        WarmupConfig(climb_loss=2.0)


def _walk(wc: WarmupConfig, start: int, steps: list[tuple[int, float]]) -> tuple[list[int], int]:
    """Feed StartGate (delta asked, loss of the MI just measured) pairs on a 40-ms path."""
    from policy.warmup import StartGate

    gate, n, path = StartGate(wc, ControllerConfig(max_streams=64), start), start, []
    for i, (delta, loss) in enumerate(steps):
        n = gate.step(n + delta, _lossy(i + 1.0, n, loss))
        path.append(n)
    return path, gate.cut


def test_climb_peak_reads_the_loss_that_caused_the_retreat() -> None:
    # a retreat decided at 5 % loss, then an MI at 1 stream that loses 0.5 %, then +5: with
    # the MI just measured (round 33) the add is taken whole; with climb_peak it is cut
    steps = [(-1, 0.05), (0, 0.005), (+5, 0.005)]
    wc = WarmupConfig(climb=1, climb_loss=0.01)
    assert _walk(wc, 2, steps) == ([1, 1, 6], 0)
    assert _walk(WarmupConfig(climb=1, climb_loss=0.01, climb_peak=1), 2, steps) == ([1, 1, 2], 1)
    # a retreat decided at 0.1 % loss (the see-saw) leaves the next +5 alone either way
    peak = WarmupConfig(climb=1, climb_loss=0.01, climb_peak=1)
    assert _walk(peak, 40, [(-5, 0.001), (+5, 0.001)] * 2) == ([35, 40, 35, 40], 0)
    # the peak restarts at each change: the MI that decided a climb (0.2 %) replaces the 5 %
    assert _walk(peak, 2, [(-1, 0.05), (+1, 0.002), (-1, 0.002), (+5, 0.002)]) == (
        [1, 2, 1, 6],
        0,
    )


def test_climb_probe_keeps_a_climb_that_loses_one_stream_at_a_time() -> None:
    # after a cut (1 -> 2 at 17 % loss) the next +5 continues the climb as asked (round 33,
    # gen-v2-v09: 2 -> 7 -> 12 at the same loss) unless climb_probe: then +1 while the MI at
    # the probed count loses climb_loss or more, and as asked once it does not
    steps = [(-1, 0.17), (+5, 0.17), (+5, 0.17), (+5, 0.17), (+5, 0.002), (+5, 0.002)]
    wc = WarmupConfig(climb=1, climb_loss=0.01)
    assert _walk(wc, 2, steps) == ([1, 2, 7, 12, 17, 22], 1)
    probe = WarmupConfig(climb=1, climb_loss=0.01, climb_probe=1)
    assert _walk(probe, 2, steps) == ([1, 2, 3, 4, 9, 14], 3)
    # an add the policy asked as one stream is not a probe: the next +5 is a climb
    assert _walk(probe, 2, [(-1, 0.17), (+1, 0.17), (+5, 0.17)]) == ([1, 2, 7], 0)
    assert WarmupConfig.parse("climb=1,climb_peak=1,climb_probe=1").climb_probe == 1
    with pytest.raises(ValueError, match="climb_peak"):
        WarmupConfig(climb_peak=2)
