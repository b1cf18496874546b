"""``xfer experiment FILE``: run a policy comparison on an emulated scenario.

For each (policy, repetition), and for each stream count of the optional sweep, a fresh
testbed of the experiment's scenario is brought up (``testbeds.Testbed``; its schedule and
background flows start with the run), ``xfer recv`` is started in the receiver namespace(s),
and the experiment's transfers are started with ``xfer send`` in the sender namespace(s) at
their staggered offsets, each writing a Parquet run log. Afterwards the figures are drawn by
``lab.report`` and ``summary.json`` is written with the numbers of ``lab.metrics``.

Output directory layout::

    OUT/experiment.json                 the experiment as run (after --duration/--policies)
    OUT/logs/<policy>/r<rep>-t<k>.parquet   run log of transfer k (also .jsonl, .stderr)
    OUT/sweep/fixed-<N>/r<rep>-t1.parquet   sweep runs (one transfer each)
    OUT/figures/*.png
    OUT/summary.json

The schema of experiment files is in :mod:`lab.experiment_config`; see docs/experiments.md.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from lab.experiment_config import (
    Experiment,
    ExperimentError,
    load_experiment,
    parse_experiment,
)

__all__ = [
    "Experiment",
    "ExperimentError",
    "TransferResult",
    "Trial",
    "experiment_cmd",
    "load_experiment",
    "parse_experiment",
    "run_experiment",
    "run_trial",
]

BASE_PORT = 5700
STARTUP_GRACE_S = 45.0
"""Seconds a sender may take beyond its planned end (interpreter start, connect, teardown)."""
READY_TIMEOUT_S = 20.0
"""Seconds a receiver may take to print that it listens."""
LEAD_S = 10.0
"""Concurrent transfers: every sender starts this long before the first start time, imports
its engine and controller (torch, scikit-optimize: seconds on a busy machine) and then
sleeps until its own start time, so that the staggered starts happen when planned."""

GATE_TIMEOUT_S = 60.0
"""Seconds a gated sender waits for the harness's go before it starts anyway."""

_PRELUDE = f"""
import os, sys, time
from policy.base import ControllerConfig, make_controller
import xfer.api, xfer.cli_transfer
from xfer.cli import cli
at, spec = sys.argv[1], sys.argv[2]
make_controller(spec, ControllerConfig())  # import the controller's modules before the start
if at.startswith("gate:"):  # say ready, then wait for the harness's go (the scenario's t = 0)
    gate, end = at[5:], time.monotonic() + {GATE_TIMEOUT_S}
    open(gate + ".ready", "w").close()
    while not os.path.exists(gate + ".go") and time.monotonic() < end:
        time.sleep(0.001)
else:
    time.sleep(max(0.0, float(at) - time.time()))
cli.main(args=sys.argv[3:], prog_name="xfer")
"""
"""Sender wrapper: ``python -c _PRELUDE START POLICY send ...``; START is a wall-clock epoch
to sleep until (0: at once) or ``gate:PATH`` (create ``PATH.ready`` once imported, then wait
for ``PATH.go``)."""


@dataclass(frozen=True)
class Trial:
    """One run of the experiment: its transfers start together (at their offsets)."""

    policy: str
    """Controller spec of every transfer of the run."""
    repetition: int
    """1-based repetition number."""
    kind: str
    """``run`` (a compared policy) or ``sweep`` (a fixed stream count of the sweep)."""
    duration_s: float
    """Seconds each transfer sends (or its time limit, for a fixed data size)."""
    starts_s: tuple[float, ...]
    """Offset of each transfer (s)."""

    @property
    def slug(self) -> str:
        """Directory name of the policy (``fixed:20`` -> ``fixed-20``)."""
        return re.sub(r"[^A-Za-z0-9_.-]+", "-", self.policy).strip("-") or "policy"

    @property
    def group(self) -> str:
        """Run-log ``group`` shared by the concurrent transfers of this trial."""
        return f"{self.kind}-{self.slug}-r{self.repetition}"


@dataclass(frozen=True)
class TransferResult:
    """What one transfer of a trial left behind."""

    trial: Trial
    """The trial it belongs to."""
    transfer: int
    """1-based transfer number within the trial."""
    log: str
    """Parquet run log."""
    end: dict[str, Any]
    """The sender's end object (``--json-stream``), or an error record if there was none."""
    launched_at: float
    """Wall clock (POSIX s) when the sender was started."""
    finished_at: float
    """Wall clock (POSIX s) when the sender exited."""

    @property
    def ok(self) -> bool:
        """The sender exited normally and its log exists."""
        return self.end.get("exit_code") == 0 and Path(self.log).exists()


@dataclass
class _Sender:
    k: int
    host: Any
    address: str
    log: Path
    start_at: float | str
    """Wall clock (POSIX s) at which it starts sending, or ``gate:PATH`` (see ``_PRELUDE``)."""
    deadline: float
    """time.monotonic() after which it is stopped."""
    proc: subprocess.Popen[bytes] | None = None
    launched_at: float = 0.0
    finished_at: float = 0.0


def _py(*args: str) -> list[str]:
    return [sys.executable, "-m", "xfer.cli", *args]


def _start_receivers(
    exp: Experiment, hosts: list[tuple[Any, Any]], port: int, scratch: Path
) -> dict[str, tuple[subprocess.Popen[bytes], str]]:
    """One ``xfer recv`` per receiver host (started together), once each prints that it listens."""
    scratch.mkdir(parents=True, exist_ok=True)
    once = exp.receiver == "paired" or len(hosts) == 1
    receivers: dict[str, tuple[subprocess.Popen[bytes], str]] = {}
    for k, (_, rhost) in enumerate(hosts, start=1):
        if rhost.name in receivers:
            continue
        listen = f"{rhost.addr}:{port + k}"
        root = scratch / f"root-{rhost.name}"
        root.mkdir(parents=True, exist_ok=True)
        argv = _py("recv", "--listen", listen, "--root", str(root), "--insecure", "--no-fsync")
        argv += ["--once"] if once else []
        with open(scratch / f"recv-{rhost.name}.stderr", "wb") as err:
            proc = rhost.popen(argv, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
        receivers[rhost.name] = (proc, listen)
    deadline = time.monotonic() + READY_TIMEOUT_S
    for name, (proc, _) in receivers.items():
        errlog = scratch / f"recv-{name}.stderr"
        while "listening on" not in errlog.read_text(errors="replace"):
            if proc.poll() is not None or time.monotonic() > deadline:
                for p, _ in receivers.values():
                    _stop(p, 0.5)
                raise ExperimentError(
                    f"xfer recv on {name} did not start: {errlog.read_text()[-500:]}"
                )
            time.sleep(0.05)
    return receivers


def _stop(proc: subprocess.Popen[bytes], grace: float) -> None:
    """SIGINT (the engine then closes its log), then SIGKILL after ``grace`` seconds."""
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGINT, grace), (signal.SIGKILL, 5.0)):
        try:
            proc.send_signal(sig)
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue
        except ProcessLookupError:
            return


def _sender_argv(
    exp: Experiment,
    trial: Trial,
    k: int,
    address: str,
    log: Path,
    src: Path | None,
    start_at: float | str = 0.0,
) -> list[str]:
    """The sender's command line; it starts sending at wall-clock ``start_at`` (0: at once) or,
    given ``gate:PATH``, when the harness creates ``PATH.go``."""
    if exp.data.kind == "tree":
        assert src is not None
        what = [str(src)]
    elif exp.data.size_bytes is not None:
        what = ["--mem", str(exp.data.size_bytes)]
    else:
        what = ["--duration", f"{trial.duration_s:g}"]
    at = start_at if isinstance(start_at, str) else f"{start_at:.3f}"
    argv = [sys.executable, "-c", _PRELUDE, at, trial.policy]
    argv += ["send", *what, address, "--policy", trial.policy, "--json-stream", "-q"]
    argv += ["--encryption", "off"]  # a private emulated link: measure the controller, as before
    argv += ["--min-streams", str(exp.min_streams), "--max-streams", str(exp.max_streams)]
    argv += ["--mi", f"{exp.mi_s:g}", "--log", str(log)]
    if exp.stream_rate_bps:
        argv += ["--stream-rate", str(int(exp.stream_rate_bps))]
    if exp.cc:
        argv += ["--cc", exp.cc]
    meta = {
        "scenario": Path(exp.scenario).stem,
        "experiment": exp.name,
        "label": trial.policy,
        "kind": trial.kind,
        "repetition": str(trial.repetition),
        "transfer": str(k),
        "transfers": str(len(trial.starts_s)),
        "start_offset_s": f"{trial.starts_s[k - 1]:g}",
        "duration_s": f"{trial.duration_s:g}",
    }
    if len(trial.starts_s) > 1:  # concurrent transfers: JFI and link use are per group
        meta["group"] = trial.group
    for key, value in meta.items():
        argv += ["--meta", f"{key}={value}"]
    return argv


def _hosts(exp: Experiment, tb: Any) -> list[tuple[Any, Any]]:
    """(sender host, receiver host) of each transfer."""
    pairs = tb.scenario.pairs
    k_max = exp.transfers
    if exp.receiver == "paired":
        if pairs < k_max:
            raise ExperimentError(
                f"{exp.source}: {k_max} paired transfers need a scenario with pairs >= {k_max} "
                f"({tb.scenario.name} has {pairs}); use receiver = 'shared' or another scenario"
            )
        names = [
            (f"sender{k if k > 1 else ''}", f"receiver{k if k > 1 else ''}")
            for k in range(1, k_max + 1)
        ]
    elif pairs >= k_max:
        names = [(f"sender{k if k > 1 else ''}", "receiver") for k in range(1, k_max + 1)]
    else:  # shared receiver, not enough sender hosts: all transfers leave from one host
        names = [("sender", "receiver")] * k_max
    return [(tb.hosts[s], tb.hosts[r]) for s, r in names]


def _end_record(jsonl: Path, stderr: Path, returncode: int | None) -> dict[str, Any]:
    end: dict[str, Any] | None = None
    if jsonl.exists():
        for line in jsonl.read_text(errors="replace").splitlines():
            if line.startswith("{") and '"event": "end"' in line:
                try:
                    end = json.loads(line)
                except json.JSONDecodeError:
                    continue
    if end is None:
        tail = stderr.read_text(errors="replace")[-800:] if stderr.exists() else ""
        end = {"event": "end", "exit_code": returncode if returncode else -1,
               "error": f"sender printed no end object (exit {returncode}): {tail.strip()}"}  # fmt: skip
    return end


def _launch_and_wait(
    senders: list[_Sender], exp: Experiment, trial: Trial, src: Path | None
) -> None:
    for s in senders:  # all at once: each sleeps until its start time (see LEAD_S)
        argv = _sender_argv(exp, trial, s.k, s.address, s.log, src, s.start_at)
        s.launched_at = time.time()
        with (
            open(s.log.with_suffix(".jsonl"), "wb") as out,
            open(s.log.with_suffix(".stderr"), "wb") as err,
        ):
            s.proc = s.host.popen(argv, stdout=out, stderr=err, start_new_session=True)
    running = list(senders)
    while running:
        for s in list(running):
            assert s.proc is not None
            if s.proc.poll() is None and time.monotonic() > s.deadline:
                _stop(s.proc, 10.0)  # over its time limit: SIGINT closes the log cleanly
            if s.proc.poll() is not None:
                s.finished_at = time.time()
                running.remove(s)
        time.sleep(0.05)


class _ScheduleClock(threading.Thread):
    """Starts the scenario's schedule (its t = 0) when the transfer starts: ``lead`` seconds from
    now (staggered transfers: each sender sleeps until its own start, see ``LEAD_S``) or, given
    ``gate``, once the single sender has created ``gate.ready`` (its engine and controller are
    imported), and then lets it go (``gate.go``). Before round 46 a single sender was launched
    with the schedule already running, so a controller that imports torch (about 2 s) met a
    rival that joins early sooner in its transfer than GD or a fixed count did. A scenario's
    ``head_start_s`` starts the schedule that long before the transfer, for every controller
    alike (a link already shared with established flows)."""

    def __init__(self, begin: Any, lead: float, gate: Path | None, head: float = 0.0) -> None:
        super().__init__(daemon=True)
        self._begin, self._lead, self._gate, self._head = begin, lead, gate, head
        self._halt = threading.Event()
        self.start()

    def run(self) -> None:
        if self._gate is None:  # the scenario's head start comes out of the lead
            if not self._halt.wait(max(0.0, self._lead - self._head)):
                self._begin()
            return
        ready = Path(f"{self._gate}.ready")
        while not self._halt.is_set():
            if ready.exists():
                self._begin()
                if not self._halt.wait(self._head):  # a scenario's head start, if any
                    Path(f"{self._gate}.go").touch()
                return
            self._halt.wait(0.001)

    def stop(self) -> None:
        """Stop waiting (a sender that never became ready) and join."""
        self._halt.set()
        self.join()


def run_trial(
    exp: Experiment, trial: Trial, out_dir: Path, port: int, src: Path | None = None
) -> list[TransferResult]:
    """Bring the scenario up, run the trial's transfers in it, tear it down; return results."""
    from testbeds import Testbed, load_scenario

    logdir = out_dir / ("sweep" if trial.kind == "sweep" else "logs") / trial.slug
    logdir.mkdir(parents=True, exist_ok=True)
    scratch = out_dir / "tmp" / trial.group
    with Testbed(load_scenario(exp.scenario)) as tb:
        hosts = _hosts(exp, tb)
        receivers = _start_receivers(exp, hosts, port, scratch)
        clock: _ScheduleClock | None = None
        try:
            lead = LEAD_S if len(trial.starts_s) > 1 else 0.0
            timed = bool(tb.scenario.schedule or tb.scenario.background)
            gate = scratch / f"gate-r{trial.repetition}" if timed and not lead else None
            if timed:  # the scenario's clock starts with the first transfer
                clock = _ScheduleClock(tb.start_schedule, lead, gate, tb.scenario.head_start_s)
            wall, mono = time.time() + lead, time.monotonic() + lead
            senders = [
                _Sender(k, shost, receivers[rhost.name][1],
                        logdir / f"r{trial.repetition}-t{k}.parquet",
                        f"gate:{gate}" if gate else wall + trial.starts_s[k - 1] if lead else 0.0,
                        mono + trial.starts_s[k - 1] + trial.duration_s + STARTUP_GRACE_S)
                for k, (shost, rhost) in enumerate(hosts, start=1)
            ]  # fmt: skip
            _launch_and_wait(senders, exp, trial, src)
        finally:
            if clock is not None:
                clock.stop()
            for proc, _ in receivers.values():
                _stop(proc, 5.0)
            shutil.rmtree(scratch, ignore_errors=True)
    return [
        TransferResult(trial, s.k, str(s.log),
                       _end_record(s.log.with_suffix(".jsonl"), s.log.with_suffix(".stderr"),
                                   s.proc.returncode if s.proc else None),
                       s.launched_at, s.finished_at)
        for s in senders
    ]  # fmt: skip


# -- the whole experiment -------------------------------------------------------------------


def plan(exp: Experiment) -> list[Trial]:
    """Every trial of ``exp`` in run order: the sweep, then repetitions of all policies, the
    policies' order rotated by one place per repetition."""
    trials: list[Trial] = []
    if exp.sweep is not None:
        for rep in range(1, exp.sweep.repetitions + 1):
            trials += [
                Trial(f"fixed:{n}", rep, "sweep", exp.sweep.duration_s, (0.0,))
                for n in exp.sweep.streams
            ]
    # Interleaved, so that drift hits every policy, and rotated by one place per repetition,
    # so that no policy always runs first: with a fixed order the shipped policy beside a
    # byte-identical copy of itself listed first read +0.044 +- 0.019 over ten scenarios and
    # three runs (issue #16 round 27, rule 3), as large as the candidates' differences.
    pol = exp.policies
    for rep in range(1, exp.repetitions + 1):
        k = (rep - 1) % len(pol)
        trials += [Trial(p, rep, "run", exp.duration_s, exp.starts_s) for p in pol[k:] + pol[:k]]
    return trials


def _done_before(exp: Experiment, trial: Trial, out_dir: Path) -> list[TransferResult] | None:
    """Results of a trial finished by an earlier invocation (for --resume), else None."""
    logdir = out_dir / ("sweep" if trial.kind == "sweep" else "logs") / trial.slug
    results = []
    for k in range(1, len(trial.starts_s) + 1):
        log = logdir / f"r{trial.repetition}-t{k}.parquet"
        end = _end_record(log.with_suffix(".jsonl"), log.with_suffix(".stderr"), None)
        if not log.exists() or end.get("exit_code") != 0:
            return None
        results.append(TransferResult(trial, k, str(log), end, 0.0, 0.0))
    return results


def _tree_source(exp: Experiment, out_dir: Path) -> Path | None:
    if exp.data.kind != "tree":
        return None
    from xfer.dataset import generate

    src = out_dir / "data" / "tree"
    if not src.exists():
        assert exp.data.size_bytes is not None
        generate(str(src), exp.data.size_bytes)
    return src


def run_experiment(
    exp: Experiment,
    out_dir: str | Path,
    *,
    resume: bool = False,
    echo: Callable[[str], None] = lambda s: None,
) -> dict[str, Any]:
    """Run every trial of ``exp`` (one at a time), then write the figures and summary.json."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "experiment.json").write_text(json.dumps(dataclasses.asdict(exp), indent=1))
    src = _tree_source(exp, out)
    files = policy_files(exp)
    trials = plan(exp)
    results: list[TransferResult] = []
    for i, trial in enumerate(trials):
        prior = _done_before(exp, trial, out) if resume else None
        t = time.monotonic()
        res = prior or run_trial(exp, trial, out, BASE_PORT + 20 * (i % 40), src)
        results += res
        echo(f"[{i + 1}/{len(trials)}] {trial.kind} {trial.policy} rep {trial.repetition}: "
             + ", ".join(_brief(r) for r in res)
             + (" (from an earlier run)" if prior else f" ({time.monotonic() - t:.0f} s)"))  # fmt: skip
    if src is not None:
        shutil.rmtree(src.parent, ignore_errors=True)
    shutil.rmtree(out / "tmp", ignore_errors=True)
    from lab.experiment_summary import summarize, write_figures

    summary = summarize(exp, results)
    for spec, entry in summary["policies"].items():
        entry["checkpoints"] = files.get(spec, {})
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    figures = write_figures(exp, results, out / "figures")
    summary["figures"] = [str(p) for p in figures]
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary


def _brief(r: TransferResult) -> str:
    if not r.ok:
        return f"t{r.transfer} FAILED ({r.end.get('error')})"
    return f"t{r.transfer} {r.end.get('throughput_bps', 0) / 1e6:.0f} Mbit/s"


def _split(text: str | None) -> tuple[str, ...] | None:
    from policy.base import split_specs

    return split_specs(text) if text else None


ROOT = Path(__file__).resolve().parent.parent
"""The checkout's root: ``summary.json``'s ``checkpoints`` name the files inside it relative
to it, so a block reads the same from another worktree."""


def file_sha256(p: Path) -> str:
    """The sha256 of a file's bytes, read once per process while the file stays as it was
    (``train.replay.pinned`` compares a recorded checkpoint with every file under
    ``policy/weights``, once per scenario and label)."""
    st = p.stat()
    return _sha256_of(str(p.resolve()), st.st_mtime_ns, st.st_size, st.st_ino)


@functools.lru_cache(maxsize=256)
def _sha256_of(path: str, mtime_ns: int, size: int, inode: int) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def policy_files(exp: Experiment) -> dict[str, dict[str, str]]:
    """Per policy of ``exp``: the files it decides with (:func:`policy.base.checkpoint_files`;
    inside this checkout, relative to :data:`ROOT`) and each file's sha256, as read before the
    first run. ``summary.json`` keeps them under ``checkpoints``, so a block still says which
    policy ``ppo`` was after the shipped file is replaced (:func:`train.replay.pinned`)."""
    from policy.base import ControllerConfig, checkpoint_files, make_controller

    cfg = ControllerConfig(exp.min_streams, exp.max_streams, None, exp.mi_s)
    out: dict[str, dict[str, str]] = {}
    for spec in exp.policies:
        files: dict[str, str] = {}
        for f in checkpoint_files(make_controller(spec, cfg)):
            p = f.resolve()
            files[str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p)] = file_sha256(p)
        out[spec] = files
    return out


def _check_controllers(exp: Experiment) -> None:
    """Build every controller once here, so that a missing checkpoint fails before the runs."""
    from policy.base import ControllerConfig, make_controller

    cfg = ControllerConfig(exp.min_streams, exp.max_streams, None, exp.mi_s)
    for spec in exp.policies:
        try:
            make_controller(spec, cfg)
        except ValueError as exc:
            raise ExperimentError(f"{exp.source}: policy {spec!r}: {exc}") from None


@click.command("experiment")
@click.argument("file")
@click.option(
    "--duration", type=float, help="Seconds per run (start offsets and the sweep scale along)."
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    help="Output directory [default: runs/experiments/NAME].",
)
@click.option(
    "--policies",
    help="Comma-separated policies instead of the file's (e.g. gd,ppo); a spec's own "
    "KEY=VALUE arguments stay with it (guard:loss_min=0.005,cooldown=32,gd is two policies).",
)
@click.option("--repetitions", type=int, help="Runs per policy instead of the file's.")
@click.option("--no-sweep", is_flag=True, help="Skip the sweep of fixed stream counts.")
@click.option("--resume", is_flag=True, help="Keep trials that already finished in --out.")
def experiment_cmd(file: str, duration: float | None, out_dir: str | None, policies: str | None,
                   repetitions: int | None, no_sweep: bool, resume: bool) -> None:  # fmt: skip
    """Run the experiment FILE (a path, or a name in configs/experiments/) on its testbed
    scenario; write run logs, figures and summary.json under --out."""
    try:
        exp = load_experiment(file).with_overrides(duration, _split(policies), repetitions)
        if no_sweep:
            exp = dataclasses.replace(exp, sweep=None)
        _check_controllers(exp)
    except ExperimentError as exc:
        raise click.UsageError(str(exc)) from None
    out = Path(out_dir or Path("runs") / "experiments" / exp.name)
    click.echo(
        f"xfer experiment {exp.name}: {len(plan(exp))} runs on {exp.scenario} -> {out}", err=True
    )
    try:
        summary = run_experiment(exp, out, resume=resume, echo=lambda s: click.echo(s, err=True))
    except ExperimentError as exc:
        raise click.ClickException(str(exc)) from None
    from lab.experiment_summary import print_summary

    print_summary(summary)
    click.echo(f"xfer experiment: summary {out / 'summary.json'}", err=True)
    failed = summary.get("failed_transfers", 0)
    if failed:
        raise click.ClickException(
            f"{failed} transfer(s) failed; see the .stderr files under {out}"
        )
