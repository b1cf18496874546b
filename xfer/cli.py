"""The ``xfer`` command line: a lazy click group.

Subcommands live in their own modules and are imported only when used, so ``xfer --help``
stays fast (no torch, no pyarrow). Adding a subcommand means adding one row to ``COMMANDS``.
"""

from __future__ import annotations

import importlib

import click

COMMANDS: dict[str, tuple[str, str]] = {
    # name: ("module:attribute", one-line help shown by `xfer --help`)
    "recv": ("xfer.cli_transfer:recv_cmd", "Run a receiver that writes under --root."),
    "send": ("xfer.cli_transfer:send_cmd", "Send files, trees or generated data to a receiver."),
    "demo": (
        "xfer.cli_transfer:demo_cmd",
        "Generate a dataset and move it through a local receiver.",
    ),
    "testbed": (
        "testbeds.cli:testbed",
        "Emulated WAN in network namespaces (up/exec/down/calibrate).",
    ),
    "report": ("lab.report:report_cmd", "Figures and a summary table from Parquet run logs."),
    "experiment": (
        "lab.experiment:experiment_cmd",
        "Run a policy comparison on an emulated scenario.",
    ),
    "train": ("train.cli:train_cmd", "Train (or fine-tune) the PPO stream policy."),
    "evaluate": ("train.evaluate:evaluate_cmd", "Evaluate a policy against fixed-N, GD and BO."),
    "campaign": ("testbeds.campaign.cli:campaign", "Run campaigns on real testbeds over SSH."),
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module, _, attr = entry[0].partition(":")
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:  # an optional part (extra) is not installed
            raise click.ClickException(f"'xfer {cmd_name}' is unavailable: {exc}") from exc
        cmd: click.Command = getattr(mod, attr)
        return cmd

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, help_) for name, (_, help_) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="xfer")
def cli() -> None:
    """xfer: bulk data mover over N parallel TCP/MPTCP streams, N chosen each interval by a
    stream controller (a PPO policy by default)."""


def main() -> None:
    """Console entry point."""
    cli(prog_name="xfer")


if __name__ == "__main__":  # pragma: no cover
    main()
