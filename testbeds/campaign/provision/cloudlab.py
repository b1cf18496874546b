"""CloudLab through geni-lib: a two-node request at two sites (the paper's Wisconsin <-> Utah).

Offline: :func:`two_site_request` builds the RSpec request document (XML) with geni-lib;
``xfer campaign cloudlab-rspec`` writes it. Upload it as a profile in the CloudLab portal
(or send it with :func:`create_slivers`, which needs a geni-lib context built from your
portal credentials); :func:`hosts_from_manifests` turns the sites' manifests into the
campaign's hosts (``xfer campaign cloudlab-hosts MANIFEST.xml...``).

The two nodes have no layer-2 link between them: like the paper's transfers, data crosses
the wide area over the sites' routable control networks, so ``data_addr`` is the node's
public name (the default).
"""

from __future__ import annotations

from dataclasses import dataclass

from testbeds.campaign.provision.common import ProvisionedHost

SITES: dict[str, str] = {
    "utah": "urn:publicid:IDN+utah.cloudlab.us+authority+cm",
    "wisconsin": "urn:publicid:IDN+wisc.cloudlab.us+authority+cm",
    "clemson": "urn:publicid:IDN+clemson.cloudlab.us+authority+cm",
    "emulab": "urn:publicid:IDN+emulab.net+authority+cm",
}
"""CloudLab aggregates by short name, as component manager URNs."""

DEFAULT_IMAGE = "urn:publicid:IDN+emulab.net+image+emulab-ops//UBUNTU24-64-STD"
"""Ubuntu 24.04 standard image (Python 3.12, which xfer's >= 3.11 accepts)."""

SETUP_SCRIPT = (
    "sudo apt-get update -qq && sudo apt-get install -y -qq python3-venv python3-pip iputils-ping"
)
"""Run on each node at boot (an ``Execute`` service): what a campaign's install step needs."""


@dataclass(frozen=True, slots=True)
class CloudLabNode:
    """One node of the request."""

    name: str
    """Client id in the request and the host name in the campaign (``wisc``, ``utah``)."""
    site: str
    """A key of :data:`SITES`."""
    role: str
    """``sender`` or ``receiver``."""
    hardware_type: str
    """CloudLab hardware type (``xl170`` at Utah, ``c220g2`` / ``c240g5`` at Wisconsin)."""


PAPER_NODES = (
    CloudLabNode("wisc", "wisconsin", "receiver", "c220g2"),
    CloudLabNode("utah", "utah", "sender", "xl170"),
)
"""The paper's setup: server (receiver) at Wisconsin, client (sender) at Utah, 1 Gbit/s."""


def two_site_request(
    nodes: tuple[CloudLabNode, ...] = PAPER_NODES, image: str = DEFAULT_IMAGE, setup: bool = True
):  # -> geni.rspec.pg.Request (untyped library)
    """The geni-lib request for ``nodes`` (bare-metal ``RawPC`` each, pinned to its site)."""
    import geni.rspec.pg as pg

    if len({n.name for n in nodes}) != len(nodes):
        raise ValueError(f"node names must be unique: {[n.name for n in nodes]}")
    request = pg.Request()
    for spec in nodes:
        if spec.site not in SITES:
            raise ValueError(f"unknown CloudLab site {spec.site!r}; choose one of {sorted(SITES)}")
        node = pg.RawPC(spec.name)
        node.component_manager_id = SITES[spec.site]
        node.hardware_type = spec.hardware_type
        node.disk_image = image
        if setup:
            node.addService(pg.Execute(shell="bash", command=SETUP_SCRIPT))
        request.addResource(node)
    return request


def request_xml(nodes: tuple[CloudLabNode, ...] = PAPER_NODES, image: str = DEFAULT_IMAGE) -> str:
    """The RSpec request document as XML text."""
    xml: str = two_site_request(nodes, image).toXMLString(pretty_print=True, ucode=True)
    return xml


def hosts_from_manifests(
    manifests: list[str], nodes: tuple[CloudLabNode, ...] = PAPER_NODES
) -> list[ProvisionedHost]:
    """The campaign hosts from the sites' manifest documents (XML text, as the portal shows
    under *Manifest* or as :func:`create_slivers` returns): each requested node's public
    name and its SSH login (user name from the ``<login>`` service)."""
    from geni.rspec.pgmanifest import Manifest

    found: dict[str, ProvisionedHost] = {}
    wanted = {n.name: n for n in nodes}
    for xml in manifests:
        for node in Manifest(xml=xml).nodes:
            spec = wanted.get(node.client_id)
            if spec is None:
                continue
            login = next((lg for lg in node.logins if lg.auth == "ssh-keys"), None)
            host = node.hostfqdn or (login.hostname if login else None)
            if host is None:
                raise ValueError(f"manifest: node {node.client_id!r} has no host name yet")
            found[spec.name] = ProvisionedHost(
                name=spec.name,
                host=host,
                user=login.username if login else "root",
                role=spec.role,
                site=spec.site,
            )
    missing = sorted(set(wanted) - set(found))
    if missing:
        raise ValueError(f"manifest: no node(s) {missing} (is the experiment ready?)")
    return [found[n.name] for n in nodes]


def create_slivers(
    context,
    slice_name: str,
    nodes: tuple[CloudLabNode, ...] = PAPER_NODES,
    image: str = DEFAULT_IMAGE,
) -> dict[str, object]:  # pragma: no cover - live
    """Live: create the slice and a sliver at each site (needs a geni-lib context, see
    ``docs/campaigns.md``). Returns the manifests by site."""
    from geni.aggregate import cloudlab

    ams = {"utah": cloudlab.Utah, "wisconsin": cloudlab.Wisconsin, "clemson": cloudlab.Clemson}
    request = two_site_request(nodes, image)
    context.cf.createSlice(context, slice_name)
    manifests: dict[str, object] = {}
    for site in sorted({n.site for n in nodes}):
        manifests[site] = ams[site].createsliver(context, slice_name, request)
    return manifests  # str(manifest) or manifest.text gives the XML for hosts_from_manifests
