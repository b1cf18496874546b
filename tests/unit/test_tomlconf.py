"""xfer.tomlconf: the one TOML-to-dataclass reader every schema uses."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from xfer.tomlconf import Table, build, read_toml


class Bad(ValueError):
    pass


@dataclass(frozen=True)
class Spec:
    name: str
    rate_bps: float = 0.0
    count: int = 1
    tags: tuple[str, ...] = ()
    pair: tuple[int, int] = (0, 0)
    note: str | None = None
    source: str = ""

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ValueError(f"count must be >= 1, got {self.count}")


def test_read_toml_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(Bad, match="nope.toml: no such file"):
        read_toml(tmp_path / "nope.toml", Bad)
    with pytest.raises(Bad, match="^custom$"):
        read_toml(tmp_path / "nope.toml", Bad, lambda: "custom")
    (tmp_path / "x.toml").write_text("a = [")
    with pytest.raises(Bad, match="x.toml: not valid TOML"):
        read_toml(tmp_path / "x.toml", Bad)
    (tmp_path / "x.toml").write_text("a = 1\n")
    assert read_toml(tmp_path / "x.toml", Bad) == {"a": 1}


def test_table_types_ranges_and_typos() -> None:
    t = Table({"n": 3, "flag": True, "typo": 1}, "f.toml: [t]", Bad)
    assert t.number("n", lo=1, hi=5) == 3
    with pytest.raises(Bad, match=r"f.toml: \[t\]: 'flag' must be int or float, got True"):
        t.number("flag")
    with pytest.raises(Bad, match="missing required field 'x'"):
        t.get("x", str)
    with pytest.raises(Bad, match=r"f.toml: \[t\]: unknown field\(s\) typo"):
        t.done()
    with pytest.raises(Bad, match="expected a table, got list"):
        Table([], "f.toml", Bad)


def test_build_checks_each_field_against_its_annotation() -> None:
    conv = {"rate": ("rate_bps", lambda v, w: float(v.removesuffix("bit")))}
    spec = build(
        Spec,
        {"name": "a", "rate": "5bit", "tags": ["x"], "pair": [1, 2], "note": "n"},
        "f.toml",
        Bad,
        convert=conv,
        exclude=frozenset({"source"}),
    )
    assert spec == Spec("a", 5.0, 1, ("x",), (1, 2), "n")
    assert build(Spec, {"name": "a", "count": 2}, "w", Bad).count == 2
    bad = [
        ({"name": 1}, "f.toml.name: expected str, got 1"),
        ({"name": "a", "count": True}, "f.toml.count: expected int, got True"),
        ({"name": "a", "tags": ["x", 2]}, r"f.toml.tags\[1\]: expected str, got 2"),
        ({"name": "a", "pair": [1]}, r"f.toml.pair: expected a list \(tuple\[int, int\]\)"),
        ({"rate": "1bit"}, r"f.toml: missing key\(s\): name"),
        ({"name": "a", "rate_bps": 3.0}, "unknown field"),  # only via its unit key
        ({"name": "a", "source": "x"}, r"unknown field\(s\) source"),
        ({"name": "a", "count": 0}, "f.toml: count must be >= 1, got 0"),
    ]
    for data, message in bad:
        with pytest.raises(Bad, match=message):
            build(Spec, data, "f.toml", Bad, convert=conv, exclude=frozenset({"source"}))


def test_build_words_unknown_keys_as_asked() -> None:
    with pytest.raises(Bad, match=r"^w: unknown key 'zz'; allowed: count, name"):
        build(
            Spec,
            {"name": "a", "zz": 1},
            "w",
            Bad,
            unknown="{where}: unknown key {first!r}; allowed: {allowed}",
        )
