"""Rates and sizes as people write them (``50Mbit``, ``1gbit/s``, ``4G``, ``512MiB``), parsed in
one place for the CLI, the scenario, experiment and campaign files."""

from __future__ import annotations

import re

_RATE_RE = re.compile(
    r"^\s*([0-9]*\.?[0-9]+(?:e[0-9]+)?)\s*([kmgt]?)(?:bit|bps|b)?(?:/s)?\s*$", re.I
)
_SIZE_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([kmgt]?)(i?)b?\s*$", re.I)
_POWER = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4}


def parse_rate(value: str | int | float) -> float:
    """Bits per second from ``1gbit``, ``500Mbit/s``, ``2.5G``, ``10Mbps`` or a number (decimal
    prefixes, as network rates are). Raises ValueError saying what was expected."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        rate = float(value)
    elif isinstance(value, str) and (m := _RATE_RE.match(value)):
        rate = float(m.group(1)) * 1000 ** _POWER[m.group(2).lower()]
    else:
        raise ValueError(f"cannot read rate {value!r} (use e.g. 50Mbit, 1gbit)")
    if rate <= 0:
        raise ValueError(f"rate must be positive, got {value!r}")
    return rate


def parse_size(value: str | int) -> int:
    """Bytes from ``4G``/``4GB`` (decimal), ``512MiB`` (binary), ``100k`` or an integer.
    Raises ValueError saying what was expected."""
    if isinstance(value, int) and not isinstance(value, bool):
        size = value
    elif isinstance(value, str) and (m := _SIZE_RE.match(value)):
        base = 1024 if m.group(3) else 1000
        size = int(float(m.group(1)) * base ** _POWER[m.group(2).lower()])
    else:
        raise ValueError(f"cannot read size {value!r} (use e.g. 4G, 512MiB, 100k)")
    if size <= 0:
        raise ValueError(f"size must be positive, got {value!r}")
    return size
