"""The configs are the single source of the command line: every field says how it appears on
it, and the click options made from that metadata have the fields' defaults."""

from __future__ import annotations

import dataclasses
from typing import Any

import click
import pytest
from click.testing import CliRunner

from xfer.cli_options import config_options, config_values, options_of
from xfer.cli_transfer import recv_cmd, send_cmd
from xfer.config import ReceiverConfig, SenderConfig, option

COMMANDS = [(send_cmd, SenderConfig), (recv_cmd, ReceiverConfig)]


def field_default(f: dataclasses.Field[Any]) -> Any:
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return f.default


def default_mismatches(command: click.Command, cls: type) -> list[str]:
    """Fields whose option, left out, gives another value than the dataclass default."""
    given = command.make_context("xfer", [], resilient_parsing=True).params  # nothing typed
    values = config_values(cls, given)
    return [
        f"{f.name}: option gives {values[f.name]!r}, field default {field_default(f)!r}"
        for f, _ in options_of(cls)
        if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        if values[f.name] != field_default(f)
    ]


@pytest.mark.parametrize("cls", [SenderConfig, ReceiverConfig])
def test_every_field_says_how_it_appears_on_the_command_line(cls: type) -> None:
    for f in dataclasses.fields(cls):
        assert "cli" in f.metadata, f"{cls.__name__}.{f.name} has no CLI metadata"
        cli = f.metadata["cli"]
        assert cli.flags or cli.why_not, f"{cls.__name__}.{f.name}: no option and no reason"


@pytest.mark.parametrize(("command", "cls"), COMMANDS)
def test_each_option_has_its_fields_default(command: click.Command, cls: type) -> None:
    names = {p.name for p in command.params}
    assert {f.name for f, _ in options_of(cls)} <= names
    assert default_mismatches(command, cls) == []


def test_the_checks_catch_a_missing_metadata_and_a_drifted_default() -> None:
    @dataclasses.dataclass(frozen=True)
    class Bare:
        x: int = 1

    with pytest.raises(KeyError):
        list(options_of(Bare))

    def size(text: str) -> int:
        return int(text)

    @dataclasses.dataclass(frozen=True)
    class Drifted:
        block: int = option("--block", default=4, parse=size, typed_default="8")
        n: int = option("--n", default=2)

    @click.command()
    @config_options(Drifted)
    def cmd(**fields: Any) -> None:
        pass

    cmd.params[1].default = 3  # as if someone wrote the default again, differently
    assert default_mismatches(cmd, Drifted) == [
        "block: option gives 8, field default 4",
        "n: option gives 3, field default 2",
    ]


def test_send_options_reach_the_config(monkeypatch, tmp_path) -> None:
    import xfer.cli_transfer as cli

    seen: list[SenderConfig] = []

    def fake_run(cfg: SenderConfig, *_: Any, **__: Any) -> dict[str, Any]:
        seen.append(cfg)
        return {"exit_code": 0, "verified": True}

    monkeypatch.setattr(cli, "run_send", fake_run)
    args = "--mem 1MiB --streams 2 --block-size 1MiB --stream-rate 50Mbit --no-checksum"
    argv = [*args.split(), "--no-endgame", "--meta", "a=b", "--meta", "x", "127.0.0.1:9", "-q"]
    r = CliRunner().invoke(send_cmd, argv)
    assert r.exit_code == 0, r.output
    (cfg,) = seen
    assert (cfg.mem, cfg.mem_size, cfg.streams, cfg.block_size) == (True, 1 << 20, 2, 1 << 20)
    assert (cfg.stream_rate_bps, cfg.checksum, cfg.endgame) == (50e6, False, False)
    assert cfg.meta == {"a": "b"} and cfg.address == "127.0.0.1:9"


def test_recv_options_reach_the_config(monkeypatch, tmp_path) -> None:
    import xfer.rx.receiver

    seen: list[ReceiverConfig] = []

    class Stop(Exception):
        pass

    def fake_receiver(cfg: ReceiverConfig) -> None:
        seen.append(cfg)
        raise Stop

    monkeypatch.setattr(xfer.rx.receiver, "Receiver", fake_receiver)
    argv = ["--root", str(tmp_path), "--listen", "127.0.0.1:0", "--no-fsync", "--once"]
    r = CliRunner().invoke(recv_cmd, [*argv, "--max-sessions", "3", "--encryption", "off"])
    assert isinstance(r.exception, Stop), r.output
    (cfg,) = seen
    assert (cfg.fsync, cfg.once, cfg.max_sessions, cfg.encryption) == (False, True, 3, "off")
    assert cfg.root == str(tmp_path) and cfg.stall_timeout == 60.0


def test_a_bad_size_is_the_users_error_as_before() -> None:
    r = CliRunner().invoke(send_cmd, ["--mem", "lots", "127.0.0.1:9"])
    assert r.exit_code == 2 and "Error:" in r.output and "lots" in r.output
