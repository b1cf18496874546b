"""The live environment and ``xfer train --finetune --live`` on the emulated testbed (root).

``LiveEnv`` on wan-1g-50ms: reset and a few steps give observations of the checkpoint's
shape, finite rewards, and stream counts that follow the actions. The CLI fine-tunes the
shipped policy for one short episode and writes a policy.pt that the ``ppo`` controller
loads and runs deterministically; an interrupted run (SIGINT) also cleans up. Nothing may be
left behind: no namespaces, no sender or receiver processes. Budget: about 60 s.
"""

from __future__ import annotations

import csv
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import psutil
import pytest

from policy.ppo import ACTIONS, DEFAULT_CHECKPOINT

pytestmark = [pytest.mark.netns, pytest.mark.timeout(240)]

CLI = [sys.executable, "-m", "xfer.cli"]
SCENARIO = "wan-1g-50ms"
SINGLE = DEFAULT_CHECKPOINT.parent / "candidates" / "hold-s2.pt"
"""One network (the default is an ensemble bundle since round 13, and fine-tuning starts from
one network): the default's first member."""


def _live_namespaces() -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if "live" in line]


def _live_processes() -> list[str]:
    left = []
    for p in psutil.process_iter(["cmdline"]):
        cmd = " ".join(p.info["cmdline"] or [])
        if "xfer.cli" in cmd and ("xfer-live-" in cmd or "stdin:initial=" in cmd):
            left.append(f"{p.pid}: {cmd}")
    return left


def _assert_nothing_left() -> None:
    assert _live_namespaces() == []
    assert _live_processes() == []


@pytest.fixture(autouse=True)
def _clean_before() -> None:
    if _live_namespaces():
        pytest.skip(f"live testbed namespaces already exist: {_live_namespaces()}")


def test_live_env_reset_and_steps(tmp_path: Path) -> None:
    from train.live import LiveConfig, LiveEnv

    cfg = LiveConfig(SCENARIO, episode_mi=3, u_star=900.0, out_dir=str(tmp_path))
    with LiveEnv(cfg) as env:
        obs, info = env.reset()
        assert obs.shape == env.observation_space.shape == (cfg.features.obs_dim,)
        assert info["streams"] == cfg.initial_streams
        assert obs[-14] == 1.0 and obs[:14].sum() == 0  # one valid row, padding before it
        target = cfg.initial_streams
        for t, a in enumerate([0, 3, 1]):  # +5, -1, +1
            obs, r, terminated, truncated, info = env.step(np.int64(a))
            target += ACTIONS[a]
            assert obs.shape == (cfg.features.obs_dim,) and np.all(np.abs(obs) <= 1.0)
            assert math.isfinite(r) and not terminated
            assert info["target"] == target and info["streams"] == target
            assert truncated == (t == 2)
        ep = info["live_episode"]
        assert ep["steps"] == 3 and ep["final_streams"] == target
        assert ep["utility_ratio"] == pytest.approx(ep["mean_utility"] / 900.0)
        assert ep["mean_utility"] > 0
        assert env.proc is None  # the sender was stopped at the end of the episode
    _assert_nothing_left()


def test_finetune_cli_writes_a_loadable_policy(tmp_path: Path) -> None:
    from policy.base import ControllerConfig, make_controller
    from policy.signals import SignalVector

    out = tmp_path / "ft"
    args = ["train", "--finetune", str(SINGLE), "--live", SCENARIO, "--episodes",
            "1", "--episode-mi", "4", "--ustar-sweep", "4", "--ustar-seconds", "3",
            "--out", str(out)]  # fmt: skip
    proc = subprocess.run(CLI + args, capture_output=True, text=True, timeout=200)
    assert proc.returncode == 0, proc.stderr
    assert "U* = " in proc.stderr and "episode   1 train" in proc.stderr
    rows = list(csv.DictReader((out / "episodes.csv").open()))
    assert [(r["episode"], r["kind"], r["steps"]) for r in rows] == [("1", "train", "4")]
    assert math.isfinite(float(rows[0]["utility_ratio"]))
    assert (out / "ustar.json").exists()
    _assert_nothing_left()
    # the fine-tuned checkpoint runs in the engine's controller, deterministically
    spec = f"ppo:{out / 'policy.pt'}"
    a, b = (make_controller(spec, ControllerConfig()) for _ in range(2))
    rng = np.random.default_rng(0)
    for t in range(12):
        n = a.target  # type: ignore[attr-defined]
        s = SignalVector(t + 1.0, 1.0, n, float(rng.uniform(1e8, 9e8)), 0.0, 0.0, 50.0, 50.0,
                         0.0, 1.0)  # fmt: skip
        assert a.decide(s) == b.decide(s)
    assert a.meta["finetune"]["episodes_done"] == 1  # type: ignore[attr-defined]


def test_finetune_interrupted_cleans_up(tmp_path: Path) -> None:
    out = tmp_path / "ft"
    args = ["train", "--finetune", str(SINGLE), "--live", SCENARIO, "--episodes",
            "5", "--episode-mi", "10", "--ustar", "900", "--out", str(out)]  # fmt: skip
    # Ctrl-C's disposition is inherited: under a runner that ignores SIGINT (a background job
    # of a non-interactive shell) Python leaves it ignored and the run would go on, as it
    # should under nohup. The test is about a user's Ctrl-C, so the child gets the default.
    proc = subprocess.Popen(
        CLI + args,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stderr is not None
    for line in proc.stderr:  # wait until the first episode runs
        if line.startswith("finetune: ") and "episodes x" in line:
            break
    time.sleep(3)
    assert _live_processes(), "no sender running mid-episode"
    os.kill(proc.pid, signal.SIGINT)
    err = proc.stderr.read()
    assert proc.wait(60) == 1, err
    assert "interrupted" in err
    _assert_nothing_left()
