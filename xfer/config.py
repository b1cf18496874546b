"""The sender's configuration: one frozen dataclass, the single source of truth that the CLI
options and the library API map onto."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field

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


__all__ = ["DEFAULT_POLICY", "SenderConfig", "parse_rate", "parse_size"]

ENCRYPTION = ("auto", "on", "off")
"""Values of ``--encryption`` (sender and receiver)."""


def check_encryption(value: str) -> None:
    """Refuse an ``--encryption`` value that is not one of :data:`ENCRYPTION`."""
    if value not in ENCRYPTION:
        raise ValueError(f"--encryption must be one of {', '.join(ENCRYPTION)}")


DEFAULT_POLICY = "ppo"
"""The controller used when neither --streams nor --policy is given: the shipped PPO policy."""


@dataclass(frozen=True, slots=True)
class SenderConfig:
    """Everything ``xfer send`` can be told."""

    address: str
    """Receiver's HOST:PORT."""
    paths: tuple[str, ...] = ()
    """Files and directory trees to send (recreated under the receiver's root)."""
    mem: bool = False
    """Memory-to-memory mode: generated data, discarded by the receiver (benchmarks)."""
    mem_size: int | None = None
    """Bytes to send in memory mode (None: until ``duration``)."""
    duration: float | None = None
    """Seconds to send in memory mode (like ``iperf3 -t``)."""
    streams: int | None = None
    """Fixed number of streams (shorthand for ``--policy fixed:N``)."""
    policy: str | None = None
    """Controller spec ``NAME[:ARGS]`` (fixed, schedule, gd, bo, ppo)."""
    min_streams: int = 1
    """Lower bound on the number of streams."""
    max_streams: int = 64
    """Upper bound on the number of streams."""
    mi: float = 1.0
    """Monitoring interval, seconds."""
    stream_rate_bps: float | None = None
    """Per-stream cap in bit/s (SO_MAX_PACING_RATE)."""
    cc: str | None = None
    """TCP congestion control per stream (cubic, bbr, reno), ``auto`` to let a learner choose
    for new streams as conditions change, or None for the system default."""
    transport: str = "tcp"
    """Data stream transport: tcp or mptcp."""
    checksum: bool = True
    """Checksum every block end to end (xxh3-64)."""
    block_size: int = 4 << 20
    """Largest block. With ``endgame`` each stream's blocks hold about what it moves in one
    MI (128 KiB up to this, and small near the end); without it every block is this size."""
    endgame: bool = True
    """The end of a transfer: once every block is in flight, idle streams carry copies of
    the oldest unconfirmed blocks (the first verified copy wins, a slower one is abandoned)
    and the stream count is left alone (drain MIs are marked, the controller is not asked);
    blocks are sized to each stream. Off: fixed blocks, no copies, the controller asked every
    MI (the behaviour before 0.2, kept for comparisons)."""
    token: bytes | None = None
    """Shared secret for the receiver (None: no authentication)."""
    dest: str = ""
    """Sub-directory under the receiver's root to place everything in."""
    stall_timeout: float = 30.0
    """Seconds without progress after which a stream is dropped and its blocks re-queued."""
    connect_timeout: float = 15.0
    """Seconds allowed for connecting and for each handshake step."""
    redundancy: bool = False
    """Hedge: when a stream's ACKs stop for longer than its RTO-like timeout (srtt + 4 rttvar,
    learned from the kernel's RTT), re-send its blocks on other streams (EdAR-style; the
    receiver drops duplicates by offset). Off by default; the measurement that decided it is in
    docs/mptcp.md (hedging)."""
    encryption: str = "auto"
    """AES-256-GCM on every data block and control frame: ``on``, ``off``, or ``auto`` (on
    unless the receiver's address is loopback)."""
    max_retries: int = 3
    """Times a block may fail verification before the transfer fails."""
    meta: dict[str, str] = field(default_factory=dict)
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
