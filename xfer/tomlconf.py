"""One way from a TOML file to frozen dataclasses, for every schema we read.

Testbed scenarios and suites (``testbeds/``), experiments (``lab/``), campaigns
(``testbeds/campaign/``) and training configs (``train/``) all read TOML here:

- :func:`read_toml`: the file, or a clear error (missing file, invalid TOML) naming it;
  :func:`read_named` for a config given by name or path (a missing one lists the known names);
- :class:`Table`: a table read field by field with typed getters; :meth:`Table.done` refuses the
  keys nobody asked for (a typo is an error, never silently ignored);
- :func:`rate`, :func:`size`: quantities with units (``xfer.units``), errors naming the key;
- :func:`build`: a dataclass built from a table, each value checked against the field's
  annotation (``str``, ``int``, ``float``, ``bool``, ``X | None``, ``tuple[T, ...]``,
  ``tuple[T, T]``), unknown and missing keys refused.

Every error is raised as the caller's error class (``ScenarioError``, ``ExperimentError``, ...)
and names ``where``: the file and the table (``fig1.toml: [transfers]``). It imports nothing of
ours but :mod:`xfer.units`, so every layer may use it.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from xfer import units

UNKNOWN_FIELDS = "{where}: unknown field(s) {names}"
"""Default message for unknown keys; ``build``'s callers may word it their way with the fields
``where``, ``names`` (comma-separated), ``first`` (repr of the first), ``listed`` (a Python
list) and ``allowed`` (comma-separated)."""


def read_toml(
    path: str | Path, error: type[Exception], not_found: Callable[[], str] | None = None
) -> Any:
    """The parsed document at ``path``; ``not_found()`` words the error when the file is
    missing (default: ``PATH: no such file``; a callable, so that listing the known names costs
    nothing on the good path)."""
    p = Path(path)
    try:
        with open(p, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise error(not_found() if not_found else f"{p}: no such file") from None
    except OSError as exc:
        raise error(f"{p}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{p}: not valid TOML: {exc}") from None


def config_path(name_or_path: str | Path, config_dir: Path) -> Path:
    """A path as given (it ends in ``.toml`` or exists), else ``config_dir/NAME.toml``."""
    p = Path(name_or_path)
    if p.suffix == ".toml" or p.exists():
        return p
    return config_dir / f"{name_or_path}.toml"


def read_named(
    name_or_path: str | Path, config_dir: Path, kind: str, error: type[Exception]
) -> tuple[Any, Path]:
    """Read a config given by name (``config_dir/NAME.toml``) or path; return the document and
    its path. A missing one is an error listing the known names (``no scenario 'x' (...
    not found; known: a, b)``)."""
    path = config_path(name_or_path, config_dir)

    def not_found() -> str:
        known = ", ".join(sorted(p.stem for p in config_dir.glob("*.toml"))) or "none"
        return f"no {kind} {str(name_or_path)!r} ({path} not found; known: {known})"

    return read_toml(path, error, not_found), path


def check_unknown(
    data: Mapping[str, Any],
    allowed: Any,
    where: str,
    error: type[Exception],
    message: str = UNKNOWN_FIELDS,
) -> None:
    """Raise ``error`` if ``data`` has keys outside ``allowed`` (message: see UNKNOWN_FIELDS)."""
    unknown = sorted(set(data) - set(allowed))
    if unknown:
        raise error(
            message.format(
                where=where,
                names=", ".join(unknown),
                first=unknown[0],
                listed=unknown,
                allowed=", ".join(sorted(allowed)),
            )
        )


def rate(value: Any, where: str, error: type[Exception]) -> float:
    """``'1gbit'``, ``'500Mbit/s'``, ``'2.5G'`` or bit/s (:func:`xfer.units.parse_rate`), or
    ``error`` naming ``where``."""
    try:
        return units.parse_rate(value)
    except ValueError as exc:
        raise error(f"{where}: {exc}") from None


def size(value: Any, where: str, error: type[Exception]) -> int:
    """``'4MB'``, ``'256KiB'`` or bytes (:func:`xfer.units.parse_size`), or ``error`` naming
    ``where``."""
    try:
        return units.parse_size(value)
    except ValueError as exc:
        raise error(f"{where}: {exc}") from None


class Table:
    """A TOML table being read: typed getters that name the field, and a check for typos."""

    def __init__(self, data: Any, where: str, error: type[Exception]) -> None:
        if not isinstance(data, dict):
            raise error(f"{where}: expected a table, got {type(data).__name__}")
        self.data, self.where, self.error, self.seen = data, where, error, set[str]()

    def get(self, key: str, kinds: type | tuple[type, ...], default: Any = ...) -> Any:
        """The value of ``key`` (one of ``kinds``; a bool only if ``bool`` is listed), or
        ``default``; missing without a default is an error."""
        self.seen.add(key)
        if key not in self.data:
            if default is ...:
                raise self.error(f"{self.where}: missing required field '{key}'")
            return default
        value = self.data[key]
        allowed = kinds if isinstance(kinds, tuple) else (kinds,)
        if (isinstance(value, bool) and bool not in allowed) or not isinstance(value, allowed):
            names = " or ".join(k.__name__ for k in allowed)
            raise self.error(f"{self.where}: '{key}' must be {names}, got {value!r}")
        return value

    def number(self, key: str, default: Any = ..., lo: float = 0.0, hi: float = math.inf) -> Any:
        """An int or float in ``[lo, hi]`` (the default is not checked)."""
        value = self.get(key, (int, float), default)
        if value is not None and value is not default and not lo <= value <= hi:
            raise self.error(f"{self.where}: '{key}' = {value} is outside [{lo}, {hi}]")
        return value

    def done(self) -> None:
        """Refuse every key no getter asked for."""
        check_unknown(self.data, self.seen, self.where, self.error)


_SCALARS: dict[str, tuple[type, ...]] = {
    "str": (str,),
    "int": (int,),
    "float": (int, float),
    "bool": (bool,),
}


def coerce(value: Any, annotation: str, where: str, error: type[Exception]) -> Any:
    """Check a TOML value against a field annotation (a string, as under ``from __future__
    import annotations``); lists become tuples, ints in float fields floats. Annotations it
    does not know (a nested dataclass) pass the value through."""
    base = annotation.removesuffix(" | None")
    if value is None and base != annotation:
        return None
    if base in _SCALARS:
        ok = isinstance(value, _SCALARS[base]) and (base == "bool" or not isinstance(value, bool))
        if not ok:
            raise error(f"{where}: expected {base}, got {value!r}")
        return float(value) if base == "float" else value
    if base.startswith("tuple[") and base.endswith("]") and "[" not in base[len("tuple[") :]:
        items = [s.strip() for s in base[len("tuple[") : -1].split(",")]
        if len(items) == 2 and items[1] == "...":
            items = [items[0]] * len(value) if isinstance(value, list | tuple) else []
        if not isinstance(value, list | tuple) or len(value) != len(items):
            raise error(f"{where}: expected a list ({base}), got {value!r}")
        return tuple(
            coerce(v, t, f"{where}[{i}]", error)
            for i, (v, t) in enumerate(zip(value, items, strict=True))
        )
    return value


def build(
    cls: Any,
    data: Any,
    where: str,
    error: type[Exception],
    *,
    convert: Mapping[str, tuple[str, Callable[[Any, str], Any]]] | None = None,
    exclude: frozenset[str] = frozenset(),
    unknown: str = UNKNOWN_FIELDS,
) -> Any:
    """Build dataclass ``cls`` from the table ``data``: every key must be a field (else the
    ``unknown`` message), every field without a default must be given, each value is checked
    by :func:`coerce`. ``convert`` maps a file key to (field name, converter(value, where)) for
    values written with units; ``exclude`` names fields a file may not set. Errors from the
    dataclass's own checks (``__post_init__``) are re-raised as ``error`` naming ``where``."""
    if not isinstance(data, dict):
        raise error(f"{where}: expected a table, got {type(data).__name__}")
    convert = convert or {}
    fields = {f.name: f for f in dataclasses.fields(cls) if f.name not in exclude}
    settable = set(fields) - {name for name, _ in convert.values()} | set(convert)
    check_unknown(data, settable, where, error, unknown)
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        if key in convert:
            name, fn = convert[key]
            kwargs[name] = fn(value, f"{where}.{key}")
        else:
            kwargs[key] = coerce(value, str(fields[key].type), f"{where}.{key}", error)
    missing = [
        name
        for name, f in fields.items()
        if name not in kwargs
        and f.default is dataclasses.MISSING
        and f.default_factory is dataclasses.MISSING
    ]
    if missing:
        shown = [next((k for k, (n, _) in convert.items() if n == m), m) for m in missing]
        raise error(f"{where}: missing key(s): {', '.join(shown)}")
    try:
        return cls(**kwargs)
    except error:
        raise
    except (TypeError, ValueError) as exc:
        raise error(f"{where}: {exc}") from exc
