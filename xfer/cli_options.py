"""Click options made from a config dataclass: each field's :class:`xfer.config.Cli` metadata
becomes one option, named after the field, with the field's default (no default, choice or
help text is written twice).

    @config_options(SenderConfig)
    def send_cmd(args, ..., **fields):
        cfg = SenderConfig(address=..., **config_values(SenderConfig, fields))
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Iterator
from dataclasses import MISSING, Field, fields
from typing import Any, TypeVar

import click

from xfer.config import Cli

F = TypeVar("F", bound=Callable[..., Any])


def options_of(cls: type) -> Iterator[tuple[Field[Any], Cli]]:
    """The fields of ``cls`` that are options, with their metadata, in field order."""
    for f in fields(cls):
        cli = f.metadata["cli"]  # a KeyError here: a field without CLI metadata
        if cli.flags:
            yield f, cli


def config_options(cls: type) -> Callable[[F], F]:
    """A decorator adding the options of ``cls``'s fields to a click command, in field order,
    after the options written above it."""
    hints = typing.get_type_hints(cls)
    made = [
        click.option(*cli.flags, f.name, **_settings(f, cli, hints[f.name]))
        for f, cli in options_of(cls)
    ]

    def add(command: F) -> F:
        for opt in reversed(made):
            command = opt(command)
        return command

    return add


def config_values(cls: type, params: dict[str, Any]) -> dict[str, Any]:
    """The fields' values from what click parsed (``--no-X`` inverted, rates and sizes parsed);
    ``params`` holds every option of ``cls``. A value that does not parse raises ValueError."""
    out = {}
    for f, cli in options_of(cls):
        value = params[f.name]
        if cli.invert:
            value = not value
        elif cli.parse is not None and value is not None:
            value = cli.parse(value)
        out[f.name] = value
    return out


def _settings(f: Field[Any], cli: Cli, hint: Any) -> dict[str, Any]:
    """``click.option`` keywords for one field."""
    kw: dict[str, Any] = {"help": cli.help, "metavar": cli.metavar}
    if cli.invert or (hint is bool and "/" not in cli.flags[0]):
        return {**kw, "is_flag": True}
    if cli.multiple:
        return {**kw, "multiple": True}
    if f.default is MISSING and f.default_factory is MISSING:
        kw["required"] = True
    default = cli.typed_default if cli.parse is not None else f.default
    if default is not MISSING and default is not None:
        kw.update(default=default, show_default=default != "")
    kw["type"] = _click_type(cli, hint)
    return kw


def _click_type(cli: Cli, hint: Any) -> Any:
    """The click type of an option's value as typed."""
    if cli.parse is not None:
        return str
    if cli.choices:
        return click.Choice(cli.choices)
    if cli.int_range is not None:
        return click.IntRange(*cli.int_range)
    if cli.directory:
        return click.Path(file_okay=False)
    types = [t for t in typing.get_args(hint) if t is not type(None)] or [hint]
    return types[0]
