"""Testbed scenarios: the TOML schema, validated into frozen dataclasses.

A scenario names the paths between sender and receiver (rate, one-way delay per direction,
loss, bottleneck queue), extra sender/receiver pairs that share the paths, background flows,
a time schedule, and the sysctls of the end hosts. ``load_scenario("wan-1g-50ms")`` reads
``configs/testbeds/wan-1g-50ms.toml``; any path to a ``.toml`` file works too. Every error
names the file and the field that is wrong (:class:`ScenarioError`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xfer import tomlconf
from xfer.tomlconf import Table, config_path, read_named

CONFIG_DIR = Path(__file__).resolve().parent.parent / "configs" / "testbeds"
CONGESTION_CONTROLS = ("cubic", "reno", "bbr")
ACTIONS = ("set_rate", "path_down", "path_up", "start_background", "stop_background")
ETH_OVERHEAD = 1448 / 1514
"""TCP goodput / link rate for full-size segments (MSS 1448 with timestamps, 1514-byte frames)."""


class ScenarioError(ValueError):
    """A scenario file is missing, unreadable or invalid (the message says where and why)."""


@dataclass(frozen=True)
class PathSpec:
    """One path between the sender side and the receiver side, emulated in the router."""

    rate_bps: float
    """Bottleneck rate towards the receiver (bit/s), enforced by ``tbf``."""
    delay_fwd_ms: float
    """One-way delay sender -> receiver (ms), added by the delay line."""
    delay_rev_ms: float
    """One-way delay receiver -> sender (ms); 0 means no delay line on the return path."""
    loss: float
    """Random per-packet loss towards the receiver (fraction, 0.001 = 0.1 %)."""
    queue_bytes: int
    """Bottleneck queue (``tbf`` limit) in bytes."""

    @property
    def rtt_ms(self) -> float:
        """Configured base round-trip time (ms)."""
        return self.delay_fwd_ms + self.delay_rev_ms

    @property
    def bdp_bytes(self) -> int:
        """Bandwidth-delay product at the configured rate and RTT (bytes)."""
        return int(self.rate_bps * self.rtt_ms / 1000 / 8)

    @property
    def goodput_bps(self) -> float:
        """Best TCP goodput the path can carry (rate less Ethernet/IP/TCP overhead)."""
        return self.rate_bps * ETH_OVERHEAD


@dataclass(frozen=True)
class BackgroundFlow:
    """A competing iperf3 flow from ``bgsendK`` to ``bgrecvK`` over one path."""

    name: str
    """Name used by schedule actions (``flow = "bg1"``)."""
    path: int
    """Path index (1-based) the flow uses."""
    cc: str
    """Congestion control of the flow (cubic, reno, bbr)."""
    streams: int
    """Parallel TCP streams (iperf3 -P)."""
    rate_bps: float
    """Per-stream rate cap (iperf3 -b); 0 means unlimited."""
    start_s: float | None
    """Seconds after ``start_schedule()`` when the flow starts; None waits for a schedule action."""
    stop_s: float | None
    """Seconds after ``start_schedule()`` when the flow stops for good; None runs until teardown."""
    on_s: float | None
    """On/off flows: seconds on per cycle (None: always on while started)."""
    off_s: float | None
    """On/off flows: seconds off per cycle."""


@dataclass(frozen=True)
class ScheduleEvent:
    """One timed change, applied ``at_s`` seconds after ``start_schedule()``."""

    at_s: float
    """Time of the change (s after the schedule starts)."""
    action: str
    """One of set_rate, path_down, path_up, start_background, stop_background."""
    path: int | None = None
    """Path index (1-based) for set_rate/path_down/path_up."""
    rate_bps: float | None = None
    """New bottleneck rate for set_rate (bit/s)."""
    flow: str | None = None
    """Background flow name for start_background/stop_background."""


@dataclass(frozen=True)
class HostSysctls:
    """Kernel settings of every end host namespace."""

    congestion_control: str
    """Default TCP congestion control (the system default here is bbr: always set it)."""
    tcp_rmem_max: int
    """Maximum TCP receive buffer (bytes; third field of net.ipv4.tcp_rmem)."""
    tcp_wmem_max: int
    """Maximum TCP send buffer (bytes; third field of net.ipv4.tcp_wmem)."""
    no_metrics_save: bool
    """net.ipv4.tcp_no_metrics_save: don't carry cwnd/ssthresh from one run to the next."""
    extra: tuple[tuple[str, str], ...] = ()
    """Further sysctls as (key, value) pairs, applied last."""
    min_tso_segs: int = 32
    """net.ipv4.tcp_min_tso_segs (kernel default 2). TCP sizes its GSO packets to about 1 ms
    of its pacing rate, so with many slow streams each packet carries 2 segments and the
    delay line's packet rate grows with the stream count: at 64 cubic streams on 1 Gbit/s it
    fell behind, queued packets in NFQUEUE (RTT 160 ms instead of 75) and released them in
    bursts (7 % loss, 590 Mbit/s). With 32 the same run held 955 Mbit/s at the configured
    queue's RTT. Bursts of 32 segments are what a TSO NIC sends anyway."""

    def as_pairs(self) -> list[tuple[str, str]]:
        """All sysctls as (key, value), in the order they are applied."""
        return [
            ("net.ipv4.tcp_congestion_control", self.congestion_control),
            ("net.ipv4.tcp_rmem", f"4096 131072 {self.tcp_rmem_max}"),
            ("net.ipv4.tcp_wmem", f"4096 16384 {self.tcp_wmem_max}"),
            ("net.ipv4.tcp_no_metrics_save", "1" if self.no_metrics_save else "0"),
            ("net.ipv4.tcp_min_tso_segs", str(self.min_tso_segs)),
            *self.extra,
        ]


@dataclass(frozen=True)
class Scenario:
    """A whole testbed: paths, hosts, background traffic, schedule and host settings."""

    name: str
    """Scenario name (the file stem unless the file sets ``name``)."""
    description: str
    """One line for people."""
    paths: tuple[PathSpec, ...]
    """Paths sender -> receiver; more than one makes the scenario multipath."""
    pairs: int
    """Sender/receiver pairs sharing the paths (sender, sender2, ...; receiver, receiver2, ...)."""
    background: tuple[BackgroundFlow, ...]
    """Background flows, each on its own host pair bgsendK/bgrecvK."""
    schedule: tuple[ScheduleEvent, ...]
    """Timed changes, sorted by time."""
    sysctls: HostSysctls
    """Settings of the end hosts."""
    mptcp: bool
    """Enable MPTCP and its endpoints (default: on when there is more than one path)."""
    source: str = ""
    """File the scenario was read from."""
    head_start_s: float = 0.0
    """Seconds the schedule and background flows run before the measured transfer starts (a
    link already shared with established flows); 0: they start with it. Used by the
    experiment harness (``lab.experiment``)."""
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    """Free-form ``[meta]`` table (e.g. the intended per-stream cap); not interpreted."""

    @property
    def hosts(self) -> list[str]:
        """Names of all end hosts."""
        names = ["sender", "receiver"]
        for k in range(2, self.pairs + 1):
            names += [f"sender{k}", f"receiver{k}"]
        for k in range(1, len(self.background) + 1):
            names += [f"bgsend{k}", f"bgrecv{k}"]
        return names


HEAD_START_MAX_S = 10.0
"""The longest head start a scenario may give its schedule: no more than the harness's lead
for staggered transfers (``lab.experiment.LEAD_S``)."""

_BDP_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*bdp\s*$", re.I)


def parse_rate(value: Any, where: str) -> float:
    """'1gbit', '500Mbit/s', '2.5G' or a number of bit/s -> bit/s."""
    return tomlconf.rate(value, where, ScenarioError)


def parse_size(value: Any, where: str) -> int:
    """'4MB', '256KiB' or a number of bytes -> bytes."""
    return tomlconf.size(value, where, ScenarioError)


def _parse_loss(t: Table) -> float:
    raw = t.get("loss", (int, float, str), 0.0)
    if isinstance(raw, str):
        try:
            loss = float(raw.strip().rstrip("%")) / (100 if raw.strip().endswith("%") else 1)
        except ValueError:
            raise ScenarioError(
                f"{t.where}.loss: cannot read {raw!r} (use 0.001 or '0.1%')"
            ) from None
    else:
        loss = float(raw)
    if not 0 <= loss <= 0.5:
        raise ScenarioError(f"{t.where}.loss: {raw!r} is not a fraction in [0, 0.5]")
    return loss


def _parse_path(data: Any, where: str) -> PathSpec:
    t = Table(data, where, ScenarioError)
    rate = parse_rate(t.get("rate", (str, int, float)), f"{where}.rate")
    rtt = t.number("rtt_ms", None, 0, 10_000)
    fwd = t.number("delay_fwd_ms", None, 0, 10_000)
    rev = t.number("delay_rev_ms", None, 0, 10_000)
    if rtt is not None and (fwd is not None or rev is not None):
        raise ScenarioError(f"{where}: give either rtt_ms or delay_fwd_ms/delay_rev_ms, not both")
    if rtt is not None:
        fwd, rev = float(rtt), 0.0  # the whole RTT on the data direction: half the work
    elif fwd is None or rev is None:
        raise ScenarioError(f"{where}: needs rtt_ms, or both delay_fwd_ms and delay_rev_ms")
    loss = _parse_loss(t)
    queue_raw = t.get("queue", (str, int), "0.5bdp")
    bdp = int(rate * (fwd + rev) / 1000 / 8)
    if isinstance(queue_raw, str) and (m := _BDP_RE.match(queue_raw)):
        queue = max(int(float(m.group(1)) * bdp), 64 * 1514)
    else:
        queue = parse_size(queue_raw, f"{where}.queue")
    if queue < 3 * 1514:
        raise ScenarioError(f"{where}.queue: {queue} bytes is less than three full-size packets")
    t.done()
    return PathSpec(rate, float(fwd), float(rev), loss, queue)


def _parse_background(
    data: Any, where: str, k: int, npaths: int, default_cc: str
) -> BackgroundFlow:
    t = Table(data, where, ScenarioError)
    name = t.get("name", str, f"bg{k}")
    path = t.get("path", int, 1)
    if not 1 <= path <= npaths:
        raise ScenarioError(f"{where}.path: {path} is not a path of this scenario (1..{npaths})")
    cc = t.get("cc", str, default_cc)
    if cc not in CONGESTION_CONTROLS:
        raise ScenarioError(f"{where}.cc: {cc!r} is not one of {', '.join(CONGESTION_CONTROLS)}")
    streams = t.get("streams", int, 1)
    if not 1 <= streams <= 128:
        raise ScenarioError(f"{where}.streams: {streams} is outside 1..128")
    rate_raw = t.get("rate", (str, int, float), 0)
    rate = 0.0 if rate_raw in (0, "0") else parse_rate(rate_raw, f"{where}.rate")
    start = t.number("start_s", 0.0)
    stop = t.number("stop_s", None)
    on, off = t.number("on_s", None, 0.1), t.number("off_s", None, 0.1)
    if (on is None) != (off is None):
        raise ScenarioError(f"{where}: on/off flows need both on_s and off_s")
    if start is not None and stop is not None and stop <= start:
        raise ScenarioError(f"{where}: stop_s ({stop}) must be after start_s ({start})")
    t.done()
    return BackgroundFlow(name, path, cc, streams, rate, start, stop, on, off)


def _parse_event(data: Any, where: str, npaths: int, flows: set[str]) -> ScheduleEvent:
    t = Table(data, where, ScenarioError)
    at = float(t.number("at_s"))
    action = t.get("action", str)
    if action not in ACTIONS:
        raise ScenarioError(f"{where}.action: {action!r} is not one of {', '.join(ACTIONS)}")
    path = rate = flow = None
    if action in ("set_rate", "path_down", "path_up"):
        path = t.get("path", int)
        if not 1 <= path <= npaths:
            raise ScenarioError(
                f"{where}.path: {path} is not a path of this scenario (1..{npaths})"
            )
        if action == "set_rate":
            rate = parse_rate(t.get("rate", (str, int, float)), f"{where}.rate")
    else:
        flow = t.get("flow", str)
        if flow not in flows:
            raise ScenarioError(f"{where}.flow: no background flow named {flow!r}")
    t.done()
    return ScheduleEvent(at, action, path, rate, flow)


def _parse_sysctls(data: Any, where: str, paths: tuple[PathSpec, ...]) -> HostSysctls:
    t = Table(data, where, ScenarioError)
    cc = t.get("congestion_control", str, "cubic")
    if cc not in CONGESTION_CONTROLS:
        raise ScenarioError(
            f"{where}.congestion_control: {cc!r} is not one of {CONGESTION_CONTROLS}"
        )
    # Auto: room for 4 BDPs of the largest path (queue + retransmission headroom), >= 16 MB.
    auto = max(16 << 20, 4 * max(p.bdp_bytes + p.queue_bytes for p in paths))
    sizes = []
    for key in ("tcp_rmem_max", "tcp_wmem_max"):
        raw = t.get(key, (str, int), "auto")
        sizes.append(auto if raw == "auto" else parse_size(raw, f"{where}.{key}"))
    no_metrics = t.get("no_metrics_save", bool, True)
    tso = t.get("min_tso_segs", int, 32)
    if not 2 <= tso <= 255:
        raise ScenarioError(f"{where}.min_tso_segs: {tso} is not in 2..255")
    extra_raw = t.get("extra", dict, {})
    extra = []
    for key, value in extra_raw.items():
        if not re.fullmatch(r"net\.[a-z0-9_.]+", key):
            raise ScenarioError(f"{where}.extra: {key!r} is not a net.* sysctl")
        extra.append((key, str(value)))
    t.done()
    return HostSysctls(cc, sizes[0], sizes[1], no_metrics, tuple(extra), tso)


def parse_scenario(data: dict[str, Any], source: str, default_name: str) -> Scenario:
    """Validate a parsed TOML document into a :class:`Scenario` (errors name ``source``)."""
    t = Table(data, source, ScenarioError)
    name = t.get("name", str, default_name)
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}", name):
        raise ScenarioError(f"{source}: name {name!r} must be 1-40 letters, digits, '-', '_', '.'")
    raw_paths = t.get("path", list)
    if not 1 <= len(raw_paths) <= 8:
        raise ScenarioError(f"{source}: needs 1 to 8 [[path]] tables, found {len(raw_paths)}")
    paths = tuple(_parse_path(p, f"{source}: path[{i + 1}]") for i, p in enumerate(raw_paths))
    sysctls = _parse_sysctls(t.get("sysctl", dict, {}), f"{source}: [sysctl]", paths)
    pairs = t.get("pairs", int, 1)
    if not 1 <= pairs <= 16:
        raise ScenarioError(f"{source}.pairs: {pairs} is outside 1..16")
    bg = tuple(
        _parse_background(
            b, f"{source}: background[{k}]", k, len(paths), sysctls.congestion_control
        )
        for k, b in enumerate(t.get("background", list, []), start=1)
    )
    names = [b.name for b in bg]
    if len(set(names)) != len(names):
        raise ScenarioError(f"{source}: background flow names must be unique, got {names}")
    events = tuple(
        _parse_event(e, f"{source}: schedule[{i + 1}]", len(paths), set(names))
        for i, e in enumerate(t.get("schedule", list, []))
    )
    mptcp = t.get("mptcp", bool, len(paths) > 1)
    head = t.number("head_start_s", 0.0, hi=HEAD_START_MAX_S)
    if head and not (bg or events):
        raise ScenarioError(f"{source}: head_start_s needs [[background]] or [[schedule]]")
    scenario = Scenario(
        name=name,
        description=t.get("description", str, ""),
        paths=paths,
        pairs=pairs,
        background=bg,
        schedule=tuple(sorted(events, key=lambda e: e.at_s)),
        sysctls=sysctls,
        mptcp=mptcp,
        source=source,
        head_start_s=float(head),
        meta=dict(t.get("meta", dict, {})),
    )
    t.done()
    return scenario


def scenario_path(name_or_path: str | Path) -> Path:
    """Resolve a scenario name (``configs/testbeds/NAME.toml``) or a file path."""
    return config_path(name_or_path, CONFIG_DIR)


def list_scenarios() -> list[str]:
    """Names of the scenarios shipped in ``configs/testbeds/``."""
    return sorted(p.stem for p in CONFIG_DIR.glob("*.toml"))


def load_scenario(name_or_path: str | Path) -> Scenario:
    """Load and validate a scenario by name or path; raises :class:`ScenarioError`."""
    data, path = read_named(name_or_path, CONFIG_DIR, "scenario", ScenarioError)
    return parse_scenario(data, str(path), path.stem)
