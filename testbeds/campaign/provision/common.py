"""What a provisioning helper hands back, and how it becomes campaign TOML."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ProvisionedHost:
    """One machine a provisioning helper obtained."""

    name: str
    """Host name in the campaign (``uc``, ``tacc``, ``wisc``, ``utah``...)."""
    host: str
    """Address to SSH to (a floating IP, or the node's public control name)."""
    user: str
    """SSH user of the image (``cc`` on Chameleon; your portal user name on CloudLab)."""
    role: str
    """``sender`` or ``receiver``."""
    data_addr: str | None = None
    """Address of the data path, if not the SSH address."""
    site: str = ""
    """Where it is (``CHI@UC``, ``utah.cloudlab.us``)."""


def _q(value: str) -> str:
    return json.dumps(value)  # a TOML basic string is a JSON string for these characters


def hosts_toml(
    hosts: Sequence[ProvisionedHost],
    *,
    key: str,
    testbed: str,
    expected_rtt_ms: float,
    expected_goodput: str,
    link_name: str | None = None,
    known_hosts: str | None = None,
) -> str:
    """The ``[[hosts]]`` and ``[[links]]`` tables of a campaign file for one sender/receiver
    pair (paste them into a campaign with your matrix)."""
    senders = [h for h in hosts if h.role == "sender"]
    receivers = [h for h in hosts if h.role == "receiver"]
    if len(senders) != 1 or len(receivers) != 1:
        raise ValueError(f"need one sender and one receiver, got roles {[h.role for h in hosts]}")
    out = []
    for h in hosts:
        out += [
            "[[hosts]]",
            f"name = {_q(h.name)}",
            f"host = {_q(h.host)}",
            f"user = {_q(h.user)}",
            f"key = {_q(key)}",
            f"role = {_q(h.role)}",
        ]
        if h.data_addr:
            out.append(f"data_addr = {_q(h.data_addr)}")
        if known_hosts:
            out.append(f"known_hosts = {_q(known_hosts)}")
        if h.site:
            out.append(f"# site: {h.site}")
        out.append("")
    tx, rx = senders[0], receivers[0]
    out += [
        "[[links]]",
        f"name = {_q(link_name or f'{tx.name}-{rx.name}')}",
        f"testbed = {_q(testbed)}",
        f"sender = {_q(tx.name)}",
        f"receiver = {_q(rx.name)}",
        f"expected_rtt_ms = {expected_rtt_ms:g}",
        f"expected_goodput = {_q(expected_goodput)}",
        "",
    ]
    return "\n".join(out)
