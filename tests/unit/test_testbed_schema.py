"""Scenario schema of the emulated testbed: shipped files, good and bad TOML, address plan."""

from __future__ import annotations

import threading
import tomllib
from pathlib import Path

import pytest

from testbeds.scenario import (
    ScenarioError,
    list_scenarios,
    load_scenario,
    parse_rate,
    parse_scenario,
    parse_size,
)
from testbeds.schedule import ScheduleRunner, iperf_client_args
from testbeds.topology import SEND, plan_hosts, tbf_args

REQUIRED = {
    "paper-fig1",
    "wan-1g-50ms",
    "lossy-1g-50ms",
    "shared-1g-40ms",
    "bg-1g-30ms",
    "mptcp-2path",
    "handoff-2path",
}

MINIMAL = '[[path]]\nrate = "1gbit"\nrtt_ms = 50\n'


def parse(text: str):  # type: ignore[no-untyped-def]
    return parse_scenario(tomllib.loads(text), "test.toml", "test")


def test_required_scenarios_are_shipped_and_valid() -> None:
    names = set(list_scenarios())
    assert names >= REQUIRED
    assert any(n.startswith("fast-") for n in names), "a 10G-class scenario scaled to this machine"
    for name in names:
        scn = load_scenario(name)
        assert scn.name == name
        assert scn.sysctls.congestion_control in ("cubic", "reno", "bbr")
        for p in scn.paths:
            assert scn.sysctls.tcp_rmem_max >= p.bdp_bytes + p.queue_bytes


def test_shipped_values_match_the_issue() -> None:
    mp = load_scenario("mptcp-2path")
    assert mp.mptcp and [(p.rate_bps, p.rtt_ms) for p in mp.paths] == [(500e6, 20), (200e6, 80)]
    assert load_scenario("lossy-1g-50ms").paths[0].loss == pytest.approx(0.001)
    assert load_scenario("shared-1g-40ms").pairs == 3
    fig1 = load_scenario("paper-fig1").paths[0]
    assert (fig1.rate_bps, fig1.rtt_ms) == (1e9, 40)
    ho = load_scenario("handoff-2path")
    downs = [(e.at_s, e.action, e.path) for e in ho.schedule]
    assert downs == [
        (20, "path_down", 2),
        (40, "path_up", 2),
        (60, "path_down", 2),
        (80, "path_up", 2),
    ]
    bg = load_scenario("bg-1g-30ms").background
    assert any(f.on_s and f.off_s for f in bg) and all(f.cc for f in bg)


def test_minimal_defaults() -> None:
    scn = parse(MINIMAL)
    (p,) = scn.paths
    assert (p.delay_fwd_ms, p.delay_rev_ms, p.loss) == (50, 0, 0)
    assert p.queue_bytes == int(0.5 * 1e9 * 0.05 / 8)  # default queue: half a BDP
    assert scn.sysctls.congestion_control == "cubic"  # never the system default (bbr)
    assert scn.sysctls.no_metrics_save and not scn.mptcp and scn.hosts == ["sender", "receiver"]
    assert p.goodput_bps == pytest.approx(1e9 * 1448 / 1514)


def test_a_head_start_for_established_flows() -> None:
    # Round 46: the schedule may run before the transfer (a link already shared); default 0.
    assert parse(MINIMAL).head_start_s == 0.0
    assert parse("head_start_s = 2.5\n" + MINIMAL + "[[background]]\n").head_start_s == 2.5


def test_per_direction_delay_queue_and_loss_forms() -> None:
    scn = parse(
        '[[path]]\nrate = "100mbit"\ndelay_fwd_ms = 10\ndelay_rev_ms = 5\nqueue = "256KiB"\nloss = "0.5%"\n'
    )
    p = scn.paths[0]
    assert (p.rtt_ms, p.queue_bytes, p.loss) == (15, 256 * 1024, pytest.approx(0.005))


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1gbit", 1e9), ("500Mbit/s", 5e8), ("2.5G", 2.5e9), (1000, 1000.0), ("10kbit", 1e4)],
)
def test_parse_rate(text: object, expected: float) -> None:
    assert parse_rate(text, "x") == expected


@pytest.mark.parametrize("bad", ["fast", "-1gbit", "1 gigabit", True, 0])
def test_parse_rate_rejects(bad: object) -> None:
    with pytest.raises(ScenarioError, match="x"):
        parse_rate(bad, "x")


def test_parse_size() -> None:
    assert parse_size("4MB", "x") == 4_000_000
    assert parse_size("256KiB", "x") == 262144
    assert parse_size(1500, "x") == 1500
    with pytest.raises(ScenarioError):
        parse_size("lots", "x")


BAD = [
    ("", "path"),
    ('[[path]]\nrate = "1gbit"\n', "rtt_ms"),
    (MINIMAL + "delay_fwd_ms = 3\n", "not both"),
    (MINIMAL + "rtt = 5\n", "unknown field.*rtt"),
    (MINIMAL + "loss = 0.7\n", "loss"),
    (MINIMAL + 'loss = "lots"\n', "loss"),
    (MINIMAL + "queue = 100\n", "three full-size packets"),
    ('[[path]]\nrate = "1gbit"\nrtt_ms = true\n', "rtt_ms"),
    ('[[path]]\nrate = "fast"\nrtt_ms = 5\n', "rate"),
    (MINIMAL + '[sysctl]\ncongestion_control = "vegas"\n', "vegas"),
    (MINIMAL + '[sysctl]\nextra = { "kernel.panic" = 1 }\n', "net"),
    (MINIMAL + "[[background]]\npath = 2\n", "not a path"),
    (MINIMAL + '[[background]]\ncc = "vegas"\n', "vegas"),
    (MINIMAL + "[[background]]\non_s = 5\n", "on_s and off_s"),
    (MINIMAL + "[[background]]\nstart_s = 5\nstop_s = 2\n", "after start_s"),
    (MINIMAL + '[[background]]\nname = "a"\n[[background]]\nname = "a"\n', "unique"),
    (MINIMAL + '[[schedule]]\nat_s = 1\naction = "explode"\n', "explode"),
    (MINIMAL + '[[schedule]]\nat_s = 1\naction = "set_rate"\npath = 1\n', "rate"),
    (MINIMAL + '[[schedule]]\nat_s = 1\naction = "path_down"\npath = 3\n', "not a path"),
    (MINIMAL + '[[schedule]]\nat_s = 1\naction = "start_background"\nflow = "nope"\n', "nope"),
    (MINIMAL + "pairs = 0\n", "pairs"),
    ("head_start_s = 2\n" + MINIMAL, r"head_start_s needs \[\[background\]\] or \[\[schedule\]\]"),
    ("head_start_s = 11\n" + MINIMAL + "[[background]]\n", "head_start_s.*outside"),
    ('name = "has space"\n' + MINIMAL, "name"),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_bad_scenarios_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ScenarioError, match=message) as info:
        parse(text)
    assert "test.toml" in str(info.value)


def test_missing_file_and_bad_toml(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="wan-1g-50ms"):  # lists the known names
        load_scenario("no-such-scenario")
    broken = tmp_path / "broken.toml"
    broken.write_text("[[path]\n")
    with pytest.raises(ScenarioError, match="not valid TOML"):
        load_scenario(broken)
    good = tmp_path / "mine.toml"
    good.write_text(MINIMAL)
    assert load_scenario(str(good)).name == "mine"


def test_address_plan_multipath_and_shared() -> None:
    mp = {h.name: h for h in plan_hosts(load_scenario("mptcp-2path"))}
    assert mp["sender"].addrs == ["10.1.1.1", "10.2.1.1"]
    assert mp["receiver"].addrs == ["10.1.2.1", "10.2.2.1"]
    shared = {h.name: h for h in plan_hosts(load_scenario("shared-1g-40ms"))}
    assert shared["sender3"].addr(1) == "10.1.1.3" and shared["receiver2"].addr(1) == "10.1.2.2"
    bg = {h.name: h for h in plan_hosts(load_scenario("bg-1g-30ms"))}
    assert bg["bgsend2"].side == SEND and bg["bgrecv2"].addrs == ["10.1.2.102"]


def test_tbf_arguments() -> None:
    p = parse(MINIMAL).paths[0]
    args = tbf_args("dn1", p)
    assert args[args.index("rate") + 1] == "1000000000bit"
    assert int(args[args.index("limit") + 1]) == p.queue_bytes
    assert tbf_args("dn1", p, 5e8)[args.index("rate") + 1] == "500000000bit"
    # a cut keeps the bucket it had (round 46: queued TSO packets larger than a new, smaller
    # bucket never leave, and the path stalls); the queue limit grows with it if it must
    cut = tbf_args("dn1", p, 1e8, min_burst=100_000)
    assert cut[cut.index("burst") + 1] == "100000" and cut[cut.index("rate") + 1] == "100000000bit"
    assert int(cut[cut.index("limit") + 1]) == max(p.queue_bytes, 100_000)


def test_schedule_runner_applies_events_in_order() -> None:
    text = (
        MINIMAL
        + '[[path]]\nrate = "1gbit"\nrtt_ms = 10\n'
        + '[[background]]\nname = "bg"\ncc = "bbr"\nstart_s = 0.02\nstop_s = 0.1\n'
        + '[[schedule]]\nat_s = 0.05\naction = "set_rate"\npath = 1\nrate = "500mbit"\n'
        + '[[schedule]]\nat_s = 0.01\naction = "path_down"\npath = 2\n'
    )
    scn = parse(text)
    applied: list[tuple[str, object]] = []
    spawned: list[list[str]] = []
    done = threading.Event()

    class FakeProc:
        def poll(self) -> int:
            done.set()
            return 0

    def spawn(host: str, argv: list[str]) -> FakeProc:
        spawned.append([host, *argv])
        return FakeProc()

    runner = ScheduleRunner(
        scn, lambda a, arg: applied.append((a, arg)), spawn, lambda k: "10.1.2.101"
    )  # type: ignore[arg-type]
    runner.start()
    assert done.wait(10), "the background flow was never stopped"
    runner.stop()
    assert applied == [("path_down", 2), ("set_rate", (1, 5e8))]
    assert spawned[0][:3] == ["bgsend1", "iperf3", "-c"] and "bbr" in spawned[0]
    assert [what.split()[0] for _, what in runner.log] == [
        "path_down",
        "start_background",
        "set_rate",
        "stop_background",
    ]


def test_iperf_client_args_on_off() -> None:
    flow = load_scenario("bg-1g-30ms").background[1]
    args = iperf_client_args(flow, "10.1.2.102", flow.on_s)
    assert args[args.index("-t") + 1] == "10" and args[args.index("-C") + 1] == "bbr"


def test_delay_line_build_and_missing_header(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil
    import subprocess

    from testbeds import delayline

    monkeypatch.setattr(delayline, "_build_dirs", lambda: [tmp_path / "build"])
    monkeypatch.setattr(delayline, "HEADER", tmp_path / "nope.h")
    with pytest.raises(delayline.DelayLineError, match="libnetfilter-queue-dev"):
        delayline.binary()
    monkeypatch.undo()
    if shutil.which("gcc") is None or not delayline.HEADER.exists():
        pytest.skip("gcc or libnetfilter-queue-dev not installed")
    monkeypatch.setattr(delayline, "_build_dirs", lambda: [tmp_path / "build"])
    exe = delayline.binary()
    assert exe.parent == tmp_path / "build" and exe.name.startswith("delayline-")
    assert delayline.binary() == exe  # cached by source hash
    usage = subprocess.run([str(exe)], capture_output=True, text=True)
    assert usage.returncode == 2 and "QUEUE:DELAY_US" in usage.stderr
    bad = subprocess.run([str(exe), "1:abc"], capture_output=True, text=True)
    assert bad.returncode == 2 and "bad delay" in bad.stderr
