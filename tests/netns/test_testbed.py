"""The emulated WAN for real: bring scenarios up, calibrate them, move data, leave nothing behind.

Root and network namespaces (marker ``netns``). About 2-3 minutes on 2 cores, most of it in
the three calibrations.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import testbeds
from testbeds import Testbed, load_scenario
from testbeds.calibrate import calibrate, report
from testbeds.netns import list_namespaces, ns_name, state_file

pytestmark = pytest.mark.netns


def root_snapshot() -> dict[str, str]:
    """What a testbed could leave in the host's own namespace: links with its interface names,
    its nft tables, NFQUEUE rules, qdiscs on such links. (Only its own: other tests may run.)"""

    def out(cmd: list[str]) -> str:
        return subprocess.run(cmd, capture_output=True, text=True).stdout

    mine = re.compile(r"^(up|dn)[0-9]+(h[0-9]+)?$|^p[0-9]+$")
    links = [
        ln.split(":")[1].strip().split("@")[0] for ln in out(["ip", "-o", "link"]).splitlines()
    ]
    return {
        "links": " ".join(sorted(x for x in links if mine.match(x))),
        "nft": " ".join(ln for ln in out(["nft", "list", "tables"]).splitlines() if "xtb" in ln),
        "iptables": " ".join(ln for ln in out(["iptables-save"]).splitlines() if "NFQUEUE" in ln),
    }


def assert_gone(tb: Testbed, pids: list[int], before: dict[str, str]) -> None:
    assert list_namespaces(ns_name(tb.name, "")) == [], "namespaces left behind"
    assert not state_file(tb.name).exists(), "state file left behind"
    for pid in pids:
        alive = (
            os.path.exists(f"/proc/{pid}")
            and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]
        )
        assert not alive, f"process {pid} left behind"
    assert root_snapshot() == before, "the host namespace changed"


@pytest.fixture
def snapshot() -> Iterator[dict[str, str]]:
    yield root_snapshot()


def _processes(tb: Testbed) -> list[int]:
    pids = [int(p) for p in tb.pids.values()]
    for host in tb.hosts.values():
        out = subprocess.run(
            ["ip", "netns", "pids", host.ns], capture_output=True, text=True
        ).stdout
        pids += [int(p) for p in out.split()]
    return pids


def xfer_transfer(tb: Testbed, tmp: Path, *extra: str) -> dict:
    """`xfer recv` in the receiver, `xfer send --mem` from the sender; the end object."""
    snd, rcv = tb.hosts["sender"], tb.hosts["receiver"]
    root = tmp / "root"
    root.mkdir()
    server = rcv.popen(
        ["xfer", "recv", "--listen", f"{rcv.addr}:5000", "--root", root, "--insecure", "--once"],
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert server.stderr is not None
        assert "listening" in server.stderr.readline()
        out = snd.run(
            ["xfer", "send", "--mem", "64M", f"{rcv.addr}:5000", "--json", "-q", *extra],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr[-2000:]
        end: dict = json.loads(out.stdout.strip().splitlines()[-1])
        server.wait(timeout=30)
        return end
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def iperf_transfer(tb: Testbed, *extra: str) -> dict:
    """One iperf3 transfer sender -> receiver; its JSON."""
    snd, rcv = tb.hosts["sender"], tb.hosts["receiver"]
    server = rcv.popen(["iperf3", "-s", "-1", "-p", "5333"], stdout=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        out = snd.run(
            ["iperf3", "-c", rcv.addr, "-p", "5333", "-n", "50M", "-J", *extra],
            capture_output=True,
            text=True,
            timeout=60,
        )
        data: dict = json.loads(out.stdout)
        return data
    finally:
        server.kill()
        server.wait()


REQUIRED = ["wan-1g-50ms", "lossy-1g-50ms", "mptcp-2path"]
SEND_ARGS = {
    "wan-1g-50ms": ("--streams", "8", "--cc", "cubic"),
    "lossy-1g-50ms": ("--streams", "8", "--cc", "bbr"),
    "mptcp-2path": ("--streams", "2", "--transport", "mptcp"),
}


@pytest.mark.parametrize("scenario", REQUIRED)
def test_scenario_calibrates_and_carries_iperf3(scenario: str, snapshot: dict[str, str]) -> None:
    with Testbed(load_scenario(scenario)) as tb:
        assert state_file(tb.name).exists()
        checks = calibrate(tb)
        table = report(checks)
        print(table)
        assert all(c.ok for c in checks), f"{scenario} is off:\n{table}"
        data = iperf_transfer(tb)
        assert data["end"]["sum_sent"]["bytes"] >= 50_000_000
        assert data["end"]["sum_received"]["bytes"] > 0
        pids = _processes(tb)
        assert pids, "expected the delay line at least"
    assert_gone(tb, pids, snapshot)


@pytest.mark.parametrize("scenario", REQUIRED)
def test_xfer_send_through_scenario(
    scenario: str, snapshot: dict[str, str], tmp_path: Path
) -> None:
    """A real `xfer recv` / `xfer send` (64 MB, verified) through the emulated WAN."""
    with Testbed(load_scenario(scenario)) as tb:
        end = xfer_transfer(tb, tmp_path, *SEND_ARGS[scenario])
        assert end["exit_code"] == 0 and end["verified"] and end["bytes"] == 64_000_000, end
        pids = _processes(tb)
    assert_gone(tb, pids, snapshot)


def test_mptcp_uses_both_paths(tmp_path: Path) -> None:
    with Testbed(load_scenario("mptcp-2path")) as tb:
        xfer_transfer(tb, tmp_path, "--streams", "1", "--transport", "mptcp")
        # Both router sides of path 2 saw the subflow's traffic.
        out = (
            tb.hosts["router"]
            .run(["ip", "-s", "-j", "link", "show", "dn2"], capture_output=True, text=True)
            .stdout
        )
        assert json.loads(out)[0]["stats64"]["tx"]["bytes"] > 5_000_000


def test_exception_inside_the_block_still_tears_down(snapshot: dict[str, str]) -> None:
    with pytest.raises(RuntimeError, match="boom"), Testbed(load_scenario("wan-1g-50ms")) as tb:
        pids = _processes(tb)
        raise RuntimeError("boom")
    assert_gone(tb, pids, snapshot)


def test_down_cleans_up_after_a_crashed_process(snapshot: dict[str, str]) -> None:
    code = (
        "import os, testbeds\n"
        "tb = testbeds.Testbed(testbeds.load_scenario('lossy-1g-50ms'), name='crashtest')\n"
        "tb.up()\n"
        "print(tb.pids['delayline'], flush=True)\n"
        "os._exit(9)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    delay_pid = int(out.stdout.strip())
    assert list_namespaces(ns_name("crashtest", "")), "the crashed run should have left namespaces"
    removed = testbeds.down("crashtest")
    assert len(removed) == 3
    tb = Testbed(load_scenario("lossy-1g-50ms"), name="crashtest")
    assert_gone(tb, [delay_pid], snapshot)


def test_cli_up_exec_down(snapshot: dict[str, str]) -> None:
    xfer = [shutil.which("xfer") or "xfer", "testbed"]
    up = subprocess.run(
        [*xfer, "up", "wan-1g-50ms", "--name", "clitest"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    try:
        assert up.returncode == 0, up.stderr
        assert "10.1.2.1" in up.stdout
        ping = subprocess.run(
            [*xfer, "exec", "--name", "clitest", "sender", "--", "ping", "-c", "3", "-i", "0.05", "receiver"],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        assert ping.returncode == 0, ping.stderr
        assert "3 received" in ping.stdout
    finally:
        down = subprocess.run(
            [*xfer, "down", "clitest"], capture_output=True, text=True, timeout=60
        )
    assert down.returncode == 0 and "removed 3" in down.stdout
    assert_gone(Testbed(load_scenario("wan-1g-50ms"), name="clitest"), [], snapshot)


def test_schedule_changes_rate_blackholes_a_path_and_runs_background(tmp_path: Path) -> None:
    scn_file = tmp_path / "sched.toml"
    scn_file.write_text(
        '[[path]]\nrate = "200mbit"\nrtt_ms = 10\n'
        '[[path]]\nrate = "100mbit"\nrtt_ms = 20\n'
        '[[background]]\nname = "bg"\ncc = "cubic"\npath = 1\nstart_s = 0\non_s = 30\noff_s = 1\n'
        '[[schedule]]\nat_s = 0.2\naction = "set_rate"\npath = 1\nrate = "50mbit"\n'
        '[[schedule]]\nat_s = 0.2\naction = "path_down"\npath = 2\n'
    )
    with Testbed(load_scenario(scn_file)) as tb:
        snd, rcv = tb.hosts["sender"], tb.hosts["receiver"]
        tb.start_schedule()
        deadline = time.monotonic() + 10
        while len(tb.schedule_log) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [w.split()[0] for _, w in tb.schedule_log] == [
            "start_background",
            "set_rate",
            "path_down",
        ]
        qdisc = (
            tb.hosts["router"]
            .run(["tc", "qdisc", "show", "dev", "dn1"], capture_output=True, text=True)
            .stdout
        )
        assert "50Mbit" in qdisc
        ping = ["ping", "-c", "3", "-i", "0.05", "-W", "1", "-I", snd.addrs[1], rcv.addrs[1]]
        assert snd.run(ping, capture_output=True).returncode != 0, "path 2 should be down"
        tb.path_up(2)
        assert snd.run(ping, capture_output=True).returncode == 0, "path 2 should be back"
        clients = tb.hosts["bgsend1"].run(
            ["ss", "-Htn", "state", "established"], capture_output=True, text=True
        )
        assert "10.1.2.101:5201" in clients.stdout, "the background flow is not running"


def test_sockdiag_reads_bytes_received() -> None:
    """The netlink reader calibration uses agrees with what a socket really received."""
    from testbeds.sockdiag import bytes_received

    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port)) as client:
            conn, _ = server.accept()
            with conn:
                client.sendall(b"x" * 1_000_000)
                got = 0
                while got < 1_000_000:
                    got += len(conn.recv(1 << 16))
                counts = bytes_received(port)
                assert counts == {f"127.0.0.1:{client.getsockname()[1]}": 1_000_000}


def test_sigterm_inside_the_block_tears_down(snapshot: dict[str, str]) -> None:
    code = (
        "import time, testbeds\n"
        "with testbeds.Testbed(testbeds.load_scenario('wan-1g-50ms'), name='termtest') as tb:\n"
        "    print(tb.pids['delayline'], flush=True)\n"
        "    time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    delay_pid = int(proc.stdout.readline())
    proc.terminate()
    assert proc.wait(timeout=90) == 143
    assert_gone(Testbed(load_scenario("wan-1g-50ms"), name="termtest"), [delay_pid], snapshot)


def test_a_rate_cut_under_load_keeps_the_path_moving(tmp_path: Path) -> None:
    """Round 46: a cut from 400 to 100 Mbit/s while two TCP streams fill the path. tbf splits
    a GSO packet larger than its bucket when it is queued; the sender's TSO packets (>= 46 KB
    with min_tso_segs 32) queued under the 100-KB bucket used to sit at the head of a 32-KB
    one for good, and the path carried nothing. The bucket now never shrinks."""
    scn_file = tmp_path / "cut.toml"
    scn_file.write_text('[[path]]\nrate = "400mbit"\nrtt_ms = 2\nqueue = "1bdp"\n')
    with Testbed(load_scenario(scn_file)) as tb:
        snd, rcv = tb.hosts["sender"], tb.hosts["receiver"]
        server = rcv.popen(["iperf3", "-s", "-1", "-p", "5334"], stdout=subprocess.DEVNULL)
        try:
            time.sleep(0.5)
            client = snd.popen(
                ["iperf3", "-c", rcv.addr, "-p", "5334", "-t", "4", "-P", "2", "-J"],
                stdout=subprocess.PIPE,
                text=True,
            )
            time.sleep(1.5)
            tb.set_rate(1, 100e6)
            out, _ = client.communicate(timeout=30)
        finally:
            server.kill()
            server.wait()
    last = json.loads(out)["intervals"][-1]["sum"]["bits_per_second"]
    assert 50e6 < last < 110e6, last  # moving, at the new rate
