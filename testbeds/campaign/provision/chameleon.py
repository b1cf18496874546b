"""Chameleon through python-chi: reserve and launch one bare-metal node at each of two sites
(the paper's server at CHI@UC, client at CHI@TACC, 10 Gbit/s NICs).

Live only (needs a Chameleon account: an OpenStack RC file or ``chi.context`` settings, see
``docs/campaigns.md``). :func:`plan` is pure and says what will be asked for;
:func:`reserve_and_launch` does it, site by site: a Blazar lease for one node of the chosen
type, a server on the reservation with your key pair, a floating IP, and a wait until SSH
answers. The result is the :class:`ProvisionedHost` list for :func:`hosts_toml`. Data goes
over the floating IPs (the sites are joined by the wide area), so ``data_addr`` is unset.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from testbeds.campaign.provision.common import ProvisionedHost


@dataclass(frozen=True, slots=True)
class ChameleonNode:
    """One node to reserve."""

    name: str
    """Host name in the campaign (``uc``, ``tacc``); also used in the lease/server names."""
    site: str
    """Chameleon site (``CHI@UC``, ``CHI@TACC``)."""
    role: str
    """``sender`` or ``receiver``."""
    node_type: str = "compute_skylake"
    """Blazar node type (the paper's Dell R740 Skylake nodes with 10 Gbit/s NICs)."""


@dataclass(frozen=True, slots=True)
class ChameleonPlan:
    """Everything :func:`reserve_and_launch` needs."""

    project: str
    """Chameleon project (``CHI-XXXXXX``)."""
    key_name: str
    """Name of your key pair registered at both sites (its private key goes in the campaign)."""
    nodes: tuple[ChameleonNode, ...] = (
        ChameleonNode("uc", "CHI@UC", "receiver"),
        ChameleonNode("tacc", "CHI@TACC", "sender"),
    )
    """The nodes; default: the paper's receiver at UC and sender at TACC."""
    prefix: str = "xfer-campaign"
    """Prefix of lease and server names (makes re-running idempotent)."""
    image: str = "CC-Ubuntu24.04"
    """Chameleon-supported image."""
    hours: float = 8.0
    """Lease duration."""


def plan(p: ChameleonPlan) -> list[dict[str, str]]:
    """What will be reserved and launched, one dict per node (pure; for review and tests)."""
    return [
        {
            "site": n.site,
            "lease": f"{p.prefix}-{n.name}",
            "server": f"{p.prefix}-{n.name}",
            "node_type": n.node_type,
            "image": p.image,
            "duration": str(timedelta(hours=p.hours)),
            "role": n.role,
        }
        for n in p.nodes
    ]


def _launch_one(
    p: ChameleonPlan, node: ChameleonNode
) -> ProvisionedHost:  # pragma: no cover - live
    import chi
    import chi.lease
    import chi.server

    chi.context.use_site(node.site)
    chi.context.use_project(p.project)
    lease = chi.lease.Lease(f"{p.prefix}-{node.name}", duration=timedelta(hours=p.hours))
    lease.add_node_reservation(amount=1, node_type=node.node_type)
    lease.submit(idempotent=True, wait_for_active=True, wait_timeout=1800)
    server = chi.server.Server(
        f"{p.prefix}-{node.name}",
        reservation_id=lease.node_reservations[0]["id"],
        image_name=p.image,
        key_name=p.key_name,
    )
    server.submit(idempotent=True, wait_for_active=True)
    fip = server.get_floating_ip() or server.associate_floating_ip()
    server.check_connectivity(host=fip, show=None)
    return ProvisionedHost(name=node.name, host=str(fip), user="cc", role=node.role, site=node.site)


def reserve_and_launch(p: ChameleonPlan) -> list[ProvisionedHost]:  # pragma: no cover - live
    """Live: lease, launch and wait for every node; returns the campaign's hosts."""
    return [_launch_one(p, node) for node in p.nodes]


def release(p: ChameleonPlan) -> None:  # pragma: no cover - live
    """Live: delete the servers and leases made by :func:`reserve_and_launch`."""
    import chi
    import chi.lease
    import chi.server

    for node in p.nodes:
        chi.context.use_site(node.site)
        chi.context.use_project(p.project)
        try:
            chi.server.get_server(f"{p.prefix}-{node.name}").delete()
        except Exception as exc:  # noqa: BLE001 - report and go on releasing the rest
            print(f"{node.site}: server: {exc}")
        chi.lease.delete_lease(f"{p.prefix}-{node.name}")
