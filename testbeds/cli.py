"""``xfer testbed``: bring scenarios up and down, run commands in their hosts, calibrate."""

from __future__ import annotations

import os
import sys
import time

import click

from .calibrate import as_json, calibrate, report
from .delayline import DelayLineError
from .netns import NetnsError, in_use, running_testbeds
from .scenario import Scenario, ScenarioError, list_scenarios, load_scenario
from .testbed import Testbed, TestbedError
from .testbed import down as tb_down

SETUP_ERRORS = (TestbedError, NetnsError, DelayLineError)


def _load(scenario: str) -> Scenario:
    try:
        return load_scenario(scenario)
    except ScenarioError as exc:
        raise click.ClickException(str(exc)) from exc


def _pick(name: str | None) -> str:
    if name:
        return name
    up = [n for n in running_testbeds() if not in_use(n)] or running_testbeds()
    if len(up) != 1:
        raise click.ClickException(
            f"{len(up)} testbeds are up ({', '.join(up) or 'none'}): name one with --name"
        )
    return up[0]


@click.group("testbed")
def testbed() -> None:
    """Emulated WAN in network namespaces (scenarios in configs/testbeds/)."""


@testbed.command("list")
def list_cmd() -> None:
    """List shipped scenarios and testbeds that are up."""
    for name in list_scenarios():
        click.echo(f"scenario  {name:<18} {_load(name).description}")
    for name in running_testbeds():
        click.echo(f"up        {name}")


@testbed.command("up")
@click.argument("scenario")
@click.option("--name", help="Testbed name (default: the scenario name).")
@click.option(
    "--start-schedule",
    is_flag=True,
    help="Also run the time schedule and background flows (stays in the foreground until Ctrl-C, then tears down).",
)
def up_cmd(scenario: str, name: str | None, start_schedule: bool) -> None:
    """Bring SCENARIO up and leave it up (use `exec`, then `down`)."""
    scn = _load(scenario)
    try:
        tb = Testbed(scn, name=name or scn.name)
        tb.up()
    except SETUP_ERRORS as exc:
        raise click.ClickException(str(exc)) from exc
    for h in tb.hosts.values():
        click.echo(f"{h.name:<10} {h.ns:<32} {' '.join(h.addrs)}")
    if not start_schedule:
        tb._owner = False  # leave it up for `exec`/`down`
        click.echo(f"testbed {tb.name} is up; `xfer testbed down {tb.name}` removes it")
        return
    tb.start_schedule()
    click.echo(f"testbed {tb.name}: schedule running; Ctrl-C tears it down")
    try:
        seen = 0
        while True:
            log = tb.schedule_log
            for t, what in log[seen:]:
                click.echo(f"t={t:7.2f}s  {what}")
            seen = len(log)
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        tb.down()


@testbed.command("exec", context_settings={"ignore_unknown_options": True})
@click.argument("host")
@click.argument("cmd", nargs=-1, required=True, type=click.UNPROCESSED)
@click.option("--name", help="Testbed name (default: the only one that is up).")
def exec_cmd(host: str, cmd: tuple[str, ...], name: str | None) -> None:
    """Run CMD inside HOST (e.g. `xfer testbed exec sender -- ping receiver`)."""
    try:
        tb = Testbed.attach(_pick(name))
    except TestbedError as exc:
        raise click.ClickException(str(exc)) from exc
    if host not in tb.hosts:
        raise click.ClickException(f"no host {host!r}; hosts: {', '.join(tb.hosts)}")
    # Host names are handy as arguments: `exec sender -- ping receiver` pings its address.
    argv = [tb.hosts[a].addr if a in tb.hosts and a != "router" else a for a in cmd]
    os.execvp("ip", tb.hosts[host].cmd(argv))


@testbed.command("down")
@click.argument("name", required=False)
@click.option(
    "--all", "all_", is_flag=True, help="Without NAME: also testbeds a live process is using."
)
def down_cmd(name: str | None, all_: bool) -> None:
    """Remove testbed NAME; without NAME, every testbed not in use by a live process
    (those of `xfer testbed up`, and leftovers of crashed runs)."""
    removed = tb_down(name, include_in_use=all_)
    click.echo(f"removed {len(removed)} namespaces" + (f": {' '.join(removed)}" if removed else ""))


@testbed.command("calibrate")
@click.argument("scenario")
@click.option("--json", "as_json_", is_flag=True, help="Print one JSON object instead of a table.")
def calibrate_cmd(scenario: str, as_json_: bool) -> None:
    """Bring SCENARIO up, measure RTT, goodput and loss per path, tear down.

    Exits 1 when RTT or rate is off by more than 5 % or loss by more than a factor 1.5.
    """
    scn = _load(scenario)
    try:
        with Testbed(scn) as tb:
            checks = calibrate(tb)
    except SETUP_ERRORS as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(as_json(scn.name, checks) if as_json_ else report(checks))
    sys.exit(0 if all(c.ok for c in checks) else 1)
