"""The simulator against the testbed measurements behind the README's calibration table.

``train/data/calibration-testbed.json`` holds fixed-N throughput and loss measured on the
emulated testbed by ``python3 -m train.calibrate``; a change to the simulator that moves any
point by more than 15 % (or reverses a loss trend) fails here, without running the testbed.
"""

from __future__ import annotations

import json

import numpy as np

from train.calibrate import HOLDOUT, MEASURED, TOLERANCE, resimulate


def _rows() -> list[dict]:
    return resimulate(json.loads(MEASURED.read_text())["rows"])


def test_three_scenarios_and_the_whole_n_range_are_measured() -> None:
    rows = _rows()
    scenarios = {r["scenario"] for r in rows}
    assert len(scenarios) >= 3
    for s in scenarios:
        assert sorted(r["streams"] for r in rows if r["scenario"] == s) == [1, 2, 4, 8, 16, 32, 64]


def test_simulator_within_tolerance_at_every_n() -> None:
    off = [
        f"{r['scenario']} N={r['streams']}: {100 * r['error']:+.1f} %"
        for r in _rows()
        if abs(r["error"]) > TOLERANCE
    ]
    assert not off, "simulator off the testbed by more than 15 %: " + "; ".join(off)


def test_loss_trends_point_the_same_way() -> None:
    rows = _rows()
    for s in {r["scenario"] for r in rows}:
        mine = sorted((r for r in rows if r["scenario"] == s), key=lambda r: r["streams"])
        tb = np.array([r["testbed_loss"] for r in mine])
        sim = np.array([r["sim_loss"] for r in mine])
        if np.ptp(tb) < 5e-4:  # flat within noise on the testbed (random loss, or none)
            assert np.ptp(sim) < 2e-3, (
                f"{s}: the simulator's loss moves where the testbed's does not"
            )
            continue
        assert np.sign(tb[-1] - tb[0]) == np.sign(sim[-1] - sim[0]), f"{s}: loss trends differ"


def test_congestion_loss_in_a_full_queue_within_a_factor_of_two() -> None:
    """Saturated points with measurable congestion loss (no random loss configured): the
    simulator's fitted ``A (N / W)^1.5`` must stay within 2x of the testbed. These rows are
    separate runs from the sweeps the constant was fitted on; the old N^2 (Mathis) form
    was 5-11x low here."""
    rows = [
        r for r in _rows() if not r["scenario"].startswith("lossy") and r["testbed_loss"] >= 9e-4
    ]
    assert len(rows) >= 4
    off = [
        f"{r['scenario']} N={r['streams']}: testbed {r['testbed_loss']:.2e} sim {r['sim_loss']:.2e}"
        for r in rows
        if not 0.5 <= r["sim_loss"] / r["testbed_loss"] <= 2.0
    ]
    assert not off, "congestion loss off by more than 2x: " + "; ".join(off)


def test_holdout_scenario_as_measured() -> None:
    """lossy-500m-20ms (500 Mbit/s, 20 ms, 0.05 %) was measured after the constants were
    fitted. Throughput: the Mathis region runs 10-25 % high (cubic's constant here is nearer
    1.0 than the fitted 1.16; training randomises it over 0.7-1.75), saturation within 1 %.
    Loss in the saturated, lossy region within 2x."""
    rows = resimulate(json.loads(HOLDOUT.read_text())["rows"])
    assert sorted(r["streams"] for r in rows) == [1, 2, 4, 8, 16, 32, 64]
    assert all(abs(r["error"]) <= 0.25 for r in rows), [round(r["error"], 3) for r in rows]
    assert all(abs(r["error"]) <= 0.02 for r in rows if r["streams"] >= 16)
    sat = [r for r in rows if r["streams"] >= 32]
    assert all(0.5 <= r["sim_loss"] / r["testbed_loss"] <= 2.0 for r in sat), [
        (r["sim_loss"], r["testbed_loss"]) for r in sat
    ]
