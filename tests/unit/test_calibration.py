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


def _competitor() -> list[tuple[dict, list[dict], np.ndarray, np.ndarray, np.ndarray]]:
    from train.calibrate import COMPETITOR, competitor_curve

    data = json.loads(COMPETITOR.read_text())
    out = []
    for name, scn in data["scenarios"].items():
        rows = sorted(
            (r for r in data["rows"] if r["scenario"] == name), key=lambda r: r["streams"]
        )
        ns = [r["streams"] for r in rows]
        thr, loss = competitor_curve(scn, ns)
        _, old = competitor_curve(scn, ns, floor=False, sat=np.inf)
        out.append((scn, rows, thr, loss, old))
    return out


def test_beside_a_competitor_at_short_rtts_the_old_loss_fit_was_tens_of_times_high() -> None:
    """Beside a long-lived reno or cubic transfer at 0.02-1 ms the testbed loses 3-9 % at any
    N from 1 to 32; the ``A (N / W)^1.5`` fit, with W the BDP of a few packets, gave its 30 %
    clip at every N, so one stream was the simulated optimum (the policy's t05-like failure)."""
    lan = [(s, r, o) for s, r, _, _, o in _competitor() if s["rtt_ms"] <= 1]
    assert len(lan) == 3
    for _, rows, old in lan:
        assert all(0.02 < r["testbed_loss"] < 0.10 for r in rows)
        assert np.all(old >= 0.29)


def test_queue_floor_and_loss_saturation_match_the_competitor_runs() -> None:
    """With the queue the testbed holds (a 64-packet floor) and congestion loss saturating at
    the fitted 9 %, every point's loss is within 0.45-2.2x of the testbed (fit: 0.50-1.28x),
    throughput within 25 %, and the utility's best N within one sweep step."""
    from policy.utility import utility_values

    for scn, rows, thr, loss, _ in _competitor():
        ns = np.array([r["streams"] for r in rows], dtype=np.float64)
        tb_thr = np.array([r["testbed_bps"] for r in rows])
        tb_loss = np.array([r["testbed_loss"] for r in rows])
        assert np.all((loss / tb_loss > 0.45) & (loss / tb_loss < 2.2)), (scn, loss, tb_loss)
        assert np.all(np.abs(thr / tb_thr - 1) < 0.25), (scn, thr, tb_thr)
        best_tb = int(np.argmax(utility_values(tb_thr, ns, tb_loss)))
        best_sim = int(np.argmax(utility_values(thr, ns, loss)))
        assert abs(best_tb - best_sim) <= 1 and ns[best_sim] > 1, (scn["file"], best_tb, best_sim)


def test_a_lone_transfer_on_a_lossy_lan_fills_the_queue_before_it_overflows_it() -> None:
    """Alone on a LAN with random loss (calib-lone: 105 Mbit/s at 0.26 %, 600 Mbit/s at
    0.1 %, the 64-packet floor) one cubic stream's Mathis window sits in the queue: loss
    stays near the random loss while the windows fit (testbed 0.25 % and 0.46 % at one
    stream), then rises to 2-7 % at 4-16 streams with the throughput flat, so one stream is
    best. The simulator before the window model put 0.75 % at one stream and 1.5 % at two on
    the 105 Mbit/s path (three and four times the testbed) and filled the queue by
    1 - 0.5 / sqrt(N) whatever the windows; now: loss within 0.35-2.5x from 4 streams on,
    RTT within 0.6-1.3x, the same best N."""
    from policy.utility import utility_values
    from train.calibrate import LONE, path_curve

    data = json.loads(LONE.read_text())
    assert len(data["scenarios"]) == 2
    for name, scn in data["scenarios"].items():
        rows = sorted(
            (r for r in data["rows"] if r["scenario"] == name), key=lambda r: r["streams"]
        )
        ns = np.array([r["streams"] for r in rows], dtype=np.float64)
        tb_thr, tb_loss, tb_rtt = (
            np.array([r[k] for r in rows])
            for k in ("testbed_bps", "testbed_loss", "testbed_rtt_ms")
        )
        thr, loss, rtt = path_curve(scn, [int(n) for n in ns])
        assert loss[0] <= 2 * scn["random_loss"] and tb_loss[0] <= 0.005, (name, loss, tb_loss)
        above = ns >= 4
        assert np.all((loss[above] / tb_loss[above] > 0.35) & (loss[above] / tb_loss[above] < 2.5))
        assert loss[2] > 5 * loss[0] and tb_loss[2] > 5 * tb_loss[0]  # 4 streams pay
        assert np.all(np.abs(thr / tb_thr - 1) < 0.1), (name, thr, tb_thr)
        ratio = rtt * 1e3 / tb_rtt
        assert np.all((ratio > 0.6) & (ratio < 1.3)), (name, rtt, tb_rtt)
        assert rtt[0] < 0.8 * rtt[-1]  # one stream leaves part of the queue empty
        assert np.argmax(utility_values(thr, ns, loss)) == 0
        assert np.argmax(utility_values(tb_thr, ns, tb_loss)) == 0
