"""``xfer evaluate``: a policy against the best fixed stream count, GD and BO.

Two modes:

* simulator (the default when no scenario is named; ``--sim``): the simulator's named
  networks plus held-out random networks (:mod:`train.simeval`); every controller runs
  through its real ``decide()``.
* testbed (``--scenarios a,b``, ``--scenario NAME[@RATE]`` or ``--testbed``; needs root): for
  each emulated scenario an experiment is built and run by the experiment runner
  (:func:`lab.experiment.run_experiment`): a sweep of fixed stream counts (each run alone)
  finds the best fixed N, then the policies, ``gd`` and ``bo`` run for the same duration. Per
  scenario and controller: ``utility_ratio`` (mean utility over the run, Eq. 3 per MI,
  divided by the best fixed N's mean utility, the highest over the sweep), and
  ``time_to_optimum_s``, ``mean_throughput_bps``, ``loss_rate`` as defined in
  :mod:`lab.metrics` (the same numbers ``xfer experiment`` and ``xfer report`` print). The
  per-stream cap of a scenario is ``@RATE`` if given, else its ``[meta] stream_rate``.

With ``--reference DIR`` (testbed) the sweep, GD and BO are not run again: DIR holds one
earlier ``xfer evaluate --json`` output per scenario (``DIR/NAME.json``, e.g. a suite's test
set swept once, ``docs/results/gen-v2-test/``), whose best fixed N is the yardstick and whose
GD and BO rows are reported beside the policies, which alone run now. A set of 20 scenarios
then costs the policy's runs (about 25 min at two runs each) instead of about 3 h; the
yardstick comes from another time on the same machine, recorded in the result
(``reference``), a weaker control than runs side by side. ``--reference`` may be given more
than once: each scenario's file is taken from the first DIR that holds it (a list that spans
suites, e.g. ``configs/sets/warmup10.txt``, whose yardsticks sit in one DIR per suite).

``--scenario-file FILE`` adds the scenarios FILE lists, one per line (``#`` starts a comment);
a relative path is taken from FILE's directory, a bare name (no ``.toml``) is a named
scenario. A named list of scenarios replaces the same ``--scenario`` lines repeated in every
round's scripts (``configs/sets/``).

Prints a rich table; ``--json`` prints JSON instead, ``--json FILE`` also writes it to FILE.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import re
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import click

DEFAULT_POLICIES = ("ppo", "gd", "bo")
"""Simulator mode: the controllers compared when no --policy is given."""
DEFAULT_SWEEP: tuple[int, ...] = (1, 2, 4, 8, 12, 16, 20, 24, 32, 48, 64)
"""Testbed mode: fixed stream counts tried on every scenario (dense around paper-fig1's 20);
also the U* sweep of live fine-tuning (``train.live``), so both use the same yardstick."""


# -- simulator ------------------------------------------------------------------------------


def _sim(
    policies: list[str],
    networks: int,
    seed: int,
    sim_config: str | None = None,
    world_class: str | None = None,
) -> dict[str, Any]:
    from policy.base import ControllerConfig, make_controller
    from train.simeval import evaluate

    sim_cfg = None
    if sim_config is not None:
        from train.config import load_config

        try:
            sim_cfg = load_config(sim_config).env.sim
        except (OSError, ValueError) as exc:
            raise click.BadParameter(str(exc), param_hint="--sim-config") from None
    cfg = ControllerConfig()
    out: dict[str, Any] = {}
    for spec in policies:
        n = networks if not spec.startswith("bo") else min(networks, 20)  # BO fits a GP per MI
        make = functools.partial(make_controller, spec, cfg)
        out[spec] = evaluate(make, n, seed, sim_cfg=sim_cfg, world_class=world_class)
    return out


def _print_sim(result: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title="simulated evaluation: utility ratio vs best fixed N (time to N*-2, MIs)")
    t.add_column("network")
    for spec in result:
        t.add_column(spec, justify="right")
    first = next(iter(result.values()))
    for i, row in enumerate(first["named"]):
        cells = []
        for r in result.values():
            x = r["named"][i]
            cells.append(f"{x['utility_ratio']:.3f} ({x['time_to_n_opt']})")
        t.add_row(row["network"], *cells)
    t.add_row(
        "held-out random (mean)",
        *[f"{r['random']['utility_ratio_mean']:.3f}" for r in result.values()],
    )
    t.add_row(
        "held-out random (median)",
        *[f"{r['random']['utility_ratio_median']:.3f}" for r in result.values()],
    )
    t.add_row(
        "held-out random (p10)",
        *[f"{r['random']['utility_ratio_p10']:.3f}" for r in result.values()],
    )
    t.add_row(
        "held-out random (mean streams)",
        *[f"{r['random']['mean_streams']:.1f}" for r in result.values()],
    )
    Console().print(t)


def _screen(
    policies: list[str], networks: int, seed: int, sim_config: str | None
) -> dict[str, Any]:
    """``--world-class all``: every world class in turn, the same networks for every policy."""
    from train.simeval import WORLD_CLASSES, screen_summary

    by_class = {c: _sim(policies, networks, seed, sim_config, c) for c in WORLD_CLASSES}
    return {"world_classes": by_class, "screen": screen_summary(by_class)}


def _sim_or_screen(
    specs: list[str],
    networks: int,
    seed: int,
    sim_config: str | None,
    world_class: str | None,
    show: bool,
) -> dict[str, Any]:
    if world_class == "all":
        result = _screen(specs, networks, seed, sim_config)
        if show:
            _print_screen(result)
    else:
        result = _sim(specs, networks, seed, sim_config, world_class)
        if show:
            _print_sim(result)
    return result


def _print_screen(result: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    classes = list(result["world_classes"])
    t = Table(title="simulated screen: utility ratio median / p10 per world class")
    t.add_column("policy")
    for c in classes:
        t.add_column(c, justify="right")
    t.add_column("mean of medians", justify="right")
    for spec, s in result["screen"].items():
        cells = [f"{s['median'][c]:.3f} / {s['p10'][c]:.3f}" for c in classes]
        t.add_row(spec, *cells, f"{s['mean_of_medians']:.3f}")
    Console().print(t)


# -- testbed --------------------------------------------------------------------------------


def default_scenarios() -> list[str]:
    """Shipped single-path scenarios with one sender/receiver pair."""
    from testbeds import list_scenarios, load_scenario

    names = []
    for name in list_scenarios():
        scn = load_scenario(name)
        if len(scn.paths) == 1 and scn.pairs == 1:
            names.append(name)
    return names


def scenario_experiment(
    scenario: str,
    policy: str | tuple[str, ...],
    duration_s: float,
    sweep: tuple[int, ...],
    repetitions: int = 1,
) -> Any:
    """The experiment ``xfer evaluate`` runs on one scenario (``NAME[@PER_STREAM_RATE]``)."""
    from lab.experiment_config import Experiment, SweepSpec
    from testbeds import load_scenario
    from testbeds.scenario import parse_rate

    scenario, _, rate_override = scenario.partition("@")
    scn = load_scenario(scenario)
    rate_raw = rate_override or scn.meta.get("stream_rate")
    rate = parse_rate(rate_raw, f"{scenario} [meta] stream_rate") if rate_raw else None
    given = (policy,) if isinstance(policy, str) else policy
    policies = tuple(dict.fromkeys((*given, "gd", "bo")))
    return Experiment(
        name=f"evaluate-{scn.name}"[:40],
        description=f"xfer evaluate: {', '.join(given)} vs best fixed N, gd, bo on {scn.name}",
        scenario=scenario,
        policies=policies,
        repetitions=repetitions,
        duration_s=duration_s,
        stream_rate_bps=rate,
        cc=scn.sysctls.congestion_control,
        sweep=SweepSpec(tuple(sorted(set(sweep))), duration_s, 1),
        source=f"xfer evaluate ({scenario})",
    )


def run_dir_name(spec: str) -> str:
    """Directory (under ``--out``) of one scenario spec ``NAME[@RATE]`` or ``PATH[@RATE]``:
    the scenario's own name, plus ``-at-RATE``. Never the spec itself: joining an absolute
    path onto ``--out`` would give the scenario file's own path."""
    from testbeds import load_scenario

    name, _, rate = spec.partition("@")
    base = load_scenario(name).name
    return f"{base}-at-{re.sub(r'[^A-Za-z0-9_.-]', '_', rate)}" if rate else base


def run_dirs(scenarios: list[str]) -> list[str]:
    """:func:`run_dir_name` of every spec; ValueError when two would share a directory."""
    dirs = [run_dir_name(scn) for scn in scenarios]
    if len(set(dirs)) != len(dirs):
        clash = sorted({d for d in dirs if dirs.count(d) > 1})
        raise ValueError(f"two scenarios share the name {', '.join(clash)}: their runs would mix")
    return dirs


def scenario_rows(summary: dict[str, Any], policies: tuple[str, ...]) -> dict[str, Any]:
    """The evaluation entry of one scenario, from the experiment's summary.json."""
    from train.suite_eval import run_ratios

    best = summary.get("best_fixed") or {}
    controllers = {}
    for p in policies:
        s = summary.get("policies", {}).get(p, {})
        controllers[p] = {
            "utility_ratio": s.get("utility_ratio"),
            "mean_utility": s.get("mean_utility"),
            "time_to_optimum_s": s.get("time_to_optimum_s"),
            "mean_throughput_bps": s.get("mean_throughput_bps"),
            "loss_rate": s.get("loss_rate"),
            "mean_streams": s.get("mean_streams"),
            "run_ratios": run_ratios(summary, p),
            "checkpoints": s.get("checkpoints", {}),
        }
    return {"best_fixed": best, "controllers": controllers}


def engine_id() -> dict[str, Any]:
    """Which engine produced a result: the package version and, in a git checkout, the
    commit and whether the engine's code (``xfer/``) differs from it. U* and what a fixed N
    achieves move with the engine (docs/evaluation.md, rule 5)."""
    import subprocess

    import xfer

    root = Path(xfer.__file__).resolve().parent.parent
    out: dict[str, Any] = {"version": xfer.__version__, "commit": None, "engine_dirty": None}
    try:
        git = ["git", "-C", str(root)]
        head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=True)  # fmt: skip
        dirty = subprocess.run([*git, "status", "--porcelain", "--", "xfer"],
                               capture_output=True, text=True, timeout=10, check=True)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return out
    out.update(commit=head.stdout.strip(), engine_dirty=bool(dirty.stdout.strip()))
    return out


class Reference(NamedTuple):
    """One scenario's stored evaluation (``--reference``)."""

    path: Path
    row: dict[str, Any]
    """``best_fixed`` and ``controllers``, as ``xfer evaluate --json`` wrote them."""
    commit: str | None
    """The engine commit that made it, if recorded."""


def read_scenario_file(path: Path) -> list[str]:
    """The scenarios ``path`` lists (``--scenario-file``): one per line, ``#`` starts a comment;
    a relative path is taken from ``path``'s directory, a bare name is a named scenario.
    ValueError when it lists none."""
    out, cwd = [], Path.cwd().resolve()
    for line in path.read_text().splitlines():
        spec = line.split("#", 1)[0].strip()
        if not spec:
            continue
        name, at, rate = spec.partition("@")
        if name.endswith(".toml") and not Path(name).is_absolute():
            full = (path.parent / name).resolve()
            # relative to the working directory where it lies below it: the result's keys then
            # read as --scenario's (configs/suites/...), not as one machine's absolute paths
            name = str(full.relative_to(cwd) if full.is_relative_to(cwd) else full)
        out.append(name + at + rate)
    if not out:
        raise ValueError(f"{path}: lists no scenario")
    return out


def ref_dirs(reference: Path | Sequence[Path] | None) -> tuple[Path, ...]:
    """``--reference``'s directories, in the order they are searched."""
    return (reference,) if isinstance(reference, Path) else tuple(reference or ())


def load_reference(reference: Path | Sequence[Path], spec: str) -> Reference:
    """Scenario ``spec``'s stored evaluation: ``NAME.json`` (one ``xfer evaluate --json``
    output) in the first of the ``reference`` directories that holds it.
    FileNotFoundError or ValueError, saying how to make it, when it is missing or unusable."""
    name = run_dir_name(spec)
    dirs = ref_dirs(reference)
    if not dirs:
        raise ValueError("no reference directory given")
    files = [d / f"{name}.json" for d in dirs]
    found = next((f for f in files if f.is_file()), None)
    path = found or files[0]
    how = (f"make it with: xfer evaluate --scenario {spec} --policy gd --policy bo "
           f"--repeat 2 --json {path}")  # fmt: skip
    if found is None:
        where = " or ".join(map(str, files))
        raise FileNotFoundError(f"no reference for {name}: {where} is missing; {how}")
    try:
        data = json.loads(path.read_text())
        rows = data.get("scenarios") or {}
    except (json.JSONDecodeError, AttributeError) as exc:
        raise ValueError(f"{path}: not an xfer evaluate --json output ({exc})") from None
    if len(rows) != 1:
        raise ValueError(f"{path}: expected one scenario, found {len(rows)}; {how}")
    (row,) = rows.values()
    if not (row.get("best_fixed") or {}).get("mean_utility"):
        raise ValueError(f"{path}: no best fixed N (its sweep did not run); {how}")
    return Reference(path, row, (data.get("engine") or {}).get("commit"))


def referenced_row(summary: dict[str, Any], policies: tuple[str, ...], ref: dict[str, Any],
                   ref_path: Path) -> dict[str, Any]:  # fmt: skip
    """One scenario's entry when only ``policies`` ran now: their ratios against the
    reference's best fixed N, and the reference's rows for the controllers that did not run
    (GD, BO)."""
    from lab.metrics import utility_ratio

    best = ref["best_fixed"]
    row = scenario_rows({**summary, "best_fixed": best}, policies)
    for c in row["controllers"].values():
        u = c.get("mean_utility")  # no ratio where every fixed N loses (U* <= 0: rule 4);
        # scenario_rows' run_ratios already leaves the runs' ratios out there
        c["utility_ratio"] = None if u is None else utility_ratio(u, best["mean_utility"])
    for name, c in (ref.get("controllers") or {}).items():
        row["controllers"].setdefault(name, {**c, "from_reference": True})
    row["reference"] = str(ref_path)
    return row


ORACLE = "oracle"
"""``--policy oracle`` (with ``--reference``): per scenario, ``fixed:N*`` at the stored sweep's
best count by utility, run again beside the policies. It shows what the yardstick's own noise
leaves of U*: the sweep's best of single runs is the maximum of noisy means, so the count that
won may read below 1 when run again, and a policy holding one count cannot do better. Round 39
(issue #16) measured 0.94-1.05 on 35 validation scenarios: the stored yardsticks stand."""


def oracle_count(ref_row: dict[str, Any]) -> int:
    """The stored sweep's best fixed N by utility (``--policy oracle``)."""
    n = (ref_row.get("best_fixed") or {}).get("utility_streams")
    if not isinstance(n, int) or n < 1:
        raise ValueError("the reference names no best fixed N by utility (utility_streams)")
    return n


def _as_oracle(row: dict[str, Any], given: tuple[str, ...], spec: str, n: int) -> None:
    """Files ``spec``'s (``fixed:N*``) entry of ``row`` under ``oracle``, in ``given``'s order
    (it stays under ``spec`` too if ``spec`` was asked for by name)."""
    ctl = row["controllers"]
    ctl[ORACLE] = {**(ctl[spec] if spec in given else ctl.pop(spec)), "streams_fixed": n}
    order = [*dict.fromkeys(given), *(k for k in ctl if k not in given)]
    row["controllers"] = {k: ctl[k] for k in order}


def evaluate(
    policies: tuple[str, ...],
    scenarios: list[str],
    duration_s: float,
    sweep: tuple[int, ...],
    out_dir: Path,
    *,
    repetitions: int = 1,
    resume: bool = False,
    echo: Any = lambda s: None,
    reference: Path | Sequence[Path] | None = None,
) -> dict[str, Any]:
    """Run the testbed evaluation on every scenario (one at a time); returns the JSON result.
    The first of ``policies`` is the one evaluated (``utility_ratio_mean``/``_min``). With
    ``reference`` only ``policies`` run, against the stored sweep, GD and BO there."""
    from lab.experiment import run_experiment

    policy = policies[0]
    result: dict[str, Any] = {"policy": policy, "policies": list(policies),
                              "duration_s": duration_s, "sweep": list(sweep),
                              "engine": engine_id()}  # fmt: skip
    refs = {scn: load_reference(reference, scn) for scn in scenarios} if reference else {}
    if reference:  # every reference is read before the first run: a gap fails at once
        result.update(reference=", ".join(map(str, ref_dirs(reference))), sweep=None)
        made = {r.commit for r in refs.values() if r.commit}
        now = result["engine"]["commit"]
        if now and made - {now}:
            echo(f"note: the reference was made on engine {', '.join(sorted(made))}, "
                 f"this is {now}: if the engine (xfer/) differs between them, sweep again")  # fmt: skip
    if ORACLE in policies and not reference:
        raise ValueError("--policy oracle needs --reference: the stored sweep names its count")
    # oracle's count of every scenario, read with the references: a gap fails at once too
    stars = {scn: oracle_count(refs[scn].row) for scn in scenarios} if ORACLE in policies else {}
    per: dict[str, Any] = {}
    for scn, sub in zip(scenarios, run_dirs(scenarios), strict=True):
        n_star = stars.get(scn, 0)
        run = tuple(f"fixed:{n_star}" if p == ORACLE else p for p in policies)
        exp = scenario_experiment(scn, run, duration_s, sweep, repetitions)
        if reference:
            exp = dataclasses.replace(exp, policies=tuple(dict.fromkeys(run)), sweep=None)
            echo(f"xfer evaluate: {scn} ({len(exp.policies)} controllers; yardstick, GD and "
                 f"BO from {refs[scn].path})")  # fmt: skip
        else:
            echo(f"xfer evaluate: {scn} ({len(sweep)} fixed N + {len(exp.policies)} controllers)")
        summary = run_experiment(exp, out_dir / sub, resume=resume, echo=echo)
        if reference:
            per[scn] = referenced_row(summary, exp.policies, refs[scn].row, refs[scn].path)
            if n_star:
                _as_oracle(per[scn], policies, f"fixed:{n_star}", n_star)
        else:
            per[scn] = scenario_rows(summary, exp.policies)
    result["scenarios"] = per
    ratios = [
        r["controllers"][policy]["utility_ratio"]
        for r in per.values()
        if r["controllers"][policy]["utility_ratio"] is not None
    ]
    result["utility_ratio_mean"] = statistics.fmean(ratios) if ratios else None
    result["utility_ratio_min"] = min(ratios) if ratios else None
    return result


def _fmt(x: Any, scale: float = 1.0, spec: str = ".3f") -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return format(x / scale, spec)


def print_table(result: dict[str, Any]) -> None:
    """The evaluation as a rich table (for people; --json is the contract)."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"xfer evaluate: {result['policy']} ({result['duration_s']:g} s runs)")
    for col in (
        "scenario",
        "controller",
        "utility ratio",
        "t_opt (s)",
        "Mbit/s",
        "loss %",
        "best N",
    ):
        table.add_column(col, justify="left" if col in ("scenario", "controller") else "right")
    for scn, row in result["scenarios"].items():
        best = row["best_fixed"]
        for name, c in row["controllers"].items():
            table.add_row(
                scn,
                name,
                _fmt(c["utility_ratio"]),
                _fmt(c["time_to_optimum_s"], spec=".0f"),
                _fmt(c["mean_throughput_bps"], 1e6, ".0f"),
                _fmt(c["loss_rate"], 0.01, ".3f"),
                str(best.get("streams", "-")),
            )
    Console(stderr=False).print(table)
    mean = result.get("utility_ratio_mean")
    if mean is not None:
        click.echo(
            f"{result['policy']}: utility ratio mean {mean:.3f}, min {result['utility_ratio_min']:.3f}"
        )


def parse_counts(text: str) -> tuple[int, ...]:
    """A comma-separated list of stream counts (>= 1), or a click error saying what is wrong."""
    try:
        values = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a comma-separated list of integers") from None
    if not values or min(values) < 1:
        raise click.BadParameter("stream counts must be integers >= 1")
    return values


def _policy_checks(policies: tuple[str, ...], testbed: bool) -> None:
    """Bad controller specs fail here, before anything runs (testbed and simulator alike)."""
    from policy.base import ControllerConfig, make_controller

    for spec in policies:
        if spec == ORACLE:
            if testbed:  # fixed:N* per scenario, N* from --reference (checked there)
                continue
            raise click.BadParameter("oracle runs each scenario's stored best fixed N on the "
                                     "testbed (--reference DIR), not in the simulator",
                                     param_hint="--policy")  # fmt: skip
        try:
            make_controller(spec, ControllerConfig())
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--policy") from None


def _testbed_checks(policies: tuple[str, ...], names: list[str]) -> None:
    """Bad controller specs and scenarios fail here, before anything runs."""
    from testbeds import ScenarioError, load_scenario

    _policy_checks(policies, testbed=True)
    try:
        for name in names:
            load_scenario(name.partition("@")[0])
        run_dirs(names)
    except (ScenarioError, ValueError) as exc:
        raise click.BadParameter(str(exc), param_hint="--scenarios") from None


def _reference_checks(reference: Sequence[Path] | None, names: list[str],
                      policies: tuple[str, ...] = ()) -> None:  # fmt: skip
    """A missing or unusable reference fails here, before anything runs (and ``oracle``
    without one, or with one that names no best count)."""
    if ORACLE in policies and not reference:
        raise click.BadParameter("oracle runs each scenario's stored best fixed N: give "
                                 "--reference DIR", param_hint="--policy")  # fmt: skip
    for name in names if reference else []:
        try:
            ref = load_reference(reference or (), name)
            if ORACLE in policies:
                oracle_count(ref.row)
        except (OSError, ValueError) as exc:
            raise click.BadParameter(str(exc), param_hint="--reference") from None


def _testbed(policies: tuple[str, ...], names: list[str], duration: float, sweep: tuple[int, ...],
             repetitions: int, out: Path, resume: bool,
             reference: Sequence[Path] | None = None) -> dict[str, Any]:  # fmt: skip
    names = names or default_scenarios()
    _testbed_checks(policies, names)
    _reference_checks(reference, names, policies)

    def echo(s: str) -> None:
        click.echo(s, err=True)

    result = evaluate(policies, names, duration, sweep, out, repetitions=repetitions,
                      resume=resume, echo=echo, reference=reference)  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    (out / "evaluate.json").write_text(json.dumps(result, indent=1))
    return result


def _suite(policies: tuple[str, ...], suite: str, set_name: str, duration: float,
           sweep: tuple[int, ...], repetitions: int, out: Path, resume: bool,
           json_out: str | None, reference: Sequence[Path] | None = None) -> None:  # fmt: skip
    from testbeds import ScenarioError
    from testbeds.suite import suite_scenarios
    from train.suite_eval import print_suite, run_suite

    try:
        names = suite_scenarios(suite, set_name)
    except ScenarioError as exc:
        raise click.BadParameter(str(exc), param_hint="--suite") from None
    _testbed_checks(policies, names)
    _reference_checks(reference, names, policies)
    result = run_suite(policies, suite, set_name, duration, sweep, out, repetitions=repetitions,
                       resume=resume, echo=lambda s: click.echo(s, err=True),
                       reference=reference)  # fmt: skip
    text = json.dumps(result, indent=1)
    (out / f"{result['suite']}-{set_name}" / "evaluate.json").write_text(text)
    if json_out is None:
        print_suite(result)
        return
    click.echo(text)
    if json_out != "-":
        Path(json_out).write_text(text)


@click.command("evaluate")
@click.option(
    "--policy",
    "policies",
    multiple=True,
    help="Controller spec, e.g. ppo or ppo:CKPT (repeatable; the first is the one evaluated) [default: ppo; simulator: ppo, gd, bo]. With --reference, oracle runs each scenario's stored best fixed N again (the ceiling a policy holding one count meets).",
)
@click.option(
    "--sim/--testbed",
    default=None,
    help="Simulator, or emulated testbed scenarios [default: testbed when scenarios are named].",
)
@click.option(
    "--scenarios",
    help="Comma-separated testbed scenarios NAME[@PER_STREAM_RATE] [default with --testbed: the single-path, single-pair ones].",
)
@click.option(
    "--scenario",
    "scenario_list",
    multiple=True,
    help="One testbed scenario NAME[@PER_STREAM_RATE] (repeatable).",
)
@click.option(
    "--scenario-file",
    "scenario_files",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Testbed: the scenarios FILE lists, one per line, # comments; relative paths from "
    "FILE's directory (repeatable; e.g. configs/sets/warmup10.txt).",
)
@click.option(
    "--duration", default=30.0, show_default=True, help="Testbed: seconds per run (sweep runs too)."
)
@click.option(
    "--sweep",
    "sweep_text",
    default=",".join(map(str, DEFAULT_SWEEP)),
    show_default=True,
    help="Testbed: fixed stream counts to sweep.",
)
@click.option(
    "--suite",
    help="Testbed: a scenario suite (configs/suites/NAME) instead of --scenarios; see --set.",
)
@click.option(
    "--set",
    "set_name",
    type=click.Choice(["validation", "test", "named"]),
    default="validation",
    show_default=True,
    help="With --suite: which set (test: only for a candidate about to ship, once).",
)
@click.option(
    "--repetitions",
    "--repeat",
    default=1,
    show_default=True,
    type=click.IntRange(1, 20),
    help="Testbed: runs per controller.",
)
@click.option(
    "--out",
    "out_dir",
    default="runs/evaluate",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Testbed: run logs, figures and summary per scenario, evaluate.json.",
)
@click.option("--resume", is_flag=True, help="Testbed: keep runs that already finished in --out.")
@click.option(
    "--networks", default=100, show_default=True, help="Simulator: held-out random networks."
)
@click.option(
    "--seed", default=1_000_003, show_default=True, help="Simulator: seed of the held-out networks."
)
@click.option(
    "--sim-config",
    type=click.Path(dir_okay=False, exists=True),
    help="Simulator: draw the held-out networks from this training config's [sim] ranges "
    "(e.g. configs/train/robust.toml) [default: the simulator's defaults].",
)
@click.option(
    "--world-class",
    metavar="NAME",
    help="Simulator: draw every held-out network from one class of worlds: lan-competitor (a "
    "LAN shared with a long-lived loss-based transfer), bbr-competitor (a path shared with a "
    "BBR transfer that holds loss), lossy-long (100-250 ms, 0.01-0.1 % random loss), "
    "lossy-lan (a LAN with 0.05-0.5 % random loss and nobody else on it), bbr-onoff-lan (a "
    "lossy LAN with a BBR transfer that comes and goes), peer (a path shared with a "
    "transfer like ours that answers our stream count); all: each class in turn, a table of "
    "median / p10 per class and the mean of the medians (the protocol's screen).",
)
@click.option(
    "--reference",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Testbed: take the best fixed N, GD and BO of each scenario from DIR/NAME.json (an "
    "earlier xfer evaluate --json of it) instead of running them again; only the policies run. "
    "Repeatable: the first DIR that holds NAME.json is used.",
)
@click.option(
    "--json",
    "json_out",
    is_flag=False,
    flag_value="-",
    default=None,
    metavar="[FILE]",
    help="Print the result as JSON instead of a table; with FILE, also write it there.",
)
def evaluate_cmd(policies: tuple[str, ...], sim: bool | None, scenarios: str | None,
                 scenario_list: tuple[str, ...], scenario_files: tuple[Path, ...],
                 duration: float, sweep_text: str,
                 suite: str | None, set_name: str, repetitions: int, out_dir: str, resume: bool, networks: int, seed: int,
                 sim_config: str | None, world_class: str | None,
                 reference: tuple[Path, ...], json_out: str | None) -> None:  # fmt: skip
    """Evaluate a policy against the best fixed stream count (a sweep of N), GD and BO, in the
    simulator or on emulated testbed scenarios: utility ratio, time to optimum, throughput."""
    names = [s.strip() for s in (scenarios or "").split(",") if s.strip()] + list(scenario_list)
    for f in scenario_files:
        try:
            names += read_scenario_file(f)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--scenario-file") from None
    if suite:
        if names or sim:
            raise click.UsageError("--suite takes no --scenarios/--scenario and no --sim")
        _suite(policies or ("ppo",), suite, set_name, duration, parse_counts(sweep_text),
               repetitions, Path(out_dir), resume, json_out, reference or None)  # fmt: skip
        return
    if sim is None:
        sim = not names
    if reference and sim:
        raise click.UsageError("--reference goes with testbed scenarios, not --sim")
    if (sim_config or world_class) and not sim:
        raise click.UsageError("--sim-config and --world-class go with the simulator (--sim)")
    if world_class and world_class != "all":  # all: the screen, every class in turn
        from train.simeval import check_world_class

        try:
            check_world_class(world_class)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--world-class") from None
    if sim:
        if names:
            raise click.UsageError("--sim takes no scenarios (use --testbed)")
        specs = list(policies or DEFAULT_POLICIES)
        _policy_checks(tuple(specs), testbed=False)
        result = _sim_or_screen(specs, networks, seed, sim_config, world_class, json_out is None)
    else:
        sweep = parse_counts(sweep_text)
        result = _testbed(policies or ("ppo",), names, duration, sweep, repetitions,
                          Path(out_dir), resume, reference or None)  # fmt: skip
        if json_out is None:
            print_table(result)
    if json_out is not None:
        text = json.dumps(result, indent=1)
        click.echo(text)
        if json_out != "-":
            Path(json_out).write_text(text)
