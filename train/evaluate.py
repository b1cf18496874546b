"""``xfer evaluate``: a policy against the best fixed stream count, GD and BO.

Two modes:

* ``--sim`` (default): the simulator's named networks plus held-out random networks
  (:mod:`train.simeval`); every controller runs through its real ``decide()``.
* ``--scenario NAME`` (repeatable, root): the emulated testbed. For each scenario a sweep of
  fixed N finds the best fixed utility and throughput, then each policy runs one memory
  transfer of ``--duration`` seconds; ``utility_ratio`` is its mean utility over the best
  fixed N's, ``time_to_optimum_s`` the first time from which the 3-MI moving average of
  throughput stays within 10 % of the best fixed throughput.

Prints a rich table and writes JSON (``--json OUT``).
"""

from __future__ import annotations

import functools
import json
import subprocess
import tempfile
import time
from typing import Any

import click
import numpy as np

DEFAULT_POLICIES = ("ppo", "gd", "bo")
SWEEP = (1, 2, 4, 8, 16, 24, 32, 48, 64)


def _sim(policies: list[str], networks: int, seed: int) -> dict[str, Any]:
    from policy.base import ControllerConfig, make_controller
    from train.simeval import evaluate

    cfg = ControllerConfig()
    out: dict[str, Any] = {}
    for spec in policies:
        n = networks if not spec.startswith("bo") else min(networks, 20)  # BO fits a GP per MI
        out[spec] = evaluate(functools.partial(make_controller, spec, cfg), n, seed)
    return out


def _run(tb: Any, dst: str, policy: str, seconds: float, cap: str | None) -> list[dict[str, Any]]:
    from train.calibrate import _xfer

    argv = _xfer("send", "--mem", "1000G", "--duration", str(seconds), "--policy", policy,
                 "--json-stream", "-q", "--no-checksum", dst)  # fmt: skip
    if cap:
        argv[-1:-1] = ["--stream-rate", cap]
    res = tb.hosts["sender"].run(argv, timeout=seconds + 60, capture_output=True, text=True)
    mis = [json.loads(x) for x in res.stdout.splitlines() if x.startswith('{"event": "interval"')]
    if not mis:
        raise click.ClickException(
            f"xfer send --policy {policy} gave no intervals: {res.stderr[-300:]}"
        )
    return mis


def _tto(thr: np.ndarray, best: float) -> float | None:
    avg = np.convolve(thr, np.ones(3) / 3, mode="valid")
    bad = np.flatnonzero(avg < 0.9 * best)
    if bad.size == 0:
        return 3.0
    return float(bad[-1] + 4) if bad[-1] + 1 < avg.size else None


def _scenario(spec: str, policies: list[str], seconds: float) -> dict[str, Any]:
    from testbeds import Testbed, load_scenario
    from train.calibrate import PORT, _wait_listening, _xfer

    name, _, cap = spec.partition("@")
    rows: dict[str, Any] = {}
    with (
        Testbed(load_scenario(name), name=f"ev{int(time.time()) % 100000}") as tb,
        tempfile.TemporaryDirectory() as root,
    ):
        dst = f"{tb.hosts['receiver'].addr}:{PORT}"
        recv = tb.hosts["receiver"].popen(
            _xfer("recv", "--listen", dst, "--root", root, "--insecure", "--no-fsync"),
            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        try:
            _wait_listening(recv)
            fixed = {n: _run(tb, dst, f"fixed:{n}", seconds, cap or None) for n in SWEEP}
            mean_u = {n: float(np.mean([m["utility"] for m in mis])) for n, mis in fixed.items()}
            best_n = max(mean_u, key=lambda n: mean_u[n])
            best_thr = max(
                float(np.mean([m["throughput_bps"] for m in mis])) for mis in fixed.values()
            )
            for p in policies:
                mis = _run(tb, dst, p, seconds, cap or None)
                thr = np.array([m["throughput_bps"] for m in mis])
                rows[p] = {
                    "utility_ratio": float(np.mean([m["utility"] for m in mis])) / mean_u[best_n],
                    "time_to_optimum_s": _tto(thr, best_thr),
                    "mean_throughput_bps": float(thr.mean()),
                }
        finally:
            recv.terminate()
            recv.wait(timeout=10)
    return {"best_fixed_n": best_n, "best_fixed_throughput_bps": best_thr, "policies": rows}


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
        "held-out random (p10)",
        *[f"{r['random']['utility_ratio_p10']:.3f}" for r in result.values()],
    )
    Console().print(t)


@click.command("evaluate")
@click.option(
    "--policy",
    "policies",
    multiple=True,
    help="Controller spec (repeatable) [default: ppo, gd, bo].",
)
@click.option(
    "--sim/--testbed", default=True, show_default=True, help="Simulator or emulated testbed."
)
@click.option(
    "--scenario",
    "scenarios",
    multiple=True,
    help="Testbed scenario NAME[@PER_STREAM_RATE] (repeatable).",
)
@click.option(
    "--networks", default=100, show_default=True, help="Held-out random simulated networks."
)
@click.option("--seed", default=1_000_003, show_default=True, help="Seed of the held-out networks.")
@click.option("--duration", default=60.0, show_default=True, help="Testbed: seconds per transfer.")
@click.option(
    "--json", "json_out", type=click.Path(dir_okay=False), help="Write the result as JSON."
)
def evaluate_cmd(
    policies: tuple[str, ...], sim: bool, scenarios: tuple[str, ...], networks: int,
    seed: int, duration: float, json_out: str | None,
) -> None:  # fmt: skip
    """Evaluate policies against the best fixed stream count (and each other)."""
    pols = list(policies or DEFAULT_POLICIES)
    if sim and not scenarios:
        result = _sim(pols, networks, seed)
        _print_sim(result)
    else:
        if not scenarios:
            raise click.UsageError("--testbed needs at least one --scenario")
        result = {s: _scenario(s, pols, duration) for s in scenarios}
        click.echo(json.dumps(result, indent=2))
    if json_out:
        with open(json_out, "w") as f:
            json.dump(result, f, indent=2)
