"""Import directions between xfer's packages, read with ``ast`` from every module (no imports run).

The layers (docs/ARCHITECTURE.md), each allowed to import only the packages listed:

- ``policy``: nothing of ours (the simulator and the engine both call it);
- ``xfer`` (the engine): ``policy``;
- ``testbeds``: ``xfer``, ``policy``;
- ``lab`` (experiments, metrics, report): ``xfer``, ``testbeds``, ``policy``;
- ``train``: ``policy``, ``lab``, ``xfer``, ``testbeds``.

The engine's command line (``xfer/cli*.py``) may reach every package, but only from inside a
function (lazily), so that ``import xfer`` never pulls in the lab or the trainer; its
module-level imports follow the engine's rule. Imports under ``if TYPE_CHECKING:`` count as
arrows too. Separately, no module-level import cycle between modules (imports inside functions
and under ``TYPE_CHECKING`` do not run at import time, so they cannot form one).

Inside the engine, its layers (``xfer/wire``, ``xfer/tx``, ``xfer/rx``, ``xfer/observe``; the
shared modules and entry points at ``xfer/``'s top): ``xfer.wire`` (the sans-IO protocol core)
imports nothing of ``tx``, ``rx`` or ``observe`` and, even through modules of ours, no socket,
asyncio, uvloop, selectors, threading or time; ``xfer.tx`` and ``xfer.rx`` never import each
other; ``xfer.observe`` imports neither side.
"""

from __future__ import annotations

import ast
import fnmatch
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

ALLOWED: dict[str, frozenset[str]] = {
    "policy": frozenset(),
    "xfer": frozenset({"policy"}),
    "testbeds": frozenset({"xfer", "policy"}),
    "lab": frozenset({"xfer", "testbeds", "policy"}),
    "train": frozenset({"policy", "lab", "xfer", "testbeds"}),
}
"""Package -> the other packages of ours it may import."""

LAZY_ANYWHERE = ("xfer/cli*.py",)
"""Modules (paths relative to the root) that may import any package inside functions."""


@dataclass(frozen=True)
class Import:
    """One import statement's target, resolved to a module of ours."""

    source: str
    """Importing module, dotted (``xfer.api``)."""
    target: str
    """Imported module, dotted (``policy.signals``)."""
    line: int
    lazy: bool
    """Inside a function (runs when called, not at import)."""
    type_only: bool
    """Under ``if TYPE_CHECKING:`` (never runs)."""


def modules(root: Path, packages: Iterator[str] | list[str]) -> dict[str, Path]:
    """Every module of the given top-level packages under ``root``, by dotted name."""
    found: dict[str, Path] = {}
    for pkg in packages:
        for path in sorted((root / pkg).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(
    node: ast.AST, lazy: bool, type_only: bool
) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool, bool]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child, lazy, type_only
        elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            yield from _walk(child, True, type_only)
        elif isinstance(child, ast.If) and _is_type_checking(child.test):
            for stmt in child.body:
                yield from _walk(ast.Module(body=[stmt], type_ignores=[]), lazy, True)
            for stmt in child.orelse:
                yield from _walk(ast.Module(body=[stmt], type_ignores=[]), lazy, type_only)
        else:
            yield from _walk(child, lazy, type_only)


def _resolve(name: str, mods: dict[str, Path]) -> str | None:
    """The longest prefix of ``name`` that is one of our modules."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in mods:
            return candidate
        parts.pop()
    return None


def imports_of(module: str, path: Path, mods: dict[str, Path]) -> list[Import]:
    """The imports of one module that point at modules of ours."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[Import] = []
    for node, lazy, type_only in _walk(tree, False, False):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            # `from pkg import sub` imports the submodule pkg.sub when there is one
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
        targets = {_resolve(name, mods) for name in names} - {None, module}
        for target in sorted(t for t in targets if t is not None):
            found.append(Import(module, target, node.lineno, lazy, type_only))
    return found


def all_imports(root: Path, packages: list[str]) -> list[Import]:
    mods = modules(root, packages)
    return [imp for name, path in mods.items() for imp in imports_of(name, path, mods)]


def _lazy_anywhere(module: str, root: Path, mods: dict[str, Path]) -> bool:
    rel = mods[module].relative_to(root).as_posix()
    return any(fnmatch.fnmatch(rel, pat) for pat in LAZY_ANYWHERE)


def direction_violations(root: Path, allowed: dict[str, frozenset[str]] = ALLOWED) -> list[str]:
    """Every import that points the wrong way, as ``file:line: a -> b (why)``."""
    mods = modules(root, list(allowed))
    bad = []
    for imp in all_imports(root, list(allowed)):
        src_pkg, dst_pkg = imp.source.split(".")[0], imp.target.split(".")[0]
        if dst_pkg == src_pkg or dst_pkg in allowed[src_pkg]:
            continue
        if imp.lazy and _lazy_anywhere(imp.source, root, mods):
            continue
        where = f"{mods[imp.source].relative_to(root)}:{imp.line}"
        why = f"{src_pkg} may import only {sorted(allowed[src_pkg]) or 'nothing of ours'}"
        bad.append(f"{where}: {imp.source} -> {imp.target} ({why})")
    return bad


def module_cycles(root: Path, packages: list[str]) -> list[list[str]]:
    """Strongly connected components (size > 1) of the module-level import graph."""
    graph: dict[str, set[str]] = {m: set() for m in modules(root, packages)}
    for imp in all_imports(root, packages):
        if not imp.lazy and not imp.type_only:
            graph[imp.source].add(imp.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return cycles


INNER: dict[str, frozenset[str]] = {
    "xfer.wire": frozenset({"xfer.tx", "xfer.rx", "xfer.observe"}),
    "xfer.tx": frozenset({"xfer.rx"}),
    "xfer.rx": frozenset({"xfer.tx"}),
    "xfer.observe": frozenset({"xfer.tx", "xfer.rx"}),
}
"""The engine's layers (docs/ARCHITECTURE.md), each with the layers it may not import: the wire
core sits under both sides and the observation, and the two sides never import each other."""


def _layer(module: str) -> str | None:
    return next((pkg for pkg in INNER if module == pkg or module.startswith(pkg + ".")), None)


def inner_violations(root: Path) -> list[str]:
    """Every import between the engine's layers that points the wrong way (lazy and type-only
    imports count), as ``file:line: a -> b (why)``."""
    mods = modules(root, list(ALLOWED))
    bad = []
    for imp in all_imports(root, list(ALLOWED)):
        src, dst = _layer(imp.source), _layer(imp.target)
        if src is not None and dst in INNER[src]:
            where = f"{mods[imp.source].relative_to(root)}:{imp.line}"
            why = f"{src} may not import {', '.join(sorted(INNER[src]))}"
            bad.append(f"{where}: {imp.source} -> {imp.target} ({why})")
    return bad


def sans_io_modules(root: Path) -> list[str]:
    """The wire core: every module of ``xfer.wire``."""
    return [m for m in modules(root, ["xfer"]) if _layer(m) == "xfer.wire"]


IO_MODULES = frozenset({"socket", "asyncio", "uvloop", "selectors", "threading", "time"})
"""What the protocol core may not import, even through a module of ours."""


def io_imports(root: Path, module: str) -> list[str]:
    """The I/O modules that ``module`` imports at module level, directly or through modules of
    ours, as ``via: name``."""
    mods = modules(root, ["xfer", "policy"])
    seen, todo, found = set(), [module], []
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        tree = ast.parse(mods[name].read_text())
        for node, lazy, type_only in _walk(tree, False, False):
            if lazy or type_only:
                continue
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            found += [f"{name}: {n}" for n in names if n.split(".")[0] in IO_MODULES]
        todo += [
            i.target for i in imports_of(name, mods[name], mods) if not i.lazy and not i.type_only
        ]
    return found


@pytest.mark.parametrize("module", sans_io_modules(ROOT))
def test_the_protocol_core_does_no_io(module: str) -> None:
    assert io_imports(ROOT, module) == []


def test_the_wire_core_is_the_protocol() -> None:
    assert {"xfer.wire.protocol", "xfer.wire.session", "xfer.wire.connection"} <= set(
        sans_io_modules(ROOT)
    )


# ------------------------------------------------------------------------------ the tree


def test_every_package_is_checked() -> None:
    ours = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests", "benchmarks"}
    assert ours == set(ALLOWED), "a new top-level package needs a row in ALLOWED"


def test_imports_point_the_right_way() -> None:
    assert direction_violations(ROOT) == []


def test_the_engines_layers_point_the_right_way() -> None:
    assert inner_violations(ROOT) == []


def test_no_layer_shadows_a_public_name() -> None:
    """``xfer.send`` is a function: a subpackage of that name would replace it on import."""
    import xfer
    import xfer.api  # imports every layer

    assert not {pkg.rpartition(".")[2] for pkg in INNER} & set(xfer.__all__)
    assert callable(xfer.send) and xfer.send is xfer.api.send


def test_no_module_level_import_cycle() -> None:
    assert module_cycles(ROOT, list(ALLOWED)) == []


def test_every_lazy_command_points_at_a_command_that_exists() -> None:
    from xfer.cli import COMMANDS

    mods = modules(ROOT, list(ALLOWED))
    for name, (target, _) in COMMANDS.items():
        module, _, attr = target.partition(":")
        assert module in mods, f"xfer {name}: no module {module}"
        tree = ast.parse(mods[module].read_text())
        defined = {
            n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
        }
        assert attr in defined, f"xfer {name}: {module} defines no {attr}"


# ------------------------------------------------------------------------------ the checker


def _tree(tmp_path: Path, spec: str) -> Path:
    """A synthetic tree of our packages: one ``path: source`` per line (``\\n`` for newlines)."""
    for pkg in ALLOWED:
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "__init__.py").touch()
    for line in filter(None, (x.strip() for x in spec.splitlines())):
        rel, _, text = line.partition(": ")
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text.replace("\\n", "\n") + "\n")
    return tmp_path


WRONG_WAY = """
xfer/engine.py: from lab.metrics import summarize
lab/metrics.py: from xfer import engine\\ndef summarize(): ...
policy/base.py: def f():\\n    import xfer.engine
testbeds/run.py: from typing import TYPE_CHECKING\\nif TYPE_CHECKING:\\n    from train import sim
train/sim.py: from ..lab import metrics\\nfrom policy import base
"""
"""An eager, a lazy and a type-only import pointing the wrong way; relative imports resolved."""

CLI = """
xfer/cli.py: import policy.base\\ndef run():\\n    from train import sim
xfer/cli_extra.py: from lab import report
lab/report.py: x = 1
train/sim.py: x = 1
"""

CYCLES = """
lab/a.py: from lab import b
lab/b.py: from . import c
lab/c.py: import lab.a
lab/d.py: def f():\\n    from lab import e
lab/e.py: from lab import d
lab/f.py: from typing import TYPE_CHECKING\\nif TYPE_CHECKING:\\n    from lab import g
lab/g.py: from lab import f
"""
"""A module-level cycle a -> b -> c -> a; d/e (lazy) and f/g (type-only) are not cycles."""


INNER_WRONG_WAY = """
xfer/wire/session.py: from xfer.tx import pool
xfer/tx/pool.py: from xfer.wire import session\\nfrom xfer.observe import monitor
xfer/rx/store.py: def f():\\n    from xfer.tx.pool import x
xfer/tx/sender.py: from typing import TYPE_CHECKING\\nif TYPE_CHECKING:\\n    from ..rx import store
xfer/observe/monitor.py: from xfer.errors import E\\nfrom xfer.rx import store
xfer/errors.py: E = 1
"""
"""Inside the engine: wire -> tx, rx -> tx (lazy), tx -> rx (type-only, relative) and
observe -> rx point the wrong way; tx -> wire, tx -> observe and anything -> xfer.errors do not."""


def test_inner_checker_flags_an_arrow_between_layers(tmp_path: Path) -> None:
    bad = inner_violations(_tree(tmp_path, INNER_WRONG_WAY))
    assert len(bad) == 4, bad
    assert any("xfer/wire/session.py:1: xfer.wire.session -> xfer.tx.pool" in b for b in bad)
    assert any("xfer.rx.store -> xfer.tx.pool (xfer.rx may not import xfer.tx)" in b for b in bad)
    assert any("xfer.tx.sender -> xfer.rx.store" in b for b in bad)
    assert any("xfer.observe.monitor -> xfer.rx.store" in b for b in bad)


def test_checker_flags_an_arrow_pointing_the_wrong_way(tmp_path: Path) -> None:
    bad = direction_violations(_tree(tmp_path, WRONG_WAY))
    assert len(bad) == 3, bad
    assert any("xfer/engine.py:1: xfer.engine -> lab.metrics" in b for b in bad)
    assert any("policy.base -> xfer.engine" in b and "nothing of ours" in b for b in bad)
    assert any("testbeds.run -> train.sim" in b for b in bad)


def test_checker_lets_the_cli_import_anything_lazily_only(tmp_path: Path) -> None:
    assert direction_violations(_tree(tmp_path, CLI)) == [
        "xfer/cli_extra.py:1: xfer.cli_extra -> lab.report (xfer may import only ['policy'])"
    ]


def test_checker_finds_module_level_cycles_only(tmp_path: Path) -> None:
    assert module_cycles(_tree(tmp_path, CYCLES), list(ALLOWED)) == [["lab.a", "lab.b", "lab.c"]]


def test_the_io_check_sees_through_our_modules() -> None:
    assert "xfer.channel: asyncio" in io_imports(ROOT, "xfer.rx.rxsession")
