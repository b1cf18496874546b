from __future__ import annotations

import pytest

from xfer.units import parse_rate, parse_size


@pytest.mark.parametrize(
    "text, bps",
    [
        ("50Mbit", 50e6),
        ("1gbit/s", 1e9),
        ("2.5G", 2.5e9),
        ("10Mbps", 10e6),
        ("500k", 5e5),
        (3e6, 3e6),
    ],
)
def test_rates(text: str | float, bps: float) -> None:
    assert parse_rate(text) == bps


@pytest.mark.parametrize(
    "text, n",
    [("4G", 4 * 10**9), ("4GB", 4 * 10**9), ("512MiB", 512 << 20), ("100k", 100_000), (7, 7)],
)
def test_sizes(text: str | int, n: int) -> None:
    assert parse_size(text) == n


@pytest.mark.parametrize("bad", ["fast", "-5M", "0", "", True])
def test_bad_values_say_what_was_expected(bad: object) -> None:
    with pytest.raises(ValueError, match="rate|size"):
        parse_rate(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="size"):
        parse_size(bad)  # type: ignore[arg-type]
