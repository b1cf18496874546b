"""xfer's emulated WAN: scenarios in network namespaces, without netem.

    from testbeds import Testbed, load_scenario
    with Testbed(load_scenario("wan-1g-50ms")) as tb:
        tb.hosts["sender"].run(["ping", "-c", "3", tb.hosts["receiver"].addr])

See docs/testbed.md.
"""

from .netns import NetnsError
from .scenario import Scenario, ScenarioError, list_scenarios, load_scenario
from .testbed import Host, Testbed, TestbedError, down

__all__ = [
    "Host",
    "NetnsError",
    "Scenario",
    "ScenarioError",
    "Testbed",
    "TestbedError",
    "down",
    "list_scenarios",
    "load_scenario",
]
