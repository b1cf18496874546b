"""``warmup[:KEY=VALUE,...][:INNER]``: no add while the youngest streams are still starting.

Round 25 (issue #16, ``docs/results/issue16-round25/``): on long paths the streams' start-up
(slow start, BBR's STARTUP) outlasts a 1-s MI. At 123-201 ms of RTT an MI holds only 5-8
round trips, so the first MIs read a small fraction of what the streams will carry and none
of the loss their start-up overshoot will cause (gen-v2-t06: 2 BBR streams read 6 Mbit/s, 7
read 179 Mbit/s at 0.1 % loss, then 12 read 1352 Mbit/s at 30 % loss). Every trained policy
reads "little throughput, no loss" as "add", and the adds compound the overshoot: on the two
test scenarios of that kind the first five MIs cost the shipped policy 0.32-0.49 of its
utility ratio in each of 4 runs.

The rule: after the stream count rises (and at the transfer's start), further adds wait
until the youngest streams have had ``rtts`` round trips (16; the minimum RTT seen) since
they joined. Retreats and holds pass at once. Where an MI holds ``rtts`` round trips (RTT
<= 62 ms at 1-s MIs: fig1's 40-ms path, the paper's 60-ms path) nothing changes; at 123 ms
each add waits one more MI, at 200 ms three more. ``cc=bbr`` applies the rule only while
our streams run BBR (the signal vector's ``cc``), whose start-up overshoot in a shallow
queue is the costly one; ``cc=any`` (the default) always.

The inner controller sees every signal vector; when an add is deferred its target is set
back to the held count (so it must have a ``target``: ``ppo``, ``ensemble``, ``judge``,
``guard``, ``stdin``). Not the default. Measured once in round 25 as a diagnostic (8
long-path validation scenarios, 2 runs): with any cc it cost where long ramps pay (-0.188
+- 0.134); with ``cc=bbr`` it never acted on the cubic ones and removed the start-up ramp
on both BBR ones (gen-v3-v06 -0.316 vs -0.539). Not yet judged where it was not designed.
"""

from __future__ import annotations

from dataclasses import dataclass

from policy.base import ControllerConfig, Wrapper
from policy.gd import parse_config
from policy.signals import SignalVector


@dataclass(frozen=True, slots=True)
class WarmupConfig:
    """Constants of the warm-up rule (see the module docstring)."""

    rtts: float = 16.0
    """Round trips (of the minimum RTT seen) the youngest streams get before the next add."""
    cc: str = "any"
    """Apply the rule only while our streams run this congestion control (``any``: always)."""

    def __post_init__(self) -> None:
        if self.rtts < 0:
            raise ValueError(f"warmup: rtts must be >= 0, got {self.rtts}")

    @classmethod
    def parse(cls, text: str) -> WarmupConfig:
        """``KEY=VALUE[,KEY=VALUE...]`` over the defaults, e.g. ``rtts=8,cc=bbr``."""
        return parse_config(cls, text, "warmup")


class Warmup(Wrapper):
    """``warmup[:INNER]``: follow INNER (default ``ppo``); defer adds during start-up."""

    name = "warmup"

    def __init__(self, args: str, config: ControllerConfig, wc: WarmupConfig | None = None) -> None:
        self.wc, args = self._options(args, WarmupConfig.parse, wc or WarmupConfig())
        self.config = config
        self.inner = self._wrap(args, config, "hold")
        self.current = self.inner.initial()
        self.joined_at = 0.0
        """Transfer time (s) at which the youngest streams joined: the start, or the end of
        the MI that decided the last add."""
        self.deferred = 0
        """Adds deferred (for tests and logs)."""

    def initial(self) -> int:
        return self.current

    def starting(self, signals: SignalVector) -> bool:
        """Are the youngest streams within their first ``rtts`` round trips?"""
        if self.wc.cc != "any" and signals.cc != self.wc.cc:
            return False
        rtt = signals.min_rtt_ms
        if rtt is None or rtt <= 0:
            return False
        return signals.t - self.joined_at < self.wc.rtts * rtt / 1000.0

    def decide(self, signals: SignalVector) -> int:
        proposed = self.config.clip(self.inner.decide(signals))  # the inner history stays whole
        if proposed > self.current:
            if self.starting(signals):
                self.deferred += 1
                proposed = self.current
                self.target = proposed
            else:
                self.joined_at = signals.t
        self.current = proposed
        return proposed
