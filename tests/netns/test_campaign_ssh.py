"""The campaign runner over real SSH.

Two namespaces of the emulated testbed (sender, receiver; 100 Mbit/s, 10 ms between them)
stand in for two remote machines. Each runs its own OpenSSH server (throwaway host key and
client key, private config) on a management veth from the root namespace, the way testbed
nodes have a management address and a data address. ``xfer campaign run`` then installs a
freshly built wheel into a venv on each "host", calibrates, runs two policies x two
repetitions, is interrupted with SIGTERM, resumes without redoing finished runs, and
reports. A campaign whose expectations do not match the link must stop at calibration.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from testbeds.campaign.install import project_dir

pytestmark = pytest.mark.timeout(240)

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"
SCENARIO = """description = "campaign test: 100 Mbit/s, 10 ms"
[sysctl]
congestion_control = "cubic"
[[path]]
rate = "100mbit"
rtt_ms = 10
queue = "0.5bdp"
"""
MGMT = {"sender": ("10.251.1.1", "10.251.1.2"), "receiver": ("10.251.2.1", "10.251.2.2")}
SSH_PORT = 2222


def _sh(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


def _wait_port(addr: str, port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection((addr, port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"sshd on {addr}:{port} did not come up")


def _sshd_config(d: Path, name: str, listen: str) -> Path:
    cfg = d / f"sshd-{name}.conf"
    cfg.write_text(
        f"Port {SSH_PORT}\nListenAddress {listen}\nHostKey {d / 'host_key'}\n"
        f"AuthorizedKeysFile {d / 'authorized_keys'}\nPermitRootLogin prohibit-password\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
        f"StrictModes no\nPidFile {d / f'sshd-{name}.pid'}\nSubsystem sftp internal-sftp\n"
        "MaxSessions 50\nMaxStartups 50\n"
    )
    return cfg


@pytest.fixture(scope="module")
def hosts(tmp_path_factory):
    """The testbed plus one sshd per end host; yields (testbed, directory with keys)."""
    if not os.path.exists(SSHD):
        pytest.skip("openssh-server is not installed (scripts/setup.sh)")
    from testbeds import Testbed, load_scenario

    d = tmp_path_factory.mktemp("campaign-ssh")
    (d / "campaign-test.toml").write_text(SCENARIO)
    _sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "id_ed25519"))
    _sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "host_key"))
    shutil.copy(d / "id_ed25519.pub", d / "authorized_keys")
    hostkey = (d / "host_key.pub").read_text().split()[:2]
    (d / "known_hosts").write_text(
        "".join(f"[{ns_ip}]:{SSH_PORT} {' '.join(hostkey)}\n" for _, ns_ip in MGMT.values())
    )
    made_run_sshd = not os.path.isdir("/run/sshd")
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation dir
    tag = f"xcm{os.getpid() % 100000}"
    veths, daemons = [], []
    with Testbed(load_scenario(d / "campaign-test.toml")) as tb:
        try:
            for k, (role, (root_ip, ns_ip)) in enumerate(MGMT.items()):
                a, b = f"{tag}{k}a", f"{tag}{k}b"
                _sh("ip", "link", "add", a, "type", "veth", "peer", "name", b)
                veths.append(a)
                _sh("ip", "link", "set", b, "netns", tb.hosts[role].ns)
                _sh("ip", "addr", "add", f"{root_ip}/30", "dev", a)
                _sh("ip", "link", "set", a, "up")
                tb.hosts[role].run(["ip", "addr", "add", f"{ns_ip}/30", "dev", b], check=True)
                tb.hosts[role].run(["ip", "link", "set", b, "up"], check=True)
                cfg = _sshd_config(d, role, ns_ip)
                tb.hosts[role].run([SSHD, "-t", "-f", str(cfg)], check=True)
                log = d / f"sshd-{role}.log"
                daemons.append(tb.hosts[role].popen([SSHD, "-D", "-E", str(log), "-f", str(cfg)]))
                _wait_port(ns_ip, SSH_PORT)
            yield tb, d
        finally:
            for p in daemons:
                p.terminate()
                p.wait(timeout=10)
            for a in veths:
                subprocess.run(["ip", "link", "del", a], capture_output=True)
            if made_run_sshd:
                shutil.rmtree("/run/sshd", ignore_errors=True)


def write_campaign(tb, d: Path, name: str, expected_goodput_bps: float | None = None) -> Path:
    """configs/campaigns/local-netns.toml, pointed at this testbed and this directory."""
    text = (project_dir() / "configs" / "campaigns" / "local-netns.toml").read_text()
    path = tb.scenario.paths[0]
    goodput = expected_goodput_bps or path.goodput_bps
    for role, short in (("receiver", "rx"), ("sender", "tx")):
        text = text.replace(
            f'workdir = "/tmp/xfer-campaign-{short}"',
            f'workdir = "{d / ("remote-" + short)}"\npython = "{sys.executable}"',
        )
        text = text.replace(
            f'data_addr = "10.1.{1 if short == "tx" else 2}.1"',
            f'data_addr = "{tb.hosts[role].addr}"',
        )
    text = text.replace('expected_goodput = "95.6Mbit"', f'expected_goodput = "{goodput:.0f}"')
    text = text.replace("expected_rtt_ms = 10", f"expected_rtt_ms = {path.rtt_ms:g}")
    f = d / f"{name}.toml"
    f.write_text(text)
    return f


def campaign(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "xfer.cli", "campaign", "run", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


def finish(proc: subprocess.Popen, timeout: float) -> str:
    """Wait for a campaign process; kill it (and fail) if it overruns."""
    try:
        err = proc.communicate(timeout=timeout)[1]
        print(err)  # the campaign's timed progress lines (shown with -s or on failure)
        return err
    except subprocess.TimeoutExpired:
        proc.kill()
        err = proc.communicate()[1]
        pytest.fail(f"campaign did not finish within {timeout} s; stderr:\n{err}")


def stray_xfer(tb) -> list[str]:
    """xfer processes still alive in the two 'remote hosts'."""
    left = []
    for role in ("sender", "receiver"):
        for pid in _sh("ip", "netns", "pids", tb.hosts[role].ns).split():
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if "xfer" in cmd and "sshd" not in cmd:
                left.append(f"{role}: {cmd}")
    return left


def test_calibration_failure_collects_nothing(hosts) -> None:
    tb, d = hosts
    f = write_campaign(tb, d, "wrong-link", expected_goodput_bps=900e6)
    out = d / "out-wrong"
    proc = campaign(str(f), "--out", str(out))
    err = finish(proc, 150)
    assert proc.returncode == 3, err
    assert "calibration failed, no data collected" in err and "goodput" in err
    cal = json.loads((out / "calibration.json").read_text())
    assert not cal[0]["ok"] and 1e6 < cal[0]["goodput_bps"] < 100e6
    assert 9 < cal[0]["rtt_ms"] < 30  # the emulated 10 ms, not a bare veth (0.05 ms)
    assert not list((out / "logs").glob("*.parquet")) if (out / "logs").exists() else True
    assert stray_xfer(tb) == []


def _state(out: Path) -> dict:
    try:
        return json.loads((out / "state.json").read_text())
    except (OSError, json.JSONDecodeError):
        return {}


def _start_and_stop(
    cmd: list[str], out: Path, after_done: int, sig: int
) -> tuple[subprocess.Popen, str]:
    """Start a campaign, wait until ``after_done`` runs are done and the next is in flight,
    then send ``sig``."""
    proc = campaign(*cmd)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        done = [k for k, r in _state(out).get("runs", {}).items() if r["status"] == "done"]
        if len(done) >= after_done:
            break
        time.sleep(0.2)
    assert proc.poll() is None, finish(proc, 5)
    time.sleep(1.5)  # the next run is in flight now
    proc.send_signal(sig)
    return proc, finish(proc, 60)


def test_campaign_runs_is_interrupted_and_resumes(hosts) -> None:
    tb, d = hosts
    f = write_campaign(tb, d, "local-netns")
    out = d / "out"
    wheels = sorted((d / "out-wrong" / "wheel").glob("xfer-*.whl"))  # built by the test above
    cmd = [str(f), "--out", str(out)] + (["--wheel", str(wheels[-1])] if wheels else [])

    # Ctrl-C / SIGTERM: the controller stops the run in flight on both hosts and exits 130.
    proc, err = _start_and_stop(cmd, out, 1, signal.SIGTERM)
    assert proc.returncode == 130, err
    first = {k: r for k, r in _state(out)["runs"].items() if r["status"] == "done"}
    assert 1 <= len(first) < 4, err
    assert stray_xfer(tb) == []  # the interrupted run's sender and receiver were stopped
    mtimes = {k: (out / r["log"]).stat().st_mtime_ns for k, r in first.items()}

    # SIGKILL: no cleanup at all; the next start must stop what the dead controller left.
    proc, err = _start_and_stop(cmd, out, len(first) + 1, signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL, err
    print("left behind by the killed controller:", stray_xfer(tb))
    second = {k for k, r in _state(out)["runs"].items() if r["status"] == "done"}
    assert set(first) < second

    proc = campaign(*cmd)
    err = finish(proc, 170)
    assert proc.returncode == 0, err
    assert f"{len(second)} already done" in err and "install: rx unchanged, tx unchanged" in err
    runs = _state(out)["runs"]
    assert sorted(runs) == [
        "emu__fixed-2__r000",
        "emu__fixed-2__r001",
        "emu__fixed-6__r000",
        "emu__fixed-6__r001",
    ]
    for run_id, rec in runs.items():
        assert rec["status"] == "done"
        log = out / rec["log"]
        if run_id in first:  # not redone
            assert rec["attempts"] == 1 and log.stat().st_mtime_ns == mtimes[run_id]
        table = pq.read_table(log)
        meta = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
        assert meta["run_id"] == run_id and meta["campaign"] == "local-netns"
        assert meta["policy"] == rec["policy"] and meta["testbed"] == "netns"
        assert table.num_rows >= 4  # 2 s at MI 0.4 s
        assert 1e6 < rec["end"]["throughput_bps"] < 100e6  # it crossed the 100 Mbit/s bottleneck
        assert rec["end"]["streams_max"] == int(rec["policy"].split(":")[1])
    report = out / "report"
    assert report.is_dir() and any(report.iterdir())
    assert stray_xfer(tb) == []


def test_a_start_cancelled_midway_leaves_no_process(hosts) -> None:
    """A controller cancelled (SIGTERM, Ctrl-C) while ``RemoteHost.start`` is still reading the
    new process's PID holds no handle to it; ``start`` itself must stop what it launched.
    The cancel lands at a sweep of delays, 0-117 ms, across the launch (a start and exit of
    ``true`` takes about 0.12 s here), and no ``sleep`` of the sweep may outlive it."""
    import asyncio

    from testbeds.campaign.remote import RemoteHost
    from testbeds.campaign.schema import HostSpec

    tb, d = hosts
    ns_ip = MGMT["sender"][1]
    spec = HostSpec(
        name="tx", host=ns_ip, role="sender", port=SSH_PORT, user="root",
        key=str(d / "id_ed25519"), known_hosts=str(d / "known_hosts"),
        workdir=str(d / "remote-cancel"),
    )  # fmt: skip
    tag = f"{os.getpid() % 1000:03d}"

    def alive() -> list[str]:
        pat = f"sleep 6[0-9]\\.{tag}"
        out = subprocess.run(["pgrep", "-af", pat], capture_output=True, text=True).stdout
        return out.splitlines()

    async def sweep() -> int:
        host = await RemoteHost.connect(spec)
        launched = 0
        try:
            t0 = time.perf_counter()
            await (await host.start("true")).wait(10)
            print(f"one start and exit: {time.perf_counter() - t0:.3f} s")
            for k in range(40):
                task = asyncio.create_task(host.start(f"sleep 6{k % 10}.{tag}{k:03d}"))
                await asyncio.sleep(k * 0.003)
                task.cancel()
                try:
                    proc = await task
                except asyncio.CancelledError:
                    continue
                launched += 1  # start() won the race: the caller holds the handle
                await proc.kill(grace_s=2.0)
        finally:
            await host.close()
        return launched

    launched = asyncio.run(sweep())
    deadline = time.monotonic() + 5
    while alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    print("handles returned:", launched)
    assert alive() == [], f"left running (of 40 launches, {launched} returned a handle)"
