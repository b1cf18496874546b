"""``xfer campaign``: run campaigns on real testbeds over SSH, and provisioning helpers.

Exit codes of ``run``: 0 all runs done; 1 some runs failed (rerun to retry them); 2 bad
campaign file; 3 calibration failed (nothing collected); 4 a host could not be reached or
set up; 130 interrupted (rerun to resume).
"""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from pathlib import Path

import click

from testbeds.campaign.calibrate import CalibrationFailed
from testbeds.campaign.plan import CampaignState, plan_runs
from testbeds.campaign.remote import RemoteError
from testbeds.campaign.schema import Campaign, CampaignError, load_campaign


def _load(file: str) -> Campaign:
    try:
        return load_campaign(file)
    except CampaignError as exc:
        raise click.ClickException(str(exc)) from exc


def _out_dir(c: Campaign, out: str | None) -> Path:
    return Path(out) if out else Path("runs") / c.name


async def _run_cancellable(coro):  # noqa: ANN001, ANN202 - a coroutine in, its result out
    """Run ``coro`` so that SIGTERM cancels it like SIGINT does (remote processes are
    stopped by the runner's cleanup)."""
    task = asyncio.ensure_future(coro)
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, task.cancel)
    try:
        return await task
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


def _logger():  # noqa: ANN202 - a print-like callable
    t0 = time.monotonic()
    return lambda msg: click.echo(f"campaign [{time.monotonic() - t0:6.1f} s] {msg}", err=True)


@click.group("campaign")
def campaign() -> None:
    """Campaigns on real testbeds over SSH (see docs/campaigns.md)."""


@campaign.command("run")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--out", "out", type=click.Path(file_okay=False), help="Output directory [runs/NAME]."
)
@click.option("--wheel", type=click.Path(exists=True, dir_okay=False), help="Prebuilt xfer wheel.")
@click.option("--max-runs", type=click.IntRange(min=0), help="Stop after this many runs.")
@click.option("--no-report", is_flag=True, help="Skip the final xfer report.")
def run_cmd(
    file: str, out: str | None, wheel: str | None, max_runs: int | None, no_report: bool
) -> None:
    """Run (or resume) the campaign in FILE: install, calibrate, run, collect, report."""
    from testbeds.campaign.runner import RunnerOptions, run_campaign

    c = _load(file)
    opts = RunnerOptions(
        out_dir=_out_dir(c, out),
        wheel=Path(wheel) if wheel else None,
        report=not no_report,
        max_runs=max_runs,
        log=_logger(),
    )
    try:
        summary = asyncio.run(_run_cancellable(run_campaign(c, opts)))
    except CalibrationFailed as exc:
        click.echo(f"campaign: {exc}", err=True)
        sys.exit(3)
    except RemoteError as exc:
        click.echo(f"campaign: host problem: {exc}", err=True)
        sys.exit(4)
    except (KeyboardInterrupt, asyncio.CancelledError):
        click.echo("campaign: interrupted; run the same command again to resume", err=True)
        sys.exit(130)
    click.echo(
        f"campaign: {len(summary.done)} runs done now, {summary.skipped} were already done, "
        f"{len(summary.failed)} failed; output in {opts.out_dir}",
        err=True,
    )
    sys.exit(1 if summary.failed else 0)


@campaign.command("plan")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--out", "out", type=click.Path(file_okay=False), help="Output directory [runs/NAME]."
)
def plan_cmd(file: str, out: str | None) -> None:
    """List the runs of FILE and which are done in the output directory."""
    c = _load(file)
    state = CampaignState(_out_dir(c, out), c.name)
    for run in plan_runs(c):
        rec = state.runs.get(run.run_id, {})
        status = "done" if state.is_done(run) else rec.get("status", "pending")
        click.echo(f"{run.run_id}\t{run.link.sender}->{run.link.receiver}\t{run.policy}\t{status}")


@campaign.command("cloudlab-rspec")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write here [stdout].")
@click.option("--image", help="Disk image URN (default: Ubuntu 24.04 standard).")
def cloudlab_rspec_cmd(output: str | None, image: str | None) -> None:
    """Write the geni-lib RSpec request for the paper's two CloudLab nodes (Wisconsin, Utah)."""
    from testbeds.campaign.provision import cloudlab

    xml = cloudlab.request_xml(image=image or cloudlab.DEFAULT_IMAGE)
    if output:
        Path(output).write_text(xml)
    else:
        click.echo(xml)


@campaign.command("cloudlab-hosts")
@click.argument("manifests", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--key", "key_path", required=True, help="Private key file for the campaign.")
def cloudlab_hosts_cmd(manifests: tuple[str, ...], key_path: str) -> None:
    """Print the campaign hosts and link from the CloudLab manifests (one XML per site)."""
    from testbeds.campaign.provision import cloudlab, hosts_toml

    try:
        hosts = cloudlab.hosts_from_manifests([Path(m).read_text() for m in manifests])
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(
        hosts_toml(
            hosts,
            key=key_path,
            testbed="cloudlab",
            expected_rtt_ms=36,
            expected_goodput="940Mbit",
            link_name="utah-wisc",
        )
    )


@campaign.command("chameleon")
@click.option("--project", required=True, help="Chameleon project (CHI-XXXXXX).")
@click.option("--key-name", required=True, help="Key pair name registered at both sites.")
@click.option("--key", "key_path", required=True, help="Private key file for the campaign.")
@click.option("--hours", default=8.0, show_default=True, help="Lease duration.")
@click.option("--dry-run", is_flag=True, help="Only print what would be reserved.")
@click.option("--release", "do_release", is_flag=True, help="Delete the servers and leases.")
def chameleon_cmd(
    project: str, key_name: str, key_path: str, hours: float, dry_run: bool, do_release: bool
) -> None:
    """Reserve and launch a node at CHI@UC and one at CHI@TACC; print the campaign hosts."""
    from testbeds.campaign.provision import chameleon, hosts_toml

    p = chameleon.ChameleonPlan(project=project, key_name=key_name, hours=hours)
    if dry_run:
        for row in chameleon.plan(p):
            click.echo(" ".join(f"{k}={v}" for k, v in row.items()))
        return
    if do_release:
        chameleon.release(p)
        return
    hosts = chameleon.reserve_and_launch(p)
    click.echo(
        hosts_toml(
            hosts,
            key=key_path,
            testbed="chameleon",
            expected_rtt_ms=32,
            expected_goodput="9.4Gbit",
            link_name="tacc-uc",
        )
    )
