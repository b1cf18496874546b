"""The campaign file: one TOML document, validated on load into frozen dataclasses.

A campaign names SSH-reachable hosts, the links between them (a sender host, a receiver host
and what the network between them is expected to do), the matrix of links x policies x
repetitions, how each run moves data (memory-to-memory or a real tree), and the calibration
step that must pass before any data is collected. Layout (see ``configs/campaigns/``)::

    name = "chameleon-uc-tacc"
    [matrix]      policies, repetitions, links, order
    [run]         duration_s, mi_s, min/max streams, cc, transport, timeout_s, extra_args
    [dataset]     kind = "mem" (count x size) | "tree" (path on the sender host)
    [calibration] pings, streams, duration_s, tolerances
    [[hosts]]     name, host, port, user, key, role, data_addr, python, workdir, known_hosts
    [[links]]     name, testbed, sender, receiver, port, expected_rtt_ms, expected_goodput

Errors are :class:`CampaignError` and name the file and the key that is wrong.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xfer.tomlconf import build, check_unknown, read_toml

ROLES = ("sender", "receiver", "both")
DATASET_KINDS = ("mem", "tree")
ORDERS = ("interleaved", "grouped")
_UNITS = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class CampaignError(ValueError):
    """The campaign file is wrong (the user's input); the message says where."""


def parse_quantity(value: str | int | float, *, unit: str, where: str) -> float:
    """Parse ``"1G"``, ``"940Mbit"``, ``"9.4 Gbit/s"`` or a plain number (decimal prefixes).

    ``unit`` is the suffix allowed after the prefix (``"bit"`` for rates, ``"B"`` for sizes);
    it may be omitted.
    """
    if isinstance(value, bool):
        raise CampaignError(f"{where}: expected a number or a string like '1G', got {value!r}")
    if isinstance(value, int | float):
        return float(value)
    text = str(value).strip().replace(" ", "")
    if text.endswith("/s"):
        text = text[:-2]
    m = re.fullmatch(rf"([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)([KMGTkmgt]?)(?:{unit})?", text)
    if m is None:
        raise CampaignError(f"{where}: cannot read {value!r} (expected e.g. '1G' or '10{unit}')")
    return float(m.group(1)) * _UNITS[m.group(2).upper()]


@dataclass(frozen=True, slots=True)
class HostSpec:
    """One machine reached over SSH."""

    name: str
    """Short unique name used by links and in run ids (e.g. ``uc``, ``tacc``)."""
    host: str
    """SSH address (name or IP) of the machine's management interface."""
    role: str
    """``sender``, ``receiver`` or ``both``: what links may use this host as."""
    port: int = 22
    """SSH port."""
    user: str | None = None
    """SSH user; ``None`` uses the local user name (Chameleon images use ``cc``)."""
    key: str | None = None
    """Private key file (``~`` and paths relative to the campaign file are expanded)."""
    data_addr: str | None = None
    """Address the data path uses (receivers listen on it); ``None`` means ``host``."""
    python: str = "python3"
    """Python interpreter on the host (>= 3.11) used to create xfer's venv."""
    workdir: str = "xfer-campaign"
    """Directory on the host for the venv, receiver roots and run logs (relative to home)."""
    known_hosts: str | None = None
    """known_hosts file to check the host key against; ``"none"`` disables the check
    (only for freshly provisioned testbed nodes); ``None`` uses ``~/.ssh/known_hosts``."""
    install: str = "venv"
    """``venv``: install the wheel into ``WORKDIR/venv`` (made with --system-site-packages);
    ``none``: use the ``xfer`` already on the host's PATH."""

    @property
    def addr(self) -> str:
        """The data-path address of this host."""
        return self.data_addr or self.host


@dataclass(frozen=True, slots=True)
class LinkSpec:
    """A sender host, a receiver host, and what the path between them should measure."""

    name: str
    """Unique link name (goes into run ids and the ``link`` meta key)."""
    sender: str
    """Name of the host that runs ``xfer send``."""
    receiver: str
    """Name of the host that runs ``xfer recv``."""
    expected_rtt_ms: float
    """Round-trip time the calibration must measure (idle ping, median), milliseconds."""
    expected_goodput_bps: float
    """Bottleneck goodput the calibration's multi-stream send must reach, bits per second
    (write ``expected_goodput = "9.4Gbit"`` in the file)."""
    testbed: str = "testbed"
    """Testbed label for the report (``chameleon``, ``cloudlab``...); one box-plot group each."""
    port: int = 5201
    """TCP port the receiver listens on (on the receiver's ``data_addr``)."""


@dataclass(frozen=True, slots=True)
class MatrixSpec:
    """Which runs the campaign is made of."""

    policies: tuple[str, ...]
    """Controller specs compared (``ppo``, ``gd``, ``bo``, ``fixed:8``...)."""
    repetitions: int = 10
    """Runs per (link, policy)."""
    links: tuple[str, ...] = ()
    """Links to use; empty means every link of the file."""
    order: str = "interleaved"
    """``interleaved``: repetition-major (each policy once, then again), which spreads
    time-of-day effects over policies; ``grouped``: all repetitions of a policy in a row."""


@dataclass(frozen=True, slots=True)
class RunSpecs:
    """How each ``xfer send`` of the matrix is run."""

    duration_s: float | None = None
    """Send for this many seconds (memory-to-memory only); ``None`` sends the whole dataset."""
    mi_s: float = 1.0
    """Monitoring interval (``--mi``)."""
    min_streams: int = 1
    """``--min-streams``."""
    max_streams: int = 32
    """``--max-streams``."""
    cc: str | None = None
    """``--cc`` (cubic, bbr, reno); ``None`` keeps the engine's default."""
    transport: str = "tcp"
    """``--transport`` (tcp or mptcp)."""
    stream_rate: str | None = None
    """``--stream-rate`` per-stream cap (the paper's 50 Mbit/s throttling), or ``None``."""
    timeout_s: float = 3600.0
    """A run that takes longer than this is killed and marked failed."""
    pause_s: float = 0.0
    """Seconds to wait between runs (lets queues drain)."""
    extra_args: tuple[str, ...] = ()
    """More arguments passed verbatim to ``xfer send``."""


@dataclass(frozen=True, slots=True)
class DatasetSpec:
    """What each run moves."""

    kind: str = "mem"
    """``mem``: memory-to-memory (``xfer send --mem``); ``tree``: files under ``path``."""
    count: int = 1
    """Number of files (memory-to-memory: the paper's 500 x 1 GB is count=500, size=1G)."""
    size_bytes: float = 1e9
    """Bytes per file (write ``size = "1G"``)."""
    path: str | None = None
    """``tree`` only: the directory or file on the sender host to send."""

    @property
    def total_bytes(self) -> int:
        """Bytes per run for memory-to-memory datasets."""
        return int(self.count * self.size_bytes)


@dataclass(frozen=True, slots=True)
class CalibrationSpec:
    """The check that must pass on every link before any data is collected."""

    pings: int = 10
    """ICMP echo requests sent from the sender to the receiver's data address."""
    streams: int = 8
    """Streams of the calibration send (``--policy fixed:N``)."""
    duration_s: float = 10.0
    """Seconds of the calibration send (memory-to-memory)."""
    rtt_tolerance: float = 0.25
    """Allowed relative deviation of the median ping RTT from ``expected_rtt_ms``."""
    rtt_slack_ms: float = 1.0
    """Absolute slack added to the RTT tolerance (sub-millisecond links jitter)."""
    goodput_tolerance: float = 0.2
    """Allowed relative deviation of the goodput from ``expected_goodput`` (both ways: a
    faster path than expected is the wrong path too)."""


@dataclass(frozen=True, slots=True)
class Campaign:
    """A whole campaign file."""

    name: str
    """Campaign name (meta key ``campaign``; default output directory ``runs/NAME``)."""
    hosts: tuple[HostSpec, ...]
    """Every machine the campaign uses."""
    links: tuple[LinkSpec, ...]
    """Every sender/receiver pair the campaign may use."""
    matrix: MatrixSpec
    """The runs."""
    run: RunSpecs = field(default_factory=RunSpecs)
    """How each run is sent."""
    dataset: DatasetSpec = field(default_factory=DatasetSpec)
    """What each run moves."""
    calibration: CalibrationSpec = field(default_factory=CalibrationSpec)
    """The pre-flight check."""
    description: str = ""
    """Free text."""
    source: str = ""
    """Path of the file this was loaded from (empty when built in code)."""

    def host(self, name: str) -> HostSpec:
        """The host called ``name``."""
        for h in self.hosts:
            if h.name == name:
                return h
        raise KeyError(name)

    def selected_links(self) -> tuple[LinkSpec, ...]:
        """The links the matrix uses, in file order."""
        if not self.matrix.links:
            return self.links
        return tuple(lk for lk in self.links if lk.name in self.matrix.links)


def _build(
    cls: Any, data: Any, where: str, rename: dict[str, tuple[str, str]] | None = None
) -> Any:
    """Build dataclass ``cls`` from a TOML table, with errors naming ``where``.

    ``rename`` maps a file key to (field name, unit) for quantities written with units.
    """
    convert = {
        key: (name, lambda v, w, u=unit: parse_quantity(v, unit=u, where=w))
        for key, (name, unit) in (rename or {}).items()
    }
    return build(
        cls,
        data,
        where,
        CampaignError,
        convert=convert,
        exclude=frozenset({"source"}),
        unknown="{where}: unknown key {first!r}; allowed: {allowed}",
    )


def _check_positive(where: str, **values: float | int | None) -> None:
    for key, v in values.items():
        if v is not None and v <= 0:
            raise CampaignError(f"{where}.{key}: must be > 0, got {v}")


def _load_hosts(raw: Any, where: str, base: Path) -> tuple[HostSpec, ...]:
    if not isinstance(raw, list) or not raw:
        raise CampaignError(f"{where}: need at least one [[hosts]] table")
    hosts = []
    for i, item in enumerate(raw):
        h: HostSpec = _build(HostSpec, item, f"{where}[{i}]")
        if not _NAME_RE.match(h.name):
            raise CampaignError(f"{where}[{i}].name: {h.name!r} must be letters, digits, _.-")
        if h.role not in ROLES:
            raise CampaignError(f"{where}[{i}].role: expected one of {ROLES}, got {h.role!r}")
        if h.install not in ("venv", "none"):
            raise CampaignError(
                f"{where}[{i}].install: expected 'venv' or 'none', got {h.install!r}"
            )
        if h.key is not None:
            key = Path(h.key).expanduser()
            h = dataclasses.replace(h, key=str(key if key.is_absolute() else base / key))
        if h.known_hosts not in (None, "none"):
            kh = Path(str(h.known_hosts)).expanduser()
            h = dataclasses.replace(h, known_hosts=str(kh if kh.is_absolute() else base / kh))
        hosts.append(h)
    names = [h.name for h in hosts]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise CampaignError(f"{where}: duplicate host name(s): {', '.join(sorted(dup))}")
    return tuple(hosts)


def _load_links(raw: Any, where: str, hosts: tuple[HostSpec, ...]) -> tuple[LinkSpec, ...]:
    if not isinstance(raw, list) or not raw:
        raise CampaignError(f"{where}: need at least one [[links]] table")
    by_name = {h.name: h for h in hosts}
    rename = {"expected_goodput": ("expected_goodput_bps", "bit")}
    links = []
    for i, item in enumerate(raw):
        lk: LinkSpec = _build(LinkSpec, item, f"{where}[{i}]", rename)
        w = f"{where}[{i}]"
        if not _NAME_RE.match(lk.name):
            raise CampaignError(f"{w}.name: {lk.name!r} must be letters, digits, _.-")
        for end, want in (("sender", "sender"), ("receiver", "receiver")):
            hname = getattr(lk, end)
            if hname not in by_name:
                raise CampaignError(
                    f"{w}.{end}: no host named {hname!r} (hosts: {', '.join(by_name)})"
                )
            if by_name[hname].role not in (want, "both"):
                raise CampaignError(f"{w}.{end}: host {hname!r} has role {by_name[hname].role!r}")
        _check_positive(
            w, expected_rtt_ms=lk.expected_rtt_ms, expected_goodput=lk.expected_goodput_bps
        )
        links.append(lk)
    names = [lk.name for lk in links]
    if len(set(names)) != len(names):
        raise CampaignError(f"{where}: duplicate link names in {names}")
    return tuple(links)


def _load_sections(doc: dict[str, Any], where: str) -> dict[str, Any]:
    matrix: MatrixSpec = _build(MatrixSpec, doc.get("matrix"), f"{where}[matrix]")
    if not matrix.policies:
        raise CampaignError(f"{where}[matrix].policies: list at least one policy")
    if len(set(matrix.policies)) != len(matrix.policies):
        raise CampaignError(f"{where}[matrix].policies: duplicates in {list(matrix.policies)}")
    if matrix.order not in ORDERS:
        raise CampaignError(
            f"{where}[matrix].order: expected one of {ORDERS}, got {matrix.order!r}"
        )
    _check_positive(f"{where}[matrix]", repetitions=matrix.repetitions)
    run: RunSpecs = _build(RunSpecs, doc.get("run", {}), f"{where}[run]")
    _check_positive(
        f"{where}[run]", duration_s=run.duration_s, mi_s=run.mi_s, timeout_s=run.timeout_s
    )
    if not 1 <= run.min_streams <= run.max_streams:
        raise CampaignError(f"{where}[run]: need 1 <= min_streams <= max_streams")
    ds: DatasetSpec = _build(
        DatasetSpec, doc.get("dataset", {}), f"{where}[dataset]", {"size": ("size_bytes", "B")}
    )
    if ds.kind not in DATASET_KINDS:
        raise CampaignError(
            f"{where}[dataset].kind: expected one of {DATASET_KINDS}, got {ds.kind!r}"
        )
    if ds.kind == "tree" and not ds.path:
        raise CampaignError(f"{where}[dataset].path: a 'tree' dataset needs the path to send")
    if ds.kind == "tree" and run.duration_s is not None:
        raise CampaignError(f"{where}[run].duration_s: only memory-to-memory runs can be timed")
    _check_positive(f"{where}[dataset]", count=ds.count, size=ds.size_bytes)
    cal: CalibrationSpec = _build(
        CalibrationSpec, doc.get("calibration", {}), f"{where}[calibration]"
    )
    _check_positive(
        f"{where}[calibration]",
        pings=cal.pings,
        streams=cal.streams,
        duration_s=cal.duration_s,
        rtt_tolerance=cal.rtt_tolerance,
        goodput_tolerance=cal.goodput_tolerance,
    )
    return {"matrix": matrix, "run": run, "dataset": ds, "calibration": cal}


def campaign_from_dict(
    doc: dict[str, Any], *, source: str = "<dict>", base: Path | None = None
) -> Campaign:
    """Validate a parsed campaign document (``base``: directory for relative key paths)."""
    where = source
    known = {"name", "description", "hosts", "links", "matrix", "run", "dataset", "calibration"}
    check_unknown(
        doc,
        known,
        where,
        CampaignError,
        "{where}: unknown top-level key(s) {listed}; allowed: {allowed}",
    )
    name = doc.get("name")
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise CampaignError(
            f"{where}: 'name' must be a string of letters, digits, _.- (got {name!r})"
        )
    base = base or Path.cwd()
    hosts = _load_hosts(doc.get("hosts"), f"{where}[[hosts]]", base)
    links = _load_links(doc.get("links"), f"{where}[[links]]", hosts)
    sections = _load_sections(doc, where)
    wanted = set(sections["matrix"].links) - {lk.name for lk in links}
    if wanted:
        raise CampaignError(f"{where}[matrix].links: unknown link(s) {sorted(wanted)}")
    return Campaign(
        name=name,
        hosts=hosts,
        links=links,
        description=str(doc.get("description", "")),
        source=source,
        **sections,
    )


def load_campaign(path: str | Path) -> Campaign:
    """Read and validate a campaign TOML file."""
    p = Path(path)
    doc = read_toml(p, CampaignError, lambda: f"{p}: no such campaign file")
    return campaign_from_dict(doc, source=str(p), base=p.resolve().parent)
