"""The calibration step: before any data is collected, every link must measure what the
campaign expects (Mahimahi's rule: an emulator, or a testbed, is only trusted once its
measured RTT and rate match the configuration).

The pure parts (parsing ``ping`` output, judging a measurement against tolerances) are
separate from the measuring, which the runner does over SSH.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import asdict, dataclass
from typing import Any

from testbeds.campaign.schema import CalibrationSpec, LinkSpec

_PING_TIME = re.compile(r"time[=<]([0-9.]+)\s*ms")


class CalibrationFailed(RuntimeError):
    """A link did not measure what the campaign file says; no data was collected."""


def parse_ping(text: str) -> list[float]:
    """RTTs in milliseconds from ``ping`` output (one per ``time=X ms`` reply line)."""
    return [float(m.group(1)) for m in _PING_TIME.finditer(text)]


@dataclass(frozen=True, slots=True)
class CalibrationResult:
    """One link's calibration: what was measured, what was expected, and the verdict."""

    link: str
    """Link name."""
    rtt_ms: float | None
    """Median idle ping RTT (None: no reply)."""
    expected_rtt_ms: float
    """From the campaign file."""
    goodput_bps: float | None
    """Goodput of the calibration send (None: it failed)."""
    expected_goodput_bps: float
    """From the campaign file."""
    ok: bool
    """True when both are within tolerance."""
    problems: tuple[str, ...]
    """Why it failed, one sentence each."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (stored in the state file and ``calibration.json``)."""
        d = asdict(self)
        d["problems"] = list(self.problems)
        return d


def judge(
    link: LinkSpec, spec: CalibrationSpec, rtts_ms: list[float], goodput_bps: float | None
) -> CalibrationResult:
    """Compare a link's measurements with its expectations and the spec's tolerances."""
    problems = []
    rtt = statistics.median(rtts_ms) if rtts_ms else None
    if rtt is None:
        problems.append(f"no ping reply from the receiver's data address over link {link.name!r}")
    else:
        allowed = link.expected_rtt_ms * spec.rtt_tolerance + spec.rtt_slack_ms
        if abs(rtt - link.expected_rtt_ms) > allowed:
            problems.append(
                f"RTT {rtt:.2f} ms is not {link.expected_rtt_ms:g} ms +- {allowed:.2f} ms"
            )
    if goodput_bps is None:
        problems.append("the calibration send did not complete")
    else:
        exp = link.expected_goodput_bps
        lo, hi = exp * (1 - spec.goodput_tolerance), exp * (1 + spec.goodput_tolerance)
        if not lo <= goodput_bps <= hi:
            problems.append(
                f"goodput {goodput_bps / 1e6:.1f} Mbit/s is outside "
                f"[{lo / 1e6:.1f}, {hi / 1e6:.1f}] Mbit/s (expected {exp / 1e6:.1f})"
            )
    return CalibrationResult(
        link=link.name,
        rtt_ms=rtt,
        expected_rtt_ms=link.expected_rtt_ms,
        goodput_bps=goodput_bps,
        expected_goodput_bps=link.expected_goodput_bps,
        ok=not problems,
        problems=tuple(problems),
    )


def goodput_of(end: dict[str, Any]) -> float | None:
    """Goodput (bit/s) from an ``xfer send --json`` end object, or None if it failed."""
    if end.get("exit_code", 0) != 0 or end.get("error"):
        return None
    seconds = end.get("seconds") or 0
    if seconds > 0 and end.get("bytes"):
        return float(end["bytes"]) * 8 / float(seconds)
    tp = end.get("throughput_bps")
    return float(tp) if tp else None
