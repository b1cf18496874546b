from __future__ import annotations

from policy.ccauto import CcAutoConfig, CcChooser
from policy.signals import SignalVector


def _sig(loss: float) -> SignalVector:
    return SignalVector(
        t=0,
        mi_s=1,
        streams=4,
        throughput_bps=0,
        goodput_bps=0,
        loss_rate=loss,
        rtt_ms=50,
        min_rtt_ms=50,
        rtt_gradient=0,
        rtt_ratio=1.0,
    )


def test_tries_every_arm_then_settles_on_the_best_in_each_state() -> None:
    chooser = CcChooser(CcAutoConfig(hold=2, epsilon=0.0))
    payoff = {"cubic": 100.0, "bbr": 900.0, "reno": 80.0}  # a lossy path: bbr wins
    picks = []
    for _ in range(30):
        picks.append(chooser.update(_sig(0.01), payoff[chooser.current]))
    assert set(picks[:6]) == {"cubic", "bbr", "reno"}
    assert picks[-10:] == ["bbr"] * 10
    assert chooser.table()["1,0:bbr"] == 900.0


def test_states_are_learned_separately() -> None:
    chooser = CcChooser(CcAutoConfig(hold=1, epsilon=0.0))
    for _ in range(10):
        chooser.update(_sig(0.0), {"cubic": 5.0, "bbr": 1.0, "reno": 1.0}[chooser.current])
    assert chooser.current == "cubic"
    seen = {chooser.update(_sig(0.05), 1.0) for _ in range(3)}
    assert seen == {"bbr", "reno", "cubic"}  # a new state: everything is tried again
