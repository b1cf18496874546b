"""Network addresses as the command line writes them (``HOST:PORT``), shared by both sides."""

from __future__ import annotations


def split_hostport(s: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[v6]:PORT`` too) to a tuple."""
    host, sep, port = s.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"expected HOST:PORT, got {s!r}")
    return host.strip("[]") or "0.0.0.0", int(port)
