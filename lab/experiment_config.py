"""Experiment files (``configs/experiments/*.toml``): the schema, validated into frozen dataclasses.

An experiment names a testbed scenario, the policies to compare, how often and how long to
run each, the per-stream cap and congestion control, how many transfers compete (with
staggered starts), what data they move, and optionally a sweep of fixed stream counts that
finds the best fixed throughput. Every error names the file and the field
(:class:`ExperimentError`). The runner is :mod:`lab.experiment`.

    scenario = "paper-fig1"
    policies = ["fixed:20", "gd", "bo", "ppo"]
    repetitions = 1
    duration = 200          # seconds per run (a time limit when the data has a size)
    stream_rate = "50Mbit"  # per-stream cap; omit for none
    cc = "cubic"
    [transfers]             # optional: competing transfers
    count = 3
    stagger_s = 50          # or start_s = [0, 50, 100]
    receiver = "paired"     # senderK -> receiverK, or "shared": all into one receiver
    [data]
    kind = "mem"            # mem (generated, discarded) or tree (generated files)
    size = "2GB"            # optional for mem: fixed bytes per transfer instead of duration
    [sweep]
    streams = [1, 5, 10, 20, 30, 40]
    duration = 60

See docs/experiments.md.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xfer import tomlconf
from xfer.tomlconf import Table, config_path, read_named

CONFIG_DIR = Path(__file__).resolve().parent.parent / "configs" / "experiments"
DATA_KINDS = ("mem", "tree")
RECEIVER_MODES = ("paired", "shared")
CONGESTION_CONTROLS = ("cubic", "bbr", "reno")


class ExperimentError(ValueError):
    """An experiment file is missing or invalid (the message names the file and the field)."""


@dataclass(frozen=True)
class DataSpec:
    """What every transfer moves."""

    kind: str = "mem"
    """``mem``: generated data the receiver discards; ``tree``: a generated directory tree."""
    size_bytes: int | None = None
    """Bytes per transfer; None (mem only) sends for the experiment's duration instead."""

    @property
    def fixed_size(self) -> bool:
        """True when each transfer moves a fixed amount and the duration is only a time limit."""
        return self.size_bytes is not None


@dataclass(frozen=True)
class SweepSpec:
    """Fixed stream counts run alone to find the best fixed throughput of the scenario."""

    streams: tuple[int, ...]
    """Stream counts to try (each as ``fixed:N``, one transfer, no competition)."""
    duration_s: float
    """Seconds per sweep run."""
    repetitions: int = 1
    """Runs per stream count."""


@dataclass(frozen=True)
class Experiment:
    """One experiment: which policies, on which scenario, how, and how often."""

    name: str
    """Name (the file stem unless the file sets ``name``); used in run metadata."""
    description: str
    """One line for people."""
    scenario: str
    """Testbed scenario name (``configs/testbeds/NAME.toml``) or path."""
    policies: tuple[str, ...]
    """Controller specs to compare (``fixed:20``, ``gd``, ``bo``, ``ppo``, ``ppo:CKPT``)."""
    repetitions: int = 1
    """Runs per policy."""
    duration_s: float = 60.0
    """Seconds each transfer runs; with a fixed data size, the time limit of each transfer."""
    stream_rate_bps: float | None = None
    """Per-stream cap (``--stream-rate``) in bit/s; None for no cap."""
    cc: str | None = None
    """Congestion control of every stream (``--cc``); None keeps the scenario's default."""
    min_streams: int = 1
    """``--min-streams`` of every sender."""
    max_streams: int = 64
    """``--max-streams`` of every sender."""
    mi_s: float = 1.0
    """Monitoring interval (``--mi``) in seconds."""
    starts_s: tuple[float, ...] = (0.0,)
    """Start offset of each concurrent transfer (s after the first); its length is the count."""
    receiver: str = "paired"
    """``paired``: transfer k goes senderk -> receiverk; ``shared``: all go into one receiver."""
    data: DataSpec = DataSpec()
    """What each transfer moves."""
    sweep: SweepSpec | None = None
    """Optional sweep of fixed stream counts (the best fixed throughput)."""
    source: str = ""
    """File the experiment was read from."""

    @property
    def transfers(self) -> int:
        """Number of concurrent transfers per run."""
        return len(self.starts_s)

    def with_overrides(
        self,
        duration_s: float | None = None,
        policies: tuple[str, ...] | None = None,
        repetitions: int | None = None,
    ) -> Experiment:
        """A copy with another duration, policies or repetitions.

        A new duration scales the start offsets and, for fixed-size data, the size by the same
        factor (so that a short CI run keeps the experiment's shape); sweep runs last at most
        the new duration.
        """
        exp = self
        if duration_s is not None:
            if duration_s <= 0:
                raise ExperimentError(f"--duration must be positive, got {duration_s}")
            f = duration_s / self.duration_s
            sweep = self.sweep
            if sweep is not None:
                sweep = dataclasses.replace(sweep, duration_s=min(sweep.duration_s, duration_s))
            data = self.data
            if data.size_bytes is not None:
                data = dataclasses.replace(data, size_bytes=max(1, int(data.size_bytes * f)))
            starts = tuple(round(s * f, 3) for s in self.starts_s)
            exp = dataclasses.replace(
                exp, duration_s=duration_s, starts_s=starts, sweep=sweep, data=data
            )
        if policies is not None:
            if not policies:
                raise ExperimentError("--policies: give at least one policy")
            checked = tuple(_check_policy(p, "--policies") for p in policies)
            exp = dataclasses.replace(exp, policies=checked)
        if repetitions is not None:
            if repetitions < 1:
                raise ExperimentError(f"--repetitions must be >= 1, got {repetitions}")
            exp = dataclasses.replace(exp, repetitions=repetitions)
        return exp


# -- parsing --------------------------------------------------------------------------------

_POLICY_RE = re.compile(r"^[a-z][a-z0-9_]*(:.*)?$")


def _check_policy(spec: str, where: str) -> str:
    if not isinstance(spec, str) or not _POLICY_RE.match(spec.strip().lower()):
        raise ExperimentError(f"{where}: {spec!r} is not a policy spec NAME[:ARGS] (e.g. fixed:20)")
    from policy.base import available, parse_spec

    name, args = parse_spec(spec)
    if name not in available():
        raise ExperimentError(
            f"{where}: unknown policy {name!r}; choose one of {', '.join(available())}"
        )
    if name == "fixed" and not (args.isdigit() and int(args) >= 1):
        raise ExperimentError(f"{where}: {spec!r} needs a stream count, e.g. fixed:20")
    return spec.strip()


def _parse_transfers(data: Any, where: str) -> tuple[tuple[float, ...], str]:
    t = Table(data, where, ExperimentError)
    count = t.get("count", int, None)
    stagger = t.number("stagger_s", None)
    starts_raw = t.get("start_s", list, None)
    receiver = t.get("receiver", str, "paired")
    t.done()
    if receiver not in RECEIVER_MODES:
        raise ExperimentError(f"{where}: receiver {receiver!r} is not one of {RECEIVER_MODES}")
    if starts_raw is not None:
        if count is not None or stagger is not None:
            raise ExperimentError(f"{where}: give either start_s or count/stagger_s, not both")
        if not starts_raw or not all(
            isinstance(s, int | float) and not isinstance(s, bool) and s >= 0 for s in starts_raw
        ):
            raise ExperimentError(f"{where}: start_s must be a non-empty list of seconds >= 0")
        starts = tuple(float(s) for s in starts_raw)
    else:
        if count is None or not 1 <= count <= 16:
            raise ExperimentError(f"{where}: count must be 1..16 (or give start_s), got {count}")
        starts = tuple(float(k * (stagger or 0.0)) for k in range(count))
    if len(starts) > 16:
        raise ExperimentError(f"{where}: at most 16 concurrent transfers, got {len(starts)}")
    if min(starts) != 0:
        raise ExperimentError(f"{where}: the first transfer must start at 0 s, got {min(starts)}")
    return starts, receiver


def _parse_data(data: Any, where: str) -> DataSpec:
    t = Table(data, where, ExperimentError)
    kind = t.get("kind", str, "mem")
    size_raw = t.get("size", (str, int), None)
    t.done()
    if kind not in DATA_KINDS:
        raise ExperimentError(f"{where}: kind {kind!r} is not one of {', '.join(DATA_KINDS)}")
    size = None if size_raw is None else tomlconf.size(size_raw, f"{where}.size", ExperimentError)
    if kind == "tree" and size is None:
        raise ExperimentError(f"{where}: a generated tree needs a size (e.g. size = '2GB')")
    return DataSpec(kind, size)


def _parse_sweep(data: Any, where: str, default_duration: float) -> SweepSpec:
    t = Table(data, where, ExperimentError)
    streams = t.get("streams", list)
    duration = t.number("duration", default_duration, 1.0)
    reps = t.get("repetitions", int, 1)
    t.done()
    if not streams or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in streams
    ):
        raise ExperimentError(f"{where}: streams must be a non-empty list of integers >= 1")
    if reps < 1:
        raise ExperimentError(f"{where}: repetitions must be >= 1, got {reps}")
    return SweepSpec(tuple(sorted(set(streams))), float(duration), reps)


def parse_experiment(data: dict[str, Any], source: str, default_name: str) -> Experiment:
    """Validate a parsed TOML document into an :class:`Experiment` (errors name ``source``)."""
    t = Table(data, source, ExperimentError)
    name = t.get("name", str, default_name)
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}", name):
        raise ExperimentError(
            f"{source}: name {name!r} must be 1-40 letters, digits, '-', '_', '.'"
        )
    scenario = t.get("scenario", str)
    policies_raw = t.get("policies", list)
    if not policies_raw:
        raise ExperimentError(f"{source}: policies must list at least one policy")
    policies = tuple(_check_policy(p, f"{source}: policies") for p in policies_raw)
    if len(set(policies)) != len(policies):
        raise ExperimentError(f"{source}: policies must be unique, got {list(policies)}")
    reps = t.get("repetitions", int, 1)
    if not 1 <= reps <= 100:
        raise ExperimentError(f"{source}: repetitions must be 1..100, got {reps}")
    duration = float(t.number("duration", 60.0, 1.0, 86_400.0))
    rate_raw = t.get("stream_rate", (str, int, float), None)
    cc = t.get("cc", str, None)
    if cc is not None and cc not in CONGESTION_CONTROLS:
        raise ExperimentError(f"{source}: cc {cc!r} is not one of {', '.join(CONGESTION_CONTROLS)}")
    lo, hi = t.get("min_streams", int, 1), t.get("max_streams", int, 64)
    if not 1 <= lo <= hi <= 1024:
        raise ExperimentError(
            f"{source}: need 1 <= min_streams ({lo}) <= max_streams ({hi}) <= 1024"
        )
    mi = float(t.number("mi", 1.0, 0.05, 60.0))
    starts, receiver = _parse_transfers(
        t.get("transfers", dict, {"count": 1}), f"{source}: [transfers]"
    )
    dspec = _parse_data(t.get("data", dict, {}), f"{source}: [data]")
    sweep_raw = t.get("sweep", dict, None)
    sweep = None if sweep_raw is None else _parse_sweep(sweep_raw, f"{source}: [sweep]", duration)
    exp = Experiment(
        name=name,
        description=t.get("description", str, ""),
        scenario=scenario,
        policies=policies,
        repetitions=reps,
        duration_s=duration,
        stream_rate_bps=None
        if rate_raw is None
        else tomlconf.rate(rate_raw, f"{source}: stream_rate", ExperimentError),
        cc=cc,
        min_streams=lo,
        max_streams=hi,
        mi_s=mi,
        starts_s=starts,
        receiver=receiver,
        data=dspec,
        sweep=sweep,
        source=source,
    )
    t.done()
    return exp


def experiment_path(name_or_path: str | Path) -> Path:
    """Resolve an experiment name (``configs/experiments/NAME.toml``) or a file path."""
    return config_path(name_or_path, CONFIG_DIR)


def load_experiment(name_or_path: str | Path) -> Experiment:
    """Load and validate an experiment by name or path; raises :class:`ExperimentError`."""
    data, path = read_named(name_or_path, CONFIG_DIR, "experiment", ExperimentError)
    return parse_experiment(data, str(path), path.stem)
