"""The live environment: one step = one MI of a real ``xfer send`` in an emulated testbed.

:class:`LiveEnv` brings a testbed scenario up once (``testbeds.Testbed``), starts an ``xfer
recv`` in its receiver namespace, and per episode starts, in the sender namespace::

    xfer send --mem --duration D --policy stdin:initial=N0 --json-stream ...

and steers it through the ``stdin`` controller's protocol (policy/external.py): the sender
writes an ``observe`` line at the end of every MI and waits for the next target on its stdin.

Observation and action are exactly those of ``policy/ppo.py``'s ``PPOController``: the
features of :mod:`policy.features` over the last ``history`` signal vectors, and the five
actions +5, +1, 0, -1, -5 added to the previous target, clipped to ``[min_streams,
max_streams]``. ``reset()`` returns the observation after the first MI (run with the initial
streams); each ``step()`` answers the waiting sender and returns the next MI's observation.

Reward, from the engine's utility U = T / K^n - T L B of the MI that followed the action:
``"ratio"`` (default) U_t / U*, where U* is the mean utility of the best fixed stream count,
measured once by a short sweep (:meth:`LiveEnv.measure_ustar`, cached in ``out_dir``) or
given; ``"paper"`` the sign of U_t - U_{t-1} with a dead band relative to U* (as in
:class:`train.env.EnvConfig`). An episode is ``episode_mi`` steps (then truncated; the
sender's stdin is closed and it ends by itself at its ``--duration``). :meth:`LiveEnv.close`
(also run on exceptions, Ctrl-C and SIGTERM when used as a context manager) stops every
process and removes the namespaces.

Fine-tuning on it (``xfer train --finetune CKPT --live SCENARIO``) is in :mod:`train.finetune`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import gymnasium as gym
import numpy as np
import numpy.typing as npt

from policy.external import LineReader
from policy.features import FeatureConfig, FeatureTracker
from policy.ppo import ACTIONS
from policy.signals import SignalVector
from policy.utility import utility
from train.evaluate import DEFAULT_SWEEP  # the U* grid is xfer evaluate's

USTAR_FILE = "ustar.json"
"""Cache of the measured U* in the output directory."""


class LiveEnvError(RuntimeError):
    """The live transfer misbehaved (sender died, ended early, went silent)."""


@dataclass(frozen=True)
class LiveConfig:
    """One live environment: the scenario, the episode shape, observation and reward."""

    scenario: str
    """Testbed scenario ``NAME`` or ``NAME@RATE`` (per-stream cap; default: the scenario's
    ``[meta] stream_rate``, as in ``xfer evaluate``)."""
    episode_mi: int = 20
    """Steps (MIs after the first) per episode."""
    mi_s: float = 1.0
    """Monitoring interval of the sender, seconds."""
    min_streams: int = 1
    """Sender's ``--min-streams``."""
    max_streams: int = 64
    """Sender's ``--max-streams`` (also the features' ``max_streams``)."""
    initial_streams: int = 2
    """Streams of the first MI of every episode (the shipped checkpoints use 2)."""
    p_random_start: float = 0.0
    """Fraction of episodes that start at a stream count drawn uniformly from
    ``[min_streams, max_streams]`` instead (as in the simulator's training, so that an
    episode is not all ramp-up and the policy also learns to come down). ``reset(options=
    {"initial_streams": n})`` overrides both for one episode."""
    features: FeatureConfig = field(default_factory=FeatureConfig)
    """Observation (take it from the checkpoint's arch to fine-tune that checkpoint)."""
    reward: str = "ratio"
    """``ratio`` (U / U*) or ``paper`` (sign of the change of U)."""
    reward_x: float = 1.0
    """``paper`` reward: value when U rose by more than epsilon."""
    reward_y: float = -1.0
    """``paper`` reward: value when U fell by more than epsilon."""
    reward_epsilon: float = 0.02
    """``paper`` reward: dead band, as a fraction of U*."""
    u_star: float | None = None
    """Utility of the best fixed N, if known; else measured by the sweep on first use."""
    ustar_sweep: tuple[int, ...] = DEFAULT_SWEEP
    """Fixed stream counts of the U* sweep."""
    ustar_seconds: float = 8.0
    """Seconds per fixed-N run of the sweep."""
    ustar_warmup: int = 2
    """MIs at the start of each sweep run left out of its mean (slow start)."""
    out_dir: str | None = None
    """Where ``ustar.json`` and the process logs go (None: a temporary directory)."""
    answer_timeout_s: float = 30.0
    """The sender keeps its last target if the trainer does not answer within this."""
    port: int = 5781
    """Receiver port inside the testbed."""
    checksum: bool = True
    """Checksum blocks as a real transfer does (costs CPU on this shared machine)."""

    def __post_init__(self) -> None:
        if self.reward not in ("ratio", "paper"):
            raise ValueError(f"live env reward must be 'ratio' or 'paper', got {self.reward!r}")
        if self.episode_mi < 1:
            raise ValueError(f"episode_mi must be >= 1, got {self.episode_mi}")
        if not self.min_streams <= self.initial_streams <= self.max_streams:
            raise ValueError(
                f"initial_streams {self.initial_streams} is outside "
                f"[{self.min_streams}, {self.max_streams}]"
            )
        if not 0.0 <= self.p_random_start <= 1.0:
            raise ValueError(f"p_random_start must be in [0, 1], got {self.p_random_start}")
        if not self.ustar_sweep or min(self.ustar_sweep) < 1:
            raise ValueError(f"ustar_sweep needs stream counts >= 1, got {self.ustar_sweep}")


def _xfer(*args: str) -> list[str]:
    return [sys.executable, "-m", "xfer.cli", *args]


def _signal_of(d: dict[str, Any]) -> SignalVector:
    names = [k for k in SignalVector.__dataclass_fields__ if k != "paths"]
    missing = [k for k in names[:10] if k not in d]
    if missing:
        raise LiveEnvError(f"xfer send: observe line lacks {missing}: {json.dumps(d)[:200]}")
    return SignalVector(**{k: d[k] for k in names if k in d})


def mi_utility(d: dict[str, Any]) -> float:
    """The engine's utility (Eq. 3, default constants) of one observe/interval record."""
    return utility(float(d["throughput_bps"]), int(d["streams"]), d.get("loss_rate"))


def _tail(path: Path, n: int = 600) -> str:
    try:
        return path.read_text(errors="replace")[-n:].strip()
    except OSError:
        return ""


class LiveEnv(gym.Env[npt.NDArray[np.float32], np.int64]):
    """One real transfer in an emulated testbed as a gymnasium environment."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, cfg: LiveConfig, echo: Any = None) -> None:
        self.cfg = cfg
        self.echo = echo or (lambda s: None)
        self.features = cfg.features.with_max_streams(cfg.max_streams)
        d = self.features.obs_dim
        self.observation_space = gym.spaces.Box(-1.0, 1.0, shape=(d,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(len(ACTIONS))
        self.tracker = FeatureTracker(self.features)
        self.u_star = cfg.u_star
        self._tmp = tempfile.mkdtemp(prefix="xfer-live-")
        self.log_dir = Path(cfg.out_dir) if cfg.out_dir else Path(self._tmp)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        name, _, cap = cfg.scenario.partition("@")
        self.scenario_name, self._cap = name, cap or None
        self.tb: Any = None
        self.recv: subprocess.Popen[bytes] | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self._reader: LineReader | None = None
        self._logs: list[IO[bytes]] = []
        self.episodes = 0
        self._reset_episode()

    # -- testbed ----------------------------------------------------------------------------

    def up(self) -> None:
        """Bring the scenario up and start the receiver (idempotent)."""
        if self.tb is not None:
            return
        from testbeds import Testbed, load_scenario
        from testbeds.scenario import parse_rate

        scn = load_scenario(self.scenario_name)
        raw = self._cap or scn.meta.get("stream_rate")
        self.stream_rate = int(parse_rate(raw, f"{scn.name} stream_rate")) if raw else None
        self.cc = scn.sysctls.congestion_control
        self.echo(f"live: bringing up testbed {scn.name} ({self.cfg.scenario})")
        tb = Testbed(scn, name=f"live{os.getpid() % 1_000_000}")
        tb.__enter__()  # SIGTERM now raises, so that close() runs
        self.tb = tb
        self.address = f"{tb.hosts['receiver'].addr}:{self.cfg.port}"
        log = self._log("recv.log")
        self.recv = tb.hosts["receiver"].popen(
            _xfer("recv", "--listen", self.address, "--root", os.path.join(self._tmp, "root"),
                  "--insecure", "--no-fsync"),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
            start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + 20
        while "listening on" not in _tail(self.log_dir / "recv.log", 4000):
            if self.recv.poll() is not None or time.monotonic() > deadline:
                raise LiveEnvError(
                    f"xfer recv did not start in {self.cfg.scenario} (exit {self.recv.poll()}): "
                    f"{_tail(self.log_dir / 'recv.log')}"
                )
            time.sleep(0.05)

    def _log(self, name: str) -> IO[bytes]:
        f = open(self.log_dir / name, "ab")  # noqa: SIM115 - closed in close()
        self._logs.append(f)
        return f

    def _send_argv(self, policy: str, duration: float) -> list[str]:
        c = self.cfg
        # --encryption off: an emulated private link, measured as in training
        argv = _xfer("send", "--mem", "1000G", "--duration", f"{duration:g}", "--policy", policy,
                     "--json-stream", "-q", "--mi", f"{c.mi_s:g}", "--min-streams",
                     str(c.min_streams), "--max-streams", str(c.max_streams),
                     "--meta", f"scenario={self.scenario_name}",
                     "--encryption", "off")  # fmt: skip
        if self.stream_rate:
            argv += ["--stream-rate", str(self.stream_rate)]
        if self.cc:
            argv += ["--cc", self.cc]
        if not c.checksum:
            argv.append("--no-checksum")
        return [*argv, self.address]

    # -- U* ---------------------------------------------------------------------------------

    def measure_ustar(
        self, sweep: tuple[int, ...] | None = None, seconds: float | None = None
    ) -> float:
        """U* = the best mean utility of fixed stream counts (one run each, warm-up left out).
        Reuses ``out_dir/ustar.json`` when it holds the same scenario, sweep and duration."""
        c = self.cfg
        sweep = tuple(sweep or c.ustar_sweep)
        seconds = float(seconds or c.ustar_seconds)
        key = {"scenario": c.scenario, "sweep": list(sweep), "seconds": seconds, "mi_s": c.mi_s}
        cache = self.log_dir / USTAR_FILE
        if cache.exists():
            data = json.loads(cache.read_text())
            if {k: data.get(k) for k in key} == key:
                self.u_star = float(data["u_star"])
                self.echo(f"live: U* = {self.u_star:.1f} (N={data['n_star']}) from {cache}")
                return self.u_star
        self.up()
        per_n: dict[str, float] = {}
        for n in sweep:
            per_n[str(n)] = self._fixed_run(n, seconds)
            self.echo(f"live: U* sweep {c.scenario} N={n:3d}: mean utility {per_n[str(n)]:.1f}")
        n_star = max(per_n, key=lambda k: per_n[k])
        self.u_star = per_n[n_star]
        if not self.u_star > 0:
            raise LiveEnvError(f"U* sweep on {c.scenario}: best utility {self.u_star} is not > 0")
        cache.write_text(json.dumps({**key, "u_star": self.u_star, "n_star": int(n_star),
                                     "per_n": per_n, "warmup_mi": c.ustar_warmup}, indent=2))  # fmt: skip
        self.echo(f"live: U* = {self.u_star:.1f} at N={n_star} -> {cache}")
        return self.u_star

    def _fixed_run(self, n: int, seconds: float) -> float:
        from lab.metrics import mean_throughput

        assert self.tb is not None
        argv = self._send_argv(f"fixed:{n}", seconds)
        out = self.tb.hosts["sender"].run(argv, timeout=seconds + 60, capture_output=True)
        recs = [json.loads(x) for x in out.stdout.splitlines() if x.startswith(b"{")]
        mis = [r for r in recs if r.get("event") == "interval"]
        mis = [r for r in mis if not r.get("drain")] or mis  # a drain MI is not the path's rate
        # the warm-up is left out, but never the whole of a short run (a loaded machine can
        # end a 3-s run after two intervals)
        mis = mis[min(self.cfg.ustar_warmup, max(0, len(mis) - 1)) :]
        if not mis:
            err = out.stderr.decode(errors="replace").strip()[-400:]
            raise LiveEnvError(f"U* sweep: xfer send N={n} gave no intervals: {err}")
        u = [mi_utility(r) for r in mis]
        return float(mean_throughput(u, [r["mi_s"] for r in mis]))

    # -- episodes ---------------------------------------------------------------------------

    def _start_streams(self, options: dict[str, Any] | None) -> int:
        c = self.cfg
        if options and options.get("initial_streams") is not None:
            return max(c.min_streams, min(c.max_streams, int(options["initial_streams"])))
        if c.p_random_start > 0 and self.np_random.random() < c.p_random_start:
            return int(self.np_random.integers(c.min_streams, c.max_streams + 1))
        return c.initial_streams

    def _reset_episode(self, start: int | None = None) -> None:
        start = self.cfg.initial_streams if start is None else start
        self.t = 0
        self.target = self.start = start
        self.u_prev = 0.0
        self.history: list[tuple[float, int, float]] = []
        self.t0 = time.monotonic()

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[npt.NDArray[np.float32], dict[str, Any]]:
        super().reset(seed=seed)
        self._stop_sender(graceful=False)
        if self.u_star is None:
            self.measure_ustar()
        self.up()
        assert self.tb is not None
        start = self._start_streams(options)
        self._reset_episode(start)
        self.tracker.reset()
        c = self.cfg
        duration = (c.episode_mi + 1.7) * c.mi_s  # the last observe comes at MI episode_mi + 1
        policy = f"stdin:initial={start},timeout={c.answer_timeout_s:g}"
        self.proc = self.tb.hosts["sender"].popen(
            self._send_argv(policy, duration),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log("send.log"),
            start_new_session=True,
        )  # fmt: skip
        assert self.proc.stdout is not None
        self._reader = LineReader(self.proc.stdout.fileno())
        rec = self._next_observe()
        self.u_prev = mi_utility(rec)
        self.episodes += 1
        obs = self.tracker.push(_signal_of(rec))
        return obs, {"streams": int(rec["streams"]), "utility": self.u_prev}

    def _next_observe(self) -> dict[str, Any]:
        """Read the sender's stdout up to its next ``observe`` line."""
        assert self.proc is not None and self._reader is not None
        wait = 5 * self.cfg.mi_s + 30.0
        while True:
            line = self._reader.readline(wait)
            if line is None:
                code = self.proc.poll()
                what = "went silent" if code is None else f"exited with code {code}"
                raise LiveEnvError(
                    f"xfer send {what} in episode {self.episodes + 1} at step {self.t}: "
                    f"{_tail(self.log_dir / 'send.log')}"
                )
            if not line:
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                raise LiveEnvError(f"xfer send wrote a non-JSON line: {line[:200]!r}") from None
            if rec.get("event") == "observe":
                return dict(rec)
            if rec.get("event") == "end":
                raise LiveEnvError(
                    f"xfer send ended at step {self.t} of {self.cfg.episode_mi} "
                    f"(exit {rec.get('exit_code')}): {rec.get('error')}"
                )

    def step(
        self, action: np.int64
    ) -> tuple[npt.NDArray[np.float32], float, bool, bool, dict[str, Any]]:
        if self.proc is None:
            raise LiveEnvError("step() before reset() (or after the episode ended)")
        c = self.cfg
        self.target = max(c.min_streams, min(c.max_streams, self.target + ACTIONS[int(action)]))
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(b"%d\n" % self.target)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise LiveEnvError(
                f"xfer send is gone ({exc}): {_tail(self.log_dir / 'send.log')}"
            ) from None
        rec = self._next_observe()
        u = mi_utility(rec)
        reward = self._reward(u)
        self.u_prev = u
        self.t += 1
        self.history.append((u, int(rec["streams"]), float(rec["mi_s"])))
        obs = self.tracker.push(_signal_of(rec))
        truncated = self.t >= c.episode_mi
        info: dict[str, Any] = {"utility": u, "streams": int(rec["streams"]),
                                "target": self.target, "u_star": self.u_star,
                                "throughput_bps": float(rec["throughput_bps"])}  # fmt: skip
        if truncated:
            info["live_episode"] = self.episode_stats()
            self._stop_sender(graceful=True)
        return obs, reward, False, truncated, info

    def _reward(self, u: float) -> float:
        c = self.cfg
        scale = max(abs(self.u_star or 0.0), 1e-6)
        if c.reward == "ratio":
            return float(np.clip(u / scale, -2.0, 1.5))
        du = (u - self.u_prev) / scale
        return (
            c.reward_x if du > c.reward_epsilon else c.reward_y if du < -c.reward_epsilon else 0.0
        )

    def episode_stats(self) -> dict[str, Any]:
        """The episode so far: mean utility and its ratio to U*, mean and final streams."""
        us = [h[0] for h in self.history]
        ns = [h[1] for h in self.history]
        mean_u = float(np.mean(us)) if us else float("nan")
        return {
            "steps": len(us),
            "start_streams": self.start,
            "mean_utility": mean_u,
            "utility_ratio": mean_u / self.u_star if self.u_star else float("nan"),
            "mean_streams": float(np.mean(ns)) if ns else float("nan"),
            "final_streams": ns[-1] if ns else self.target,
            "wall_s": time.monotonic() - self.t0,
            "mi_s_range": (min(h[2] for h in self.history), max(h[2] for h in self.history))
            if self.history
            else None,
        }

    # -- teardown ---------------------------------------------------------------------------

    def _stop_sender(self, graceful: bool) -> None:
        """Graceful: close its stdin and let ``--duration`` end it; else (or if that takes too
        long) SIGTERM, then SIGKILL."""
        proc, self.proc, self._reader = self.proc, None, None
        if proc is None:
            return
        with contextlib.suppress(OSError):
            assert proc.stdin is not None
            proc.stdin.close()
        if graceful:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=3 * self.cfg.mi_s + 15)
        _terminate(proc)
        with contextlib.suppress(OSError):
            assert proc.stdout is not None
            proc.stdout.close()

    def close(self) -> None:
        """Stop the sender and the receiver, take the testbed down (idempotent)."""
        try:
            self._stop_sender(graceful=False)
            if self.recv is not None:
                _terminate(self.recv)
                self.recv = None
        finally:
            tb, self.tb = self.tb, None
            if tb is not None:
                tb.__exit__(None, None, None)
            for f in self._logs:
                f.close()
            self._logs = []
            shutil.rmtree(self._tmp, ignore_errors=True)


def _terminate(proc: subprocess.Popen[bytes], grace_s: float = 5.0) -> None:
    """SIGTERM, then SIGKILL after ``grace_s``; reaps the process."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            proc.wait(timeout=5)
