"""Test layers: tests/unit (in-memory), tests/local (loopback sockets), tests/netns (root,
network namespaces; marker ``netns``)."""

from __future__ import annotations

import os
import shutil

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    can_netns = os.geteuid() == 0 and shutil.which("ip") is not None
    for item in items:
        if "netns" in str(item.fspath):
            item.add_marker(pytest.mark.netns)
        if item.get_closest_marker("netns") and not can_netns:
            item.add_marker(pytest.mark.skip(reason="needs root and iproute2 (network namespaces)"))
