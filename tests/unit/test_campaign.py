"""Campaign schema, run plan, resumable state, calibration verdicts, provisioning documents."""

from __future__ import annotations

import copy
import dataclasses
import json
import tomllib
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from testbeds.campaign import (
    CampaignError,
    CampaignState,
    campaign_from_dict,
    load_campaign,
    plan_runs,
)
from testbeds.campaign.calibrate import goodput_of, judge, parse_ping
from testbeds.campaign.cli import campaign as campaign_cli
from testbeds.campaign.install import wheel_digest, wheel_requirements
from testbeds.campaign.provision import ProvisionedHost, chameleon, cloudlab, hosts_toml
from testbeds.campaign.runner import CampaignRunner, RunnerOptions
from testbeds.campaign.schema import parse_quantity

CONFIGS = Path(__file__).resolve().parents[2] / "configs" / "campaigns"


def base_doc() -> dict:
    return tomllib.loads((CONFIGS / "local-netns.toml").read_text())


def load(doc: dict):
    return campaign_from_dict(doc, source="t.toml", base=Path("/k"))


@pytest.mark.parametrize("name", ["chameleon-uc-tacc", "cloudlab-wisc-utah", "local-netns"])
def test_example_campaigns_load(name: str) -> None:
    c = load_campaign(CONFIGS / f"{name}.toml")
    runs = plan_runs(c)
    assert len(runs) == len(c.matrix.policies) * c.matrix.repetitions * len(c.selected_links())
    assert len({r.run_id for r in runs}) == len(runs)
    for h in c.hosts:  # relative key paths resolve against the campaign file's directory
        assert h.key is None or Path(h.key).is_absolute()


def test_paper_dataset_is_500_x_1gb() -> None:
    c = load_campaign(CONFIGS / "cloudlab-wisc-utah.toml")
    assert (c.dataset.kind, c.dataset.count, c.dataset.total_bytes) == ("mem", 500, 500 * 10**9)
    assert c.links[0].expected_goodput_bps == 940e6


@pytest.mark.parametrize(
    ("text", "unit", "value"),
    [
        ("1G", "B", 1e9),
        ("940Mbit", "bit", 940e6),
        ("9.4 Gbit/s", "bit", 9.4e9),
        (12, "B", 12.0),
        ("2.5k", "B", 2500.0),
    ],
)
def test_parse_quantity(text, unit: str, value: float) -> None:
    assert parse_quantity(text, unit=unit, where="x") == pytest.approx(value)


@pytest.mark.parametrize("text", ["", "fast", "1Q", "1Gbyte", True])
def test_parse_quantity_rejects(text) -> None:
    with pytest.raises(CampaignError, match="x"):
        parse_quantity(text, unit="bit", where="x")


def _mutate(path: str, value) -> dict:
    doc = base_doc()
    target = doc
    keys = path.split(".")
    for k in keys[:-1]:
        target = target[int(k)] if k.isdigit() else target[k]
    if value is KeyError:
        del target[keys[-1]]
    else:
        target[keys[-1]] = value
    return doc


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("hosts.0.role", "client", r"\[\[hosts\]\]\[0\]\.role: expected one of"),
        ("hosts.0.colour", "red", r"unknown key 'colour'"),
        ("hosts.0.port", "22", r"\.port: expected int"),
        ("hosts.1.name", "rx", r"duplicate host name"),
        ("links.0.sender", "nobody", r"\.sender: no host named 'nobody'"),
        ("links.0.sender", "rx", r"\.sender: host 'rx' has role 'receiver'"),
        ("links.0.expected_rtt_ms", KeyError, r"missing key\(s\): expected_rtt_ms"),
        ("links.0.expected_goodput", "quick", r"expected_goodput: cannot read 'quick'"),
        ("links.0.expected_goodput", 0, r"expected_goodput: must be > 0"),
        ("matrix.policies", [], r"list at least one policy"),
        ("matrix.policies", ["gd", "gd"], r"duplicates"),
        ("matrix.order", "random", r"order: expected one of"),
        ("matrix.links", ["nope"], r"unknown link\(s\) \['nope'\]"),
        ("matrix.repetitions", 0, r"repetitions: must be > 0"),
        ("run.max_streams", 0, r"min_streams <= max_streams"),
        ("dataset.kind", "disk", r"kind: expected one of"),
        ("dataset.kind", "tree", r"needs the path"),
        ("calibration.pings", 0, r"pings: must be > 0"),
        ("name", "no spaces", r"'name' must be"),
        ("extra", 1, r"unknown top-level key"),
    ],
)
def test_schema_errors_say_where(path: str, value, message: str) -> None:
    with pytest.raises(CampaignError, match=message):
        load(_mutate(path, value))


def test_timed_tree_dataset_is_rejected() -> None:
    doc = _mutate("dataset.kind", "tree")
    doc["dataset"]["path"] = "/data"
    with pytest.raises(CampaignError, match=r"duration_s: only memory-to-memory"):
        load(doc)
    del doc["run"]["duration_s"]
    assert load(doc).dataset.path == "/data"


def test_file_errors(tmp_path: Path) -> None:
    with pytest.raises(CampaignError, match="no such campaign file"):
        load_campaign(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("name = [")
    with pytest.raises(CampaignError, match="bad.toml: not valid TOML"):
        load_campaign(bad)


def test_plan_orders() -> None:
    doc = base_doc()
    inter = [(r.policy, r.rep) for r in plan_runs(load(doc))]
    assert inter == [("fixed:2", 0), ("fixed:6", 0), ("fixed:2", 1), ("fixed:6", 1)]
    doc["matrix"]["order"] = "grouped"
    grouped = [(r.policy, r.rep) for r in plan_runs(load(doc))]
    assert grouped == [("fixed:2", 0), ("fixed:2", 1), ("fixed:6", 0), ("fixed:6", 1)]
    run = plan_runs(load(doc))[0]
    assert run.run_id == "emu__fixed-2__r000"
    assert run.meta(load(doc)) == {
        "campaign": "local-netns",
        "testbed": "netns",
        "link": "emu",
        "scenario": "netns:emu",
        "policy": "fixed:2",
        "rep": "0",
        "run_id": "emu__fixed-2__r000",
    }


def test_fingerprint_tracks_what_shapes_the_data() -> None:
    doc = base_doc()
    fp = {r.run_id: r.fingerprint for r in plan_runs(load(doc))}
    doc2 = copy.deepcopy(doc)
    doc2["run"]["duration_s"] = 5
    assert all(r.fingerprint != fp[r.run_id] for r in plan_runs(load(doc2)))
    doc3 = copy.deepcopy(doc)
    doc3["calibration"]["pings"] = 9  # calibration does not shape run data
    doc3["hosts"][0]["workdir"] = "/elsewhere"
    assert all(r.fingerprint == fp[r.run_id] for r in plan_runs(load(doc3)))


def test_state_resumes_only_finished_runs(tmp_path: Path) -> None:
    c = load(base_doc())
    runs = plan_runs(c)
    state = CampaignState(tmp_path, c.name)
    assert state.pending(runs) == runs
    state.mark(runs[0], "done", end={"bytes": 1})
    state.log_path(runs[0]).parent.mkdir(parents=True)
    state.log_path(runs[0]).write_bytes(b"x")
    state.mark(runs[1], "failed", errors="boom")
    state.log_path(runs[2]).write_bytes(b"x")  # a log without a done record is not done
    again = CampaignState(tmp_path, c.name)
    assert again.pending(runs) == runs[1:]
    assert again.runs[runs[1].run_id]["attempts"] == 1
    state.log_path(runs[0]).unlink()  # a lost log is redone
    assert CampaignState(tmp_path, c.name).pending(runs) == runs
    assert not (tmp_path / "state.json.tmp").exists()


def test_state_redoes_runs_whose_settings_changed(tmp_path: Path) -> None:
    doc = base_doc()
    c = load(doc)
    state = CampaignState(tmp_path, c.name)
    for r in plan_runs(c):
        state.mark(r, "done")
        state.log_path(r).parent.mkdir(parents=True, exist_ok=True)
        state.log_path(r).write_bytes(b"x")
    assert state.pending(plan_runs(c)) == []
    doc["run"]["max_streams"] = 4
    assert len(CampaignState(tmp_path, c.name).pending(plan_runs(load(doc)))) == 4


def test_state_refuses_another_campaign(tmp_path: Path) -> None:
    CampaignState(tmp_path, "a").save()
    with pytest.raises(ValueError, match="belongs to campaign 'a'"):
        CampaignState(tmp_path, "b")
    (tmp_path / "state.json").write_text("{")
    with pytest.raises(ValueError, match="corrupt state file"):
        CampaignState(tmp_path, "a")


PING = """PING 10.1.2.1 (10.1.2.1) 56(84) bytes of data.
64 bytes from 10.1.2.1: icmp_seq=1 ttl=63 time=10.4 ms
64 bytes from 10.1.2.1: icmp_seq=2 ttl=63 time=10.2 ms
64 bytes from 10.1.2.1: icmp_seq=3 ttl=63 time=31.0 ms

--- 10.1.2.1 ping statistics ---
3 packets transmitted, 3 received, 0% packet loss, time 402ms
rtt min/avg/max/mdev = 10.2/17.2/31.0/9.8 ms
"""


def test_parse_ping_and_judge() -> None:
    rtts = parse_ping(PING)
    assert rtts == [10.4, 10.2, 31.0]
    c = load(base_doc())
    link, spec = c.links[0], dataclasses.replace(c.calibration, goodput_tolerance=0.2)
    ok = judge(link, spec, rtts, 95e6)
    assert ok.ok and ok.rtt_ms == 10.4 and ok.problems == ()  # median: outliers do not count
    slow = judge(link, spec, rtts, 40e6)
    assert not slow.ok and "goodput 40.0 Mbit/s is outside" in slow.problems[0]
    fast = judge(link, spec, rtts, 400e6)  # a faster path than expected is the wrong path
    assert not fast.ok
    far = judge(link, spec, [50.0] * 3, 95e6)
    assert not far.ok and "RTT 50.00 ms is not 10 ms" in far.problems[0]
    dead = judge(link, spec, [], None)
    assert len(dead.problems) == 2 and json.dumps(dead.to_dict())


def test_goodput_of() -> None:
    assert goodput_of({"bytes": 125_000_000, "seconds": 10.0, "exit_code": 0}) == 1e8
    assert goodput_of({"throughput_bps": 5e8}) == 5e8
    assert goodput_of({"bytes": 1, "seconds": 1, "exit_code": 3, "error": "refused"}) is None


def test_send_args(tmp_path: Path) -> None:
    c = load(base_doc())
    runner = CampaignRunner(c, RunnerOptions(out_dir=tmp_path))
    run = plan_runs(c)[1]
    args = runner._send_args(run.policy, run.meta(c), "/w/logs/x.parquet")
    joined = " ".join(args)
    assert joined.startswith("--mem 10000000000 --duration 2 --policy fixed:6 --min-streams 1")
    assert "--max-streams 8 --mi 0.4 --transport tcp --cc cubic --log /w/logs/x.parquet" in joined
    assert "--meta policy=fixed:6" in joined and "--meta run_id=emu__fixed-6__r000" in joined


def test_wheel_requirements(tmp_path: Path) -> None:
    wheel = tmp_path / "xfer-0.1.0-py3-none-any.whl"
    meta = (
        "Metadata-Version: 2.1\nName: xfer\nRequires-Dist: click>=8.1\n"
        'Requires-Dist: numpy >=1.26\nRequires-Dist: asyncssh>=2.14; extra == "campaign"\n'
        "Requires-Dist: rich[jupyter]>=13\n"
    )
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("xfer-0.1.0.dist-info/METADATA", meta)
    assert wheel_requirements(wheel) == ["click >=8.1", "numpy >=1.26", "rich >=13"]


def test_cloudlab_request_document() -> None:
    root = ET.fromstring(cloudlab.request_xml())
    ns = {"r": "http://www.geni.net/resources/rspec/3"}
    assert root.tag == "{http://www.geni.net/resources/rspec/3}rspec"
    assert root.get("type") == "request"
    nodes = root.findall("r:node", ns)
    assert [n.get("client_id") for n in nodes] == ["wisc", "utah"]
    assert [n.get("component_manager_id") for n in nodes] == [
        "urn:publicid:IDN+wisc.cloudlab.us+authority+cm",
        "urn:publicid:IDN+utah.cloudlab.us+authority+cm",
    ]
    for n in nodes:
        assert n.get("exclusive") == "true"
        assert n.find("r:sliver_type", ns).get("name") == "raw"
        assert "UBUNTU24" in n.find("r:sliver_type/r:disk_image", ns).get("name")
        assert "python3-venv" in n.find("r:services/r:execute", ns).get("command")
    assert [n.find("r:hardware_type", ns).get("name") for n in nodes] == ["c220g2", "xl170"]
    with pytest.raises(ValueError, match="unknown CloudLab site"):
        cloudlab.request_xml((cloudlab.CloudLabNode("a", "mars", "sender", "x"),))


def test_cli_cloudlab_rspec_and_plan(tmp_path: Path) -> None:
    out = tmp_path / "req.xml"
    res = CliRunner().invoke(campaign_cli, ["cloudlab-rspec", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert len(ET.parse(out).getroot()) == 2
    res = CliRunner().invoke(
        campaign_cli, ["plan", str(CONFIGS / "local-netns.toml"), "--out", str(tmp_path)]
    )
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[0].split("\t") == [
        "emu__fixed-2__r000",
        "tx->rx",
        "fixed:2",
        "pending",
    ]
    res = CliRunner().invoke(campaign_cli, ["run", str(tmp_path / "none.toml")])
    assert res.exit_code != 0 and "no such campaign file" in res.output


def test_provisioned_hosts_make_a_valid_campaign() -> None:
    hosts = [
        ProvisionedHost("uc", "192.5.87.1", "cc", "receiver", site="CHI@UC"),
        ProvisionedHost("tacc", "129.114.1.2", "cc", "sender", site="CHI@TACC"),
    ]
    text = hosts_toml(
        hosts,
        key="~/.ssh/cc",
        testbed="chameleon",
        expected_rtt_ms=32,
        expected_goodput="9.4Gbit",
        link_name="tacc-uc",
    )
    doc = tomllib.loads('name = "p"\n[matrix]\npolicies = ["gd"]\n' + text)
    c = load(doc)
    assert [h.user for h in c.hosts] == ["cc", "cc"]
    assert c.links[0].sender == "tacc" and c.links[0].expected_goodput_bps == 9.4e9
    with pytest.raises(ValueError, match="one sender and one receiver"):
        hosts_toml(hosts[:1], key="k", testbed="t", expected_rtt_ms=1, expected_goodput="1G")


def test_chameleon_plan_is_the_papers_two_sites() -> None:
    rows = chameleon.plan(chameleon.ChameleonPlan(project="CHI-1", key_name="me", hours=2))
    assert [(r["site"], r["role"]) for r in rows] == [
        ("CHI@UC", "receiver"),
        ("CHI@TACC", "sender"),
    ]
    assert rows[0]["lease"] == "xfer-campaign-uc" and rows[0]["duration"] == "2:00:00"


def test_wheel_digest_ignores_zip_timestamps(tmp_path: Path) -> None:
    def make(name: str, when: tuple, body: bytes) -> Path:
        path = tmp_path / name
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr(zipfile.ZipInfo("xfer/a.py", when), body)
        return path

    a = make("a.whl", (2020, 1, 1, 0, 0, 0), b"x = 1")
    b = make("b.whl", (2026, 5, 5, 5, 5, 5), b"x = 1")
    c = make("c.whl", (2020, 1, 1, 0, 0, 0), b"x = 2")
    assert a.read_bytes() != b.read_bytes()
    assert wheel_digest(a) == wheel_digest(b) != wheel_digest(c)


MANIFEST = """<rspec xmlns="http://www.geni.net/resources/rspec/3" type="manifest">
  <node client_id="{cid}" exclusive="true" component_manager_id="urn:publicid:IDN+{site}+authority+cm"
        component_id="urn:publicid:IDN+{site}+node+{node}" sliver_id="urn:publicid:IDN+{site}+sliver+1">
    <sliver_type name="raw"/>
    <hardware_type name="x"/>
    <services>
      <login authentication="ssh-keys" hostname="{node}.{site}" port="22" username="alice"/>
    </services>
    <host name="{cid}.xfercampaign.proj.{site}" ipv4="128.110.1.{ip}"/>
  </node>
</rspec>"""


def test_cloudlab_manifests_give_campaign_hosts(tmp_path: Path) -> None:
    wisc = MANIFEST.format(cid="wisc", site="wisc.cloudlab.us", node="c220g2-011101", ip=1)
    utah = MANIFEST.format(cid="utah", site="utah.cloudlab.us", node="hp012", ip=2)
    hosts = cloudlab.hosts_from_manifests([wisc, utah])
    assert [(h.name, h.host, h.user, h.role) for h in hosts] == [
        ("wisc", "wisc.xfercampaign.proj.wisc.cloudlab.us", "alice", "receiver"),
        ("utah", "utah.xfercampaign.proj.utah.cloudlab.us", "alice", "sender"),
    ]
    with pytest.raises(ValueError, match=r"no node\(s\) \['utah'\]"):
        cloudlab.hosts_from_manifests([wisc])
    files = []
    for name, text in (("w.xml", wisc), ("u.xml", utah)):
        (tmp_path / name).write_text(text)
        files.append(str(tmp_path / name))
    res = CliRunner().invoke(campaign_cli, ["cloudlab-hosts", *files, "--key", "~/.ssh/cl"])
    assert res.exit_code == 0, res.output
    c = load(tomllib.loads('name = "cl"\n[matrix]\npolicies = ["bo"]\n' + res.output))
    assert c.links[0].sender == "utah" and c.links[0].receiver == "wisc"
