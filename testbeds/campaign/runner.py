"""Run a campaign over SSH: install, calibrate, run the matrix, collect logs, report.

The order is fixed: connect to every host, install this xfer (a locally built wheel), give
every host the campaign's auth token, calibrate every link (and stop, collecting nothing, if
one fails), then run each pending run (receiver started with ``--once``, sender run with
``--log``/``--meta``/``--json``), fetch its Parquet log, and record it in the state file.
Runs on links with disjoint hosts proceed in parallel (one worker per link; a lock per host
keeps two runs off the same machine). Finally ``xfer report`` reads every log.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from testbeds.campaign import install
from testbeds.campaign.calibrate import (
    CalibrationFailed,
    CalibrationResult,
    goodput_of,
    judge,
    parse_ping,
)
from testbeds.campaign.plan import CampaignState, PlannedRun, plan_runs
from testbeds.campaign.remote import RemoteError, RemoteHost, RemoteProcess
from testbeds.campaign.schema import Campaign, LinkSpec

READY = "listening on"


@dataclass(frozen=True, slots=True)
class RunnerOptions:
    """How ``xfer campaign run`` drives a campaign (CLI options map onto this)."""

    out_dir: Path
    """Local output directory: state.json, logs/, calibration.json, report/."""
    wheel: Path | None = None
    """A prebuilt xfer wheel; ``None`` builds one from this checkout."""
    report: bool = True
    """Run ``xfer report`` over every log at the end."""
    max_runs: int | None = None
    """Stop after this many runs (spread a long campaign over sessions); ``None``: all."""
    log: Callable[[str], None] = field(default=print)
    """Where progress lines go."""


@dataclass(slots=True)
class CampaignSummary:
    """What a ``run`` call did."""

    planned: int
    """Runs in the matrix."""
    skipped: int
    """Runs already done before this call (resumed)."""
    done: list[str] = field(default_factory=list)
    """Run ids finished by this call."""
    failed: list[str] = field(default_factory=list)
    """Run ids that failed in this call (retried on the next call)."""
    calibration: list[dict[str, Any]] = field(default_factory=list)
    """This call's calibration results."""
    report_dir: Path | None = None
    """Where the report went, if one was made."""


def _kv(meta: dict[str, str]) -> list[str]:
    return [arg for k, v in meta.items() for arg in ("--meta", f"{k}={v}")]


def _last_json(text: str) -> dict[str, Any]:
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            with contextlib.suppress(json.JSONDecodeError):
                obj = json.loads(line)
                if isinstance(obj, dict):
                    return obj
    return {}


class CampaignRunner:
    """Drives one campaign from this machine."""

    def __init__(self, campaign: Campaign, options: RunnerOptions) -> None:
        self.c = campaign
        self.opt = options
        self.log = options.log
        self.state = CampaignState(options.out_dir, campaign.name)
        self.hosts: dict[str, RemoteHost] = {}
        self.locks: dict[str, asyncio.Lock] = {}
        self._budget = options.max_runs

    # -- setup ----------------------------------------------------------------------------

    async def _connect(self) -> None:
        names = sorted({n for lk in self.c.selected_links() for n in (lk.sender, lk.receiver)})
        conns = await asyncio.gather(*(RemoteHost.connect(self.c.host(n)) for n in names))
        self.hosts = dict(zip(names, conns, strict=True))
        self.locks = {n: asyncio.Lock() for n in names}
        self.log(f"connected: {', '.join(f'{n} ({h.spec.host})' for n, h in self.hosts.items())}")

    async def _install(self) -> None:
        wheel = self.opt.wheel
        if wheel is None and any(h.spec.install == "venv" for h in self.hosts.values()):
            wheel = install.build_wheel(self.opt.out_dir / "wheel")
            self.log(f"built {wheel.name}")
        how = await asyncio.gather(
            *(install.install_on(h, wheel, self.log) for h in self.hosts.values())  # type: ignore[arg-type]
        )
        self.log("install: " + ", ".join(f"{n} {w}" for n, w in zip(self.hosts, how, strict=True)))

    async def _distribute_token(self) -> None:
        token_file = self.opt.out_dir / "token"
        if not token_file.exists():
            fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as fh:
                fh.write(secrets.token_hex(32) + "\n")
        for h in self.hosts.values():
            await h.put(token_file, h.path("token"))
            await h.run(["chmod", "600", h.path("token")])

    # -- one transfer ---------------------------------------------------------------------

    def _send_args(self, policy: str, meta: dict[str, str], log_path: str | None) -> list[str]:
        r, ds = self.c.run, self.c.dataset
        args: list[str] = []
        if ds.kind == "mem":
            args += ["--mem", str(ds.total_bytes)]
            if r.duration_s is not None:
                args += ["--duration", f"{r.duration_s:g}"]
        else:
            args += [str(ds.path)]
        args += [
            "--policy",
            policy,
            "--min-streams",
            str(r.min_streams),
            "--max-streams",
            str(r.max_streams),
            "--mi",
            f"{r.mi_s:g}",
            "--transport",
            r.transport,
        ]
        if r.cc:
            args += ["--cc", r.cc]
        if r.stream_rate:
            args += ["--stream-rate", r.stream_rate]
        if log_path:
            args += ["--log", log_path]
        return [*args, *_kv(meta), *r.extra_args]

    async def _transfer(
        self, link: LinkSpec, tag: str, send_args: list[str], timeout: float
    ) -> tuple[dict[str, Any], str]:
        """Start a receiver, run one send, stop the receiver; return (end object, errors)."""
        tx, rx = self.hosts[link.sender], self.hosts[link.receiver]
        root = rx.path("rx", tag)
        await rx.run(["rm", "-rf", root])
        await rx.run(["mkdir", "-p", root])
        recv_cmd = [
            *install.xfer_command(rx),
            "recv",
            "--listen",
            f"{rx.spec.addr}:{link.port}",
            "--root",
            root,
            "--once",
            "--token-file",
            rx.path("token"),
        ]
        target = f"{rx.spec.addr}:{link.port}"
        send_cmd = [
            *install.xfer_command(tx),
            "send",
            *send_args,
            "--json",
            "--token-file",
            tx.path("token"),
            target,
        ]
        receiver: RemoteProcess | None = None
        sender: RemoteProcess | None = None
        try:
            receiver = await rx.start(recv_cmd, pidfile=rx.path("receiver.pid"))
            await receiver.wait_ready(READY, timeout=60)
            sender = await tx.start(send_cmd, pidfile=tx.path("sender.pid"))
            try:
                done = await sender.wait(timeout)
            except TimeoutError:
                return {
                    "error": f"run exceeded timeout_s={timeout:g}",
                    "exit_code": -1,
                }, sender.stderr
            end = _last_json(done.stdout)
            if done.exit_status != 0 and not end.get("error"):
                end = {
                    **end,
                    "exit_code": done.exit_status,
                    "error": f"xfer send exited {done.exit_status}",
                }
            with contextlib.suppress(TimeoutError):
                await receiver.wait(30)
            return end, (done.stderr[-1500:] + receiver.stderr[-1500:])
        finally:
            for proc in (sender, receiver):
                if proc is not None:
                    await asyncio.shield(proc.kill(grace_s=2.0))
            with contextlib.suppress(Exception):
                await asyncio.shield(rx.run(["rm", "-rf", root]))

    # -- calibration ----------------------------------------------------------------------

    async def _calibrate(self, link: LinkSpec) -> CalibrationResult:
        spec = self.c.calibration
        tx, rx = self.hosts[link.sender], self.hosts[link.receiver]
        ping = await tx.run(
            ["ping", "-n", "-c", str(spec.pings), "-i", "0.2", "-W", "2", rx.spec.addr],
            check=False,
            timeout=spec.pings * 3 + 30,
        )
        rtts = parse_ping(ping.stdout)
        mem = max(self.c.dataset.total_bytes, 10**12)
        args = [
            "--mem",
            str(mem),
            "--duration",
            f"{spec.duration_s:g}",
            "--policy",
            f"fixed:{spec.streams}",
            "--max-streams",
            str(max(spec.streams, self.c.run.max_streams)),
            "--transport",
            self.c.run.transport,
        ]
        if self.c.run.cc:
            args += ["--cc", self.c.run.cc]
        end, errors = await self._transfer(link, "calibration", args, spec.duration_s * 3 + 60)
        goodput = goodput_of(end)
        result = judge(link, spec, rtts, goodput)
        if goodput is None and (end.get("error") or errors):
            result = CalibrationResult(
                **{
                    **result.to_dict(),
                    "problems": (
                        *result.problems,
                        f"send error: {end.get('error')}: {errors.strip()[-300:]}",
                    ),
                }
            )
        return result

    async def _calibrate_all(self, summary: CampaignSummary) -> None:
        failures = []
        for link in self.c.selected_links():
            res = await self._calibrate(link)
            rec = {**res.to_dict(), "at": time.time()}
            summary.calibration.append(rec)
            self.state.add_calibration(rec)
            rtt = f"{res.rtt_ms:.2f} ms" if res.rtt_ms is not None else "none"
            gp = f"{res.goodput_bps / 1e6:.1f} Mbit/s" if res.goodput_bps else "none"
            self.log(
                f"calibration {link.name}: RTT {rtt} (expected {link.expected_rtt_ms:g}), "
                f"goodput {gp} (expected {link.expected_goodput_bps / 1e6:.1f}): "
                f"{'ok' if res.ok else 'FAILED'}"
            )
            if not res.ok:
                failures.append(f"{link.name}: " + "; ".join(res.problems))
        (self.opt.out_dir / "calibration.json").write_text(
            json.dumps(summary.calibration, indent=1)
        )
        if failures:
            raise CalibrationFailed(
                "calibration failed, no data collected: " + " | ".join(failures)
            )

    # -- the matrix -----------------------------------------------------------------------

    async def _execute(self, run: PlannedRun, summary: CampaignSummary) -> None:
        tx = self.hosts[run.link.sender]
        remote_log = tx.path("logs", f"{run.run_id}.parquet")
        await tx.run(["mkdir", "-p", tx.path("logs")])
        await tx.run(["rm", "-f", remote_log])
        args = self._send_args(run.policy, run.meta(self.c), remote_log)
        started = time.time()
        end, errors = await self._transfer(run.link, run.run_id, args, self.c.run.timeout_s)
        failed = end.get("exit_code", 0) != 0 or bool(end.get("error")) or not end
        if not failed:
            try:
                await tx.get(remote_log, self.state.log_path(run))
            except RemoteError as exc:
                failed, errors = True, f"{exc}\n{errors}"
        if failed:
            summary.failed.append(run.run_id)
            self.state.mark(run, "failed", end=end, errors=errors[-2000:], started_at=started)
            self.log(f"run {run.run_id}: FAILED: {end.get('error')}: {errors.strip()[-300:]}")
        else:
            summary.done.append(run.run_id)
            self.state.mark(
                run,
                "done",
                end=end,
                started_at=started,
                log=str(self.state.log_path(run).relative_to(self.opt.out_dir)),
            )
            tp = float(end.get("throughput_bps") or 0) / 1e6
            self.log(
                f"run {run.run_id}: {tp:.1f} Mbit/s, {end.get('bytes')} bytes, "
                f"max {end.get('streams_max')} streams"
            )

    def _take_budget(self) -> bool:
        if self._budget is None:
            return True
        if self._budget <= 0:
            return False
        self._budget -= 1
        return True

    async def _link_worker(self, runs: list[PlannedRun], summary: CampaignSummary) -> None:
        for run in runs:
            ends = sorted({run.link.sender, run.link.receiver})
            async with contextlib.AsyncExitStack() as stack:
                for name in ends:  # sorted order: no deadlock between links sharing hosts
                    await stack.enter_async_context(self.locks[name])
                if not self._take_budget():
                    return
                await self._execute(run, summary)
            if self.c.run.pause_s:
                await asyncio.sleep(self.c.run.pause_s)

    async def run(self) -> CampaignSummary:
        """Do everything; raise :class:`CalibrationFailed` before collecting anything on a bad link."""
        self.opt.out_dir.mkdir(parents=True, exist_ok=True)
        planned = plan_runs(self.c)
        pending = self.state.pending(planned)
        summary = CampaignSummary(planned=len(planned), skipped=len(planned) - len(pending))
        self.log(
            f"campaign {self.c.name}: {len(planned)} runs, {summary.skipped} already done, "
            f"{len(pending)} to do"
        )
        if pending:
            try:
                await self._connect()
                await self._install()
                await self._distribute_token()
                await self._calibrate_all(summary)
                by_link: dict[str, list[PlannedRun]] = {}
                for r in pending:
                    by_link.setdefault(r.link.name, []).append(r)
                await asyncio.gather(*(self._link_worker(rs, summary) for rs in by_link.values()))
            finally:
                await asyncio.shield(asyncio.gather(*(h.close() for h in self.hosts.values())))
        if self.opt.report:
            summary.report_dir = self.report()
        return summary

    def report(self) -> Path | None:
        """``xfer report`` over every collected log: Fig. 2-style box plots per policy for
        each ``scenario`` (= ``testbed:link``), figures in ``report/``, the summary table as
        ``report/summary.json``."""
        logs = sorted((self.opt.out_dir / "logs").glob("*.parquet"))
        if not logs:
            self.log("report: no logs yet")
            return None
        out = self.opt.out_dir / "report"
        cmd = [
            sys.executable,
            "-m",
            "xfer.cli",
            "report",
            *map(str, logs),
            "--out",
            str(out),
            "--json",
        ]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(
                f"xfer report failed ({res.returncode}): {res.stderr.strip()[-1500:]}"
            )
        out.mkdir(parents=True, exist_ok=True)
        (out / "summary.json").write_text(res.stdout)
        self.log(f"report: {len(logs)} runs -> {out}")
        return out


async def run_campaign(campaign: Campaign, options: RunnerOptions) -> CampaignSummary:
    """Run (or resume) ``campaign``; see :class:`CampaignRunner`."""
    return await CampaignRunner(campaign, options).run()
