"""The command line as users and scripts see it: the JSON contract, exit codes, lazy imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from xfer.dataset import trees_equal

END_KEYS = {
    "event",
    "bytes",
    "files",
    "seconds",
    "throughput_bps",
    "streams_max",
    "bytes_resent",
    "verified",
    "exit_code",
    "error",
}
INTERVAL_KEYS = {
    "event",
    "t",
    "streams",
    "throughput_bps",
    "loss_rate",
    "rtt_ms",
    "rtt_gradient",
    "rtt_ratio",
    "utility",
    "reward",
    "action",
    "cpu_percent",
}


def xfer(*args: str, **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "xfer.cli", *args], capture_output=True, text=True, timeout=120, **kw
    )


@pytest.fixture
def recv(tmp_path) -> Iterator[tuple[str, str]]:
    root = str(tmp_path / "dst")
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "xfer.cli",
            "recv",
            "--listen",
            "127.0.0.1:0",
            "--root",
            root,
            "--no-fsync",
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    assert p.stderr is not None
    line = p.stderr.readline()
    assert "listening on" in line, line
    yield line.split("listening on ")[1].split(",")[0], root
    p.terminate()
    assert p.wait(10) == 0  # SIGTERM is a clean shutdown


def test_help_does_not_import_heavy_modules() -> None:
    code = (
        "import sys; from click.testing import CliRunner; from xfer.cli import cli; "
        "r = CliRunner().invoke(cli, ['--help']); assert r.exit_code == 0, r.output; "
        "heavy = {'torch', 'pyarrow', 'matplotlib', 'skopt', 'numpy'} & set(sys.modules); "
        "print(sorted(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_fixed_stream_send_loads_neither_the_policy_stack_nor_the_receiver(recv) -> None:
    """A real send over loopback with ``--streams N``: numpy (once pulled in by the utility's
    type annotation), torch and the receiver's modules cost 0.2-0.3 s of start-up per
    ``xfer send`` (measured 2026-12-02 against the 2026-11-22 engine) and it needs none."""
    addr, _ = recv
    code = (
        "import sys; from click.testing import CliRunner; from xfer.cli import cli; "
        f"r = CliRunner().invoke(cli, ['send', '--mem', '1000000', '{addr}', '--streams', '2', "
        "'-q']); assert r.exit_code == 0, r.output; "
        "heavy = {'torch', 'pyarrow', 'numpy', 'xfer.rx.receiver', 'xfer.rx.store'} & "
        "set(sys.modules); print(sorted(heavy))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"


def test_send_json_stream_contract(tmp_path, recv) -> None:
    address, _ = recv
    r = xfer(
        "send",
        "--mem",
        "300M",
        address,
        "--policy",
        "schedule:1,3,2",
        "--mi",
        "0.1",
        "--stream-rate",
        "400Mbit",
        "--json-stream",
    )
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    intervals, end = lines[:-1], lines[-1]
    assert end["event"] == "end" and set(end) >= END_KEYS and end["verified"] is True
    assert len(intervals) >= 3 and all(set(i) >= INTERVAL_KEYS for i in intervals)
    assert [i["streams"] for i in intervals[:3]] == [1, 3, 2]
    assert any(i["throughput_bps"] > 0 for i in intervals)
    with open("/proc/sys/net/ipv4/tcp_congestion_control") as f:  # no --cc: the default, named
        assert {i["cc"] for i in intervals} == {f.read().strip()}


def test_send_tree_json_and_log(tmp_path, recv) -> None:
    from .conftest import make_tree

    address, root = recv
    src = make_tree(str(tmp_path / "tree"))
    log = tmp_path / "run.parquet"
    r = xfer(
        "send",
        src,
        address,
        "--streams",
        "3",
        "--json",
        "--log",
        str(log),
        "--meta",
        "scenario=loopback",
    )
    assert r.returncode == 0, r.stderr
    end = json.loads(r.stdout)
    assert end["verified"] and end["files"] == 156 and trees_equal(src, os.path.join(root, "tree"))
    assert log.exists()


def test_tree_intervals_carry_the_catalog_total(tmp_path, recv) -> None:
    from .conftest import make_tree

    address, _ = recv
    src = make_tree(str(tmp_path / "tree"))
    r = xfer(
        "send", src, address, "--mi", "0.1", "--stream-rate", "20Mbit", "--cc", "reno",
        "--json-stream",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    intervals, end = lines[:-1], lines[-1]
    assert intervals and all(i["bytes_total"] == end["bytes"] > 0 for i in intervals)
    assert {i["cc"] for i in intervals} == {"reno"}  # what the policy's own_cc input reads


def test_exit_codes(tmp_path) -> None:
    r = xfer("send", str(tmp_path), "127.0.0.1:1", "--json")  # nobody listens there
    assert r.returncode == 3 and "connection" in json.loads(r.stdout)["error"]
    r = xfer("send", str(tmp_path / "missing"), "127.0.0.1:1")
    assert r.returncode == 2 and "no such file" in r.stderr
    r = xfer("send", "--mem", "1M", "127.0.0.1:1", "--policy", "nonsense")
    assert r.returncode == 2 and "unknown policy" in r.stderr
    r = xfer("recv", "--listen", "0.0.0.0:0", "--root", str(tmp_path))
    assert r.returncode == 2 and "without a token" in r.stderr


def test_fast_start_shortens_only_the_first_mis_on_a_short_path(recv) -> None:
    """`fast`: on loopback (RTT of microseconds) the first 8 MIs last mi/4, then mi; with a
    bound below loopback's RTT every MI is the configured one. Real sockets, real TCP_INFO."""
    address, _ = recv

    def lengths(policy: str) -> list[float]:
        r = xfer(
            "send", "--mem", "100G", "--duration", "1.2", address, "--mi", "0.4",
            "--policy", policy, "--stream-rate", "200Mbit", "--json-stream",
        )  # fmt: skip
        assert r.returncode == 0, r.stderr
        return [
            i["mi_s"] for i in map(json.loads, r.stdout.splitlines()) if i["event"] == "interval"
        ]

    short = lengths("fast:fixed:2")
    assert short[:8] == pytest.approx([0.1] * 8, abs=0.03)  # 8 MIs of 0.4 / 4
    assert short[8:] and short[8] == pytest.approx(0.4, abs=0.05)
    plain = lengths("fast:max_rtt_ms=0.0001:fixed:2")  # 0.1 us: no path is that short
    assert plain[:3] == pytest.approx([0.4] * 3, abs=0.05)


def steered(
    address: str, policy: str, script: Iterator[int], *extra: str
) -> tuple[list[tuple[float, int]], list[dict]]:
    """`xfer send --policy POLICY` on loopback (3 s, 0.4-s MIs, 100 Mbit/s per stream), its
    `stdin` controller answered from `script` (then 1): the (length, streams) of each MI and
    the `observe` records the stdin controller was shown."""
    p = subprocess.Popen(
        [sys.executable, "-m", "xfer.cli", "send", "--mem", "100G", "--duration", "3", address,
         "--mi", "0.4", "--json-stream", "--policy", policy, "--stream-rate", "100Mbit", *extra],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert p.stdin is not None and p.stdout is not None and p.stderr is not None
    mis, shown = [], []
    for line in p.stdout:
        event = json.loads(line)
        if event["event"] == "observe":  # the stdin controller asks; the script answers
            shown.append(event)
            p.stdin.write(f"{next(script, 1)}\n")
            p.stdin.flush()
        elif event["event"] == "interval":
            mis.append(event)
    p.stdin.close()
    err = p.stderr.read()
    assert p.wait(30) == 0, err
    return [(round(i["mi_s"], 2), i["streams"]) for i in mis], shown


def test_fast_grow_2_takes_no_retreat_on_a_short_mi(recv) -> None:
    """`fast:grow=2` on loopback, steered over stdin (2, 7, 12, then one stream fewer per MI):
    the ramp runs on short MIs; the retreats asked on short MIs are not taken (the count
    stays 12 until an MI of the configured length has been measured), later ones are."""
    script = iter((7, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2))
    got, _ = steered(recv[0], "fast:grow=2:stdin:timeout=5,initial=2", script)
    short = [k for k, (mi, _) in enumerate(got) if mi < 0.25]
    assert short == list(range(len(short))) and 2 <= len(short) <= 5, got  # a prefix
    counts = [n for _, n in got]
    assert max(counts) == 12 and counts.index(12) < len(short), got
    # from the first 12 to the end of the MI after the last short one, the count holds
    assert set(counts[counts.index(12) : len(short) + 1]) == {12}, got
    assert counts[-1] < 12, got  # retreats asked on 0.4-s MIs are taken


def test_fast_ramp_owns_the_short_mis_and_the_policy_sees_none(recv) -> None:
    """`fast:ramp=5` on loopback: +5 streams per short MI while the utility rises (here up to
    `--max-streams 12`), then the inner controller (`stdin`, steered 10, 9, 8, ...) decides
    from the ramp's count; it is shown only MIs of the configured length."""
    policy = "fast:ramp=5:stdin:timeout=5,initial=2"
    got, shown = steered(recv[0], policy, iter(range(10, 0, -1)), "--max-streams", "12")
    short = [n for mi, n in got if mi < 0.25]
    assert short[:3] == [2, 7, 12] and set(short[2:]) == {12}, got  # the ramp, capped
    assert shown and all(e["mi_s"] > 0.3 for e in shown), [e["mi_s"] for e in shown]
    assert shown[0]["streams"] == 12, got  # the inner controller starts from the ramp's count
    assert got[-1][1] < 12, got  # and its answers are taken


def test_fast_ramp_settle_runs_each_new_count_twice_before_judging_it(recv) -> None:
    """`fast:ramp=5,settle=1` on loopback: each count the ramp moves to runs a second short MI
    before it is judged (2, 7, 7, 12, 12 here, capped at 12), and the inner controller is
    shown only MIs of the configured length."""
    policy = "fast:ramp=5,settle=1:stdin:timeout=5,initial=2"
    got, shown = steered(recv[0], policy, iter(range(10, 0, -1)), "--max-streams", "12")
    short = [n for mi, n in got if mi < 0.25]
    assert short[:5] == [2, 7, 7, 12, 12], got
    assert shown and all(e["mi_s"] > 0.3 for e in shown), [e["mi_s"] for e in shown]
    assert shown[0]["streams"] == 12, got
