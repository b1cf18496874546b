"""Provisioning helpers: thin layers over the testbeds' own libraries (python-chi for
Chameleon, geni-lib for CloudLab) that end in the host list a campaign file needs.

Both produce :class:`ProvisionedHost` records; :func:`hosts_toml` turns them (and the link
between them) into the ``[[hosts]]``/``[[links]]`` part of a campaign file.
"""

from __future__ import annotations

from testbeds.campaign.provision.common import ProvisionedHost, hosts_toml

__all__ = ["ProvisionedHost", "hosts_toml"]
