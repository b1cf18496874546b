"""The sender's MI clock: MIs end on a fixed grid, not up to a poll late."""

from __future__ import annotations

import pytest

from xfer.tx.sender import POLLS_PER_MI, next_boundary, poll_timeout


def test_poll_never_waits_past_the_boundary() -> None:
    assert poll_timeout(0.0, 1.0, 1.0) == pytest.approx(1.0 / POLLS_PER_MI)
    assert poll_timeout(0.95, 1.0, 1.0) == pytest.approx(0.05)
    assert poll_timeout(1.2, 1.0, 1.0) == 0.0  # already late: do not wait at all


def _ends(mi: float, overhead: float, n: int) -> list[float]:
    """Where the MIs of a loop that spends ``overhead`` s per wake-up end."""
    now, nxt, ends = 0.0, mi, []
    while len(ends) < n:
        now += poll_timeout(now, nxt, mi) + overhead
        if now >= nxt:
            ends.append(now)
            nxt = next_boundary(nxt, now, mi)
    return ends


def test_mis_stay_on_the_grid_with_a_slow_loop() -> None:
    # 1.2 ms per wake-up: the old fixed tenth-of-an-MI wait ended the k-th MI at
    # 10 k x 0.1012 s, 12 ms more late each MI; now each ends one wake-up after its boundary.
    ends = _ends(1.0, 0.0012, 30)
    lateness = [e - (k + 1) for k, e in enumerate(ends)]
    assert max(lateness) < 0.002
    assert ends[5] < 6.002


def test_a_stalled_loop_skips_the_boundaries_it_missed() -> None:
    assert next_boundary(3.0, 3.01, 1.0) == 4.0
    assert next_boundary(3.0, 5.5, 1.0) == 6.0  # 4 and 5 passed during the stall
    assert next_boundary(3.0, 4.0, 1.0) == 5.0  # exactly on a boundary: the next one
