"""Generated scenario suites (testbeds.suite): reproducible, inside the declared ranges,
loadable by the testbed, with validation and test kept apart."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from testbeds import load_scenario
from testbeds.scenario import ScenarioError
from testbeds.suite import (
    SuiteRanges,
    SuiteSpec,
    draw,
    generate,
    load_suite,
    manifest_toml,
    suite_scenarios,
    write,
)


@pytest.mark.parametrize("suite", ["gen-v1", "gen-v2"])
def test_shipped_suite_regenerates_byte_for_byte(suite: str) -> None:
    spec, root = load_suite(suite)
    files = generate(spec)
    assert len(files["validation"]) + len(files["test"]) >= 30
    for set_name, by_name in files.items():
        on_disk = {p.name for p in (root / set_name).glob(f"{spec.name}-*.toml")}
        assert on_disk == set(by_name), f"{set_name}: stale or missing generated files"
        for fname, text in by_name.items():
            assert (root / set_name / fname).read_text() == text, f"{set_name}/{fname} differs"
    assert load_suite(root / "suite.toml")[0] == spec
    assert manifest_toml(spec) == (root / "suite.toml").read_text()


@pytest.mark.parametrize(
    "suite",
    [
        "gen-v3",
        "gen-v4",
        "gen-v5",
        "gen-v6",
        "gen-v7",
        "gen-v8",
        "gen-v9",
        "gen-v10",
        "gen-v11",
        "gen-v12",
        "gen-v13",
        "gen-v14",
        "gen-v15",
        "gen-v16",
        "gen-v17",
        "gen-v18",
        "gen-v19",
        "gen-v20",
    ],
)
def test_later_draws_regenerate_byte_for_byte(suite: str) -> None:
    """Suites whose manifest carries a comment saying why they were drawn: the scenario files
    are still exactly the generator's (a set the manifest does not draw has no files)."""
    spec, root = load_suite(suite)
    for set_name, by_name in generate(spec).items():
        on_disk = {p.name: p.read_text() for p in (root / set_name).glob(f"{spec.name}-*.toml")}
        assert on_disk == by_name, f"{suite}/{set_name}: stale, missing or edited files"
        assert len(by_name) == getattr(spec, set_name)


def test_draws_stay_in_the_declared_ranges() -> None:
    r = SuiteRanges()
    spec = SuiteSpec("t", 7, 40, 40, (), r)
    drawn = [d for ds in draw(spec).values() for d in ds]
    for d in drawn:
        assert r.rtt_ms[0] <= d.rtt_ms <= r.rtt_ms[1]
        assert r.rate_bps[0] - 1e6 <= d.rate_bps <= r.rate_bps[1]
        assert d.rate_bps * d.rtt_ms / 1000 / 8 <= r.max_bdp_bytes * 1.01
        assert d.loss == 0 or r.loss[0] * 0.99 <= d.loss <= r.loss[1] * 1.01
        assert r.queue_bdp[0] <= d.queue_bdp <= r.queue_bdp[1]
        if d.competitor != "none":
            assert d.rate_bps <= r.rate_max_with_competitor_bps
    kinds = {d.competitor for d in drawn} | {
        d.competitor_cc for d in drawn if d.competitor != "none"
    }
    assert {"none", "long", "onoff", "cubic", "reno", "bbr"} <= kinds
    assert any(d.stream_cap_bps for d in drawn) and any(d.change_at_s for d in drawn)
    for ds in draw(spec).values():  # stratified: each set reaches both ends of the RTT range
        assert min(d.rtt_ms for d in ds) < 0.2 and max(d.rtt_ms for d in ds) > 100


def test_every_generated_file_is_a_valid_scenario(tmp_path: Path) -> None:
    spec = SuiteSpec("t", 3, 12, 12, ())
    for p in write(spec, tmp_path):
        scn = load_scenario(p)
        assert scn.name == p.stem and len(scn.paths) == 1
        drawn = float(scn.meta["drawn_rtt_ms"])
        assert scn.paths[0].rtt_ms == (0 if drawn < spec.ranges.native_rtt_below_ms else drawn)


def test_seed_changes_the_draw_and_sets_differ() -> None:
    a, b = SuiteSpec("s", 1, 8, 8, ()), SuiteSpec("s", 2, 8, 8, ())
    ga, gb = generate(a), generate(b)
    assert ga == generate(a) and ga != gb
    assert set(ga["validation"].values()).isdisjoint(ga["test"].values())


def test_write_keeps_hand_written_files_and_drops_stale_ones(tmp_path: Path) -> None:
    write(SuiteSpec("s", 1, 5, 2, ()), tmp_path)
    hand = tmp_path / "validation" / "hand-x.toml"
    hand.write_text("# mine\n")
    write(SuiteSpec("s", 1, 3, 2, ()), tmp_path)
    names = sorted(p.name for p in (tmp_path / "validation").glob("*.toml"))
    assert names == ["hand-x.toml", "s-v01.toml", "s-v02.toml", "s-v03.toml"]


def test_sets_of_the_shipped_suite() -> None:
    val = suite_scenarios("gen-v1", "validation")
    test = suite_scenarios("gen-v1", "test")
    assert set(val).isdisjoint(test)
    hand = {Path(p).stem for p in val if Path(p).stem.startswith("hand-")}
    assert hand == {"hand-lossy-long", "hand-onoff-180ms", "hand-bbr-shared-1g", "hand-lan-capped",
                    "hand-lan-reno"}  # fmt: skip
    assert suite_scenarios("gen-v1", "named") == list(load_suite("gen-v1")[0].named)
    v2 = suite_scenarios("gen-v2", "test")
    assert len(v2) == 20 and not {Path(p).name for p in v2} & {Path(p).name for p in test}
    with pytest.raises(ScenarioError, match="unknown set"):
        suite_scenarios("gen-v1", "train")
    assert len(suite_scenarios("gen-v5", "test")) == 8
    with pytest.raises(ScenarioError, match="has no validation set"):
        suite_scenarios("gen-v5", "validation")
    assert len(suite_scenarios("gen-v6", "validation")) == 6
    with pytest.raises(ScenarioError, match="has no test set"):
        suite_scenarios("gen-v6", "test")
    with pytest.raises(ScenarioError, match="no suite"):
        load_suite("no-such-suite")


def test_manifest_round_trip_and_unknown_range(tmp_path: Path) -> None:
    spec = SuiteSpec("m", 5, 2, 3, ("paper-fig1",),
                     dataclasses.replace(SuiteRanges(), rtt_ms=(1.0, 100.0), cap_share=0.5))  # fmt: skip
    p = tmp_path / "suite.toml"
    p.write_text(manifest_toml(spec))
    assert load_suite(p)[0] == spec
    p.write_text(manifest_toml(spec) + "\n[ranges.extra]\nx = 1\n")
    with pytest.raises(ScenarioError, match="unknown field"):
        load_suite(p)
