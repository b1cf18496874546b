"""The configurations of the two sides: one frozen dataclass each, the single source of truth
that the library API and the command line map onto.

Each field carries, next to its default and docstring, how it appears on the command line
(:class:`Cli` in the field's metadata): ``xfer/cli_options.py`` turns that into the click
options of ``xfer send`` and ``xfer recv``, so no default or choice is written twice. The
engine never reads the metadata.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field
from typing import Any, TypeVar, dataclass_transform

from xfer.addr import split_hostport
from xfer.transport import TRANSPORTS
from xfer.units import parse_rate, parse_size


def is_loopback(host: str) -> bool:
    """Only the name ``localhost`` and literal loopback addresses count: a host name such as
    ``127.attacker.example`` may resolve anywhere."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


__all__ = [
    "DEFAULT_POLICY",
    "Cli",
    "ReceiverConfig",
    "SenderConfig",
    "parse_rate",
    "parse_size",
]

ENCRYPTION = ("auto", "on", "off")
"""Values of ``--encryption`` (sender and receiver)."""


def check_encryption(value: str) -> None:
    """Refuse an ``--encryption`` value that is not one of :data:`ENCRYPTION`."""
    if value not in ENCRYPTION:
        raise ValueError(f"--encryption must be one of {', '.join(ENCRYPTION)}")


DEFAULT_POLICY = "ppo"
"""The controller used when neither --streams nor --policy is given: the shipped PPO policy."""


@dataclass(frozen=True, slots=True)
class Cli:
    """How one config field appears on the command line (the metadata key ``"cli"``)."""

    flags: tuple[str, ...] = ()
    """The option's names (``--stream-rate``, ``--endgame/--no-endgame``); empty: no option."""
    help: str | None = None
    """Its ``--help`` text."""
    metavar: str | None = None
    """The placeholder shown in ``--help`` (``SIZE``, ``RATE``)."""
    parse: Callable[[Any], Any] | None = None
    """Turns what was typed into the field's value (rates, sizes, KEY=VALUE pairs); its
    ValueError is the user's error message."""
    typed_default: str | None = None
    """The default as a user would type it (``4MiB``), shown by ``--help`` and parsed."""
    choices: tuple[str, ...] = ()
    """The accepted values, if they are a fixed list."""
    int_range: tuple[int, int] | None = None
    """Inclusive bounds of an integer option."""
    invert: bool = False
    """A ``--no-X`` flag that sets the field to False."""
    multiple: bool = False
    """Repeatable; ``parse`` gets the tuple of every value given."""
    directory: bool = False
    """The value is a directory path."""
    why_not: str = ""
    """For a field that is not an option: where its value comes from instead."""


def option(*flags: str, default: Any = MISSING, default_factory: Any = MISSING, **how: Any) -> Any:
    """A dataclass field set by the option ``flags``; ``how`` are :class:`Cli`'s fields."""
    cli = Cli(flags, **how)
    return field(default=default, default_factory=default_factory, metadata={"cli": cli})


def no_option(why: str, default: Any = MISSING) -> Any:
    """A dataclass field with no option of its own; ``why`` says where its value comes from."""
    return field(default=default, metadata={"cli": Cli(why_not=why)})


_C = TypeVar("_C")


@dataclass_transform(frozen_default=True, field_specifiers=(option, no_option))
def config_class(cls: type[_C]) -> type[_C]:
    """``@dataclass(frozen=True, slots=True)`` that type checkers read through :func:`option`
    and :func:`no_option`: a field without ``default`` stays required (``SenderConfig()``
    without ``address`` is a type error, not only a run-time one)."""
    return dataclass(frozen=True, slots=True)(cls)


def _meta_pairs(pairs: tuple[str, ...]) -> dict[str, str]:
    """``--meta KEY=VALUE`` (repeatable) to a dict; items without ``=`` are ignored."""
    return dict(p.split("=", 1) for p in pairs if "=" in p)


_TOKEN = "--token-file or $XFER_TOKEN, read by the command (no secret on the command line)"
_LIBRARY = "library only (tests and embedders set it)"


@config_class
class SenderConfig:
    """Everything ``xfer send`` can be told."""

    address: str = no_option("the last argument (HOST:PORT, or over SSH)")
    """Receiver's HOST:PORT."""
    paths: tuple[str, ...] = no_option("the arguments before it", default=())
    """Files and directory trees to send (recreated under the receiver's root)."""
    mem: bool = no_option("on when --mem or --duration is given", default=False)
    """Memory-to-memory mode: generated data, discarded by the receiver (benchmarks)."""
    mem_size: int | None = option(
        "--mem",
        default=None,
        metavar="SIZE",
        parse=parse_size,
        help="Memory-to-memory: send SIZE of generated data (e.g. 10G).",
    )
    """Bytes to send in memory mode (None: until ``duration``)."""
    duration: float | None = option(
        "--duration", default=None, help="Memory mode: send for this many seconds."
    )
    """Seconds to send in memory mode (like ``iperf3 -t``)."""
    streams: int | None = option(
        "--streams",
        default=None,
        int_range=(1, 1024),
        help="Fixed number of streams (= --policy fixed:N).",
    )
    """Fixed number of streams (shorthand for ``--policy fixed:N``)."""
    policy: str | None = option(
        "--policy",
        default=None,
        help="Stream controller NAME[:ARGS]: fixed, schedule, gd, bo, ppo "
        f"[default: {DEFAULT_POLICY}].",
    )
    """Controller spec ``NAME[:ARGS]`` (fixed, schedule, gd, bo, ppo)."""
    min_streams: int = option("--min-streams", default=1, int_range=(1, 1024))
    """Lower bound on the number of streams."""
    max_streams: int = option("--max-streams", default=64, int_range=(1, 1024))
    """Upper bound on the number of streams."""
    mi: float = option("--mi", default=1.0, help="Monitoring interval, seconds.")
    """Monitoring interval, seconds."""
    stream_rate_bps: float | None = option(
        "--stream-rate",
        default=None,
        metavar="RATE",
        parse=parse_rate,
        help="Per-stream cap (SO_MAX_PACING_RATE), e.g. 50Mbit.",
    )
    """Per-stream cap in bit/s (SO_MAX_PACING_RATE)."""
    cc: str | None = option(
        "--cc",
        default=None,
        choices=("cubic", "bbr", "reno", "auto"),
        help="TCP congestion control per stream; auto: a learner picks it for new streams.",
    )
    """TCP congestion control per stream (cubic, bbr, reno), ``auto`` to let a learner choose
    for new streams as conditions change, or None for the system default."""
    transport: str = option("--transport", default="tcp", choices=tuple(sorted(TRANSPORTS)))
    """Data stream transport: tcp or mptcp."""
    dest: str = option(
        "--dest", default="", help="Sub-directory of the receiver's root to write into."
    )
    """Sub-directory under the receiver's root to place everything in."""
    block_size: int = option(
        "--block-size",
        default=4 << 20,
        parse=parse_size,
        typed_default="4MiB",
        help="Largest block (each stream's blocks hold about one MI of its rate; fixed with "
        "--no-endgame).",
    )
    """Largest block. With ``endgame`` each stream's blocks hold about what it moves in one
    MI (128 KiB up to this, and small near the end); without it every block is this size."""
    endgame: bool = option(
        "--endgame/--no-endgame",
        default=True,
        help="At the end, idle streams carry copies of the slowest blocks and the stream "
        "count is held (drain); off: fixed blocks, the controller asked to the last MI.",
    )
    """The end of a transfer: once every block is in flight, idle streams carry copies of
    the oldest unconfirmed blocks (the first verified copy wins, a slower one is abandoned)
    and the stream count is left alone (drain MIs are marked, the controller is not asked);
    blocks are sized to each stream. Off: fixed blocks, no copies, the controller asked every
    MI (the behaviour before 0.2, kept for comparisons)."""
    checksum: bool = option(
        "--no-checksum", default=True, invert=True, help="Do not checksum blocks (benchmarks only)."
    )
    """Checksum every block end to end (xxh3-64)."""
    redundancy: bool = option(
        "--redundancy/--no-redundancy",
        default=False,
        help="Re-send the blocks of a stalled stream on the other streams (EdAR-style hedging).",
    )
    """Hedge: when a stream's ACKs stop for longer than its RTO-like timeout (srtt + 4 rttvar,
    learned from the kernel's RTT), re-send its blocks on other streams (EdAR-style; the
    receiver drops duplicates by offset). Off by default; the measurement that decided it is in
    docs/mptcp.md (hedging)."""
    token: bytes | None = no_option(_TOKEN, default=None)
    """Shared secret for the receiver (None: no authentication)."""
    encryption: str = option(
        "--encryption",
        default="auto",
        choices=ENCRYPTION,
        help="AES-256-GCM on every block and control frame; auto: on unless the peer is loopback.",
    )
    """AES-256-GCM on every data block and control frame: ``on``, ``off``, or ``auto`` (on
    unless the receiver's address is loopback)."""
    stall_timeout: float = option(
        "--stall-timeout", default=30.0, help="Drop a stream without progress for this long (s)."
    )
    """Seconds without progress after which a stream is dropped and its blocks re-queued."""
    connect_timeout: float = no_option(_LIBRARY, default=15.0)
    """Seconds allowed for connecting and for each handshake step."""
    max_retries: int = no_option(_LIBRARY, default=3)
    """Times a block may fail verification before the transfer fails."""
    meta: dict[str, str] = option(
        "--meta",
        default_factory=dict,
        multiple=True,
        metavar="KEY=VALUE",
        parse=_meta_pairs,
        help="Run metadata for the log (repeatable).",
    )
    """Free-form run metadata (scenario, host, ...), written to the run log."""

    def __post_init__(self) -> None:
        if self.mem and self.paths:
            raise ValueError("give either paths or --mem, not both")
        if not self.mem and not self.paths:
            raise ValueError("nothing to send: give one or more paths, or --mem SIZE")
        if self.mem and self.mem_size is None and self.duration is None:
            raise ValueError("memory mode needs a size (--mem SIZE) or --duration")
        if self.streams is not None and self.policy is not None:
            raise ValueError("--streams N is --policy fixed:N; give one of them")
        if not 0.05 <= self.mi <= 60:
            raise ValueError(f"--mi must be within 0.05..60 s, got {self.mi}")
        if not 4096 <= self.block_size <= 64 << 20:
            raise ValueError("block size must be within 4 KiB..64 MiB")
        check_encryption(self.encryption)
        for p in self.paths:
            if not os.path.exists(p):
                raise ValueError(f"{p}: no such file or directory")

    @property
    def encrypt(self) -> bool:
        """Whether this transfer encrypts (``auto`` resolved against the address)."""
        if self.encryption != "auto":
            return self.encryption == "on"
        host = self.address.rpartition(":")[0].strip("[]")
        return not is_loopback(host)

    @property
    def policy_spec(self) -> str:
        if self.streams is not None:
            return f"fixed:{self.streams}"
        return self.policy or DEFAULT_POLICY


@config_class
class ReceiverConfig:
    """Everything ``xfer recv`` can be told."""

    root: str = option("--root", directory=True, help="Write everything under this directory.")
    """Directory under which everything is written (created if missing)."""
    listen: str = option("--listen", default="127.0.0.1:5000", help="HOST:PORT to listen on.")
    """HOST:PORT to listen on (port 0 picks a free port)."""
    token: bytes | None = no_option(_TOKEN, default=None)
    """Shared secret; ``None`` means no authentication (loopback only unless ``insecure``)."""
    insecure: bool = option(
        "--insecure", default=False, help="Allow a non-loopback listener without a token."
    )
    """Allow listening on a non-loopback address without a token."""
    once: bool = option("--once", default=False, help="Exit after the first session.")
    """Exit after the first session ends."""
    fsync: bool = option(
        "--no-fsync",
        default=True,
        invert=True,
        help="Skip fdatasync before journaling and renaming (faster, less durable).",
    )
    """fdatasync data before journaling it and before the final rename."""
    max_sessions: int = option("--max-sessions", default=32, help="Concurrent sessions.")
    """Concurrent sessions; more are refused with a clear error."""
    max_streams: int = no_option(_LIBRARY, default=256)
    """Data connections per session."""
    max_block: int = no_option(_LIBRARY, default=16 << 20)
    """Largest block accepted, advertised in READY (senders use no larger blocks). Receive
    memory per session is bounded by ``max_streams * max_block``."""
    max_files: int = no_option(_LIBRARY, default=2_000_000)
    """Entries per manifest."""
    max_open_files: int = no_option(_LIBRARY, default=128)
    """Partial files kept open per session."""
    handshake_timeout: float = no_option(_LIBRARY, default=15.0)
    """Seconds a new connection has to identify itself."""
    max_pending: int = no_option(_LIBRARY, default=512)
    """Connections accepted but not yet identified (first frame); more are closed at once."""
    encryption: str = option(
        "--encryption",
        default="auto",
        choices=ENCRYPTION,
        help="auto: encrypt when the sender asks; on: refuse senders in clear; off: refuse "
        "encryption.",
    )
    """``auto``: encrypt the sessions whose sender asks for it; ``on``: refuse senders that
    do not; ``off``: refuse senders that do."""
    stall_timeout: float = option(
        "--stall-timeout", default=60.0, help="Drop a data connection idle this long (s)."
    )
    """Seconds without progress after which a data connection is dropped."""
    sync_interval: float = no_option(_LIBRARY, default=1.0)
    """Seconds between making written data durable and journaling it."""

    def __post_init__(self) -> None:
        check_encryption(self.encryption)
        host, _ = split_hostport(self.listen)
        if self.token is None and not self.insecure and not is_loopback(host):
            raise ValueError(
                f"refusing to listen on {host} without a token: give --token-file or "
                "XFER_TOKEN, or --insecure to allow unauthenticated transfers"
            )
