"""train.verdict: the shipping rule, on made-up results and on every stored testbed result."""

from __future__ import annotations

import contextlib
import io
import json
import runpy
import sys
from pathlib import Path, PurePath
from typing import Any

import pytest

from train.verdict import VerdictRule, aa_floor, aa_noise, as_base, load, main, verdict

ROOT = Path(__file__).resolve().parents[2]
RULE15 = ROOT / "docs/results/issue16-round15/rule15.py"


def _scn(cand: list[float], base: list[float], ustar: float = 100.0) -> dict[str, Any]:
    mean = lambda r: sum(r) / len(r)  # noqa: E731
    return {
        "best_fixed": {"mean_utility": ustar},
        "controllers": {
            "cand": {"utility_ratio": mean(cand), "run_ratios": cand},
            "ppo": {"utility_ratio": mean(base), "run_ratios": base},
        },
    }


def test_validation_needs_a_positive_difference_and_test_allows_zero() -> None:
    # binary-exact ratios: the differences +0.25, -0.25, 0 sum to exactly 0
    tie = {
        "a": _scn([1.0, 1.0], [0.75, 0.75]),
        "b": _scn([0.75, 0.75], [1.0, 1.0]),
        "c": _scn([0.5, 0.5], [0.5, 0.5]),
    }
    v = verdict(tie, "cand", "ppo", VerdictRule())
    assert v.mean_difference == 0.0 and not v.ok
    assert verdict(tie, "cand", "ppo", VerdictRule(test=True)).ok
    up = {**tie, "d": _scn([1.0, 1.0], [0.75, 0.75])}
    v = verdict(up, "cand", "ppo", VerdictRule())
    assert v.ok and (v.higher, v.lower) == (2, 1) and v.cand_min == 0.5


def test_the_minimum_may_be_only_min_tolerance_below() -> None:
    s = {"a": _scn([1.5, 1.5], [0.9, 0.9]), "b": _scn([0.54, 0.54], [0.6, 0.6])}
    assert not verdict(s, "cand", "ppo", VerdictRule()).ok  # 0.54 < 0.60 - 0.05
    assert verdict(s, "cand", "ppo", VerdictRule(min_tolerance=0.07)).ok


def test_the_report_names_the_part_that_failed() -> None:
    s = {"a": _scn([1.5, 1.5], [0.9, 0.9]), "b": _scn([0.54, 0.54], [0.6, 0.6])}
    v = verdict(s, "cand", "ppo", VerdictRule())
    assert v.paired_ok and not v.minimum_ok
    assert v.report().splitlines()[-1] == "fails on: minimum (minimum 0.540, floor 0.550)"
    s = {"a": _scn([0.8, 0.8], [0.9, 0.9]), "b": _scn([0.4, 0.4], [0.6, 0.6])}
    assert (
        verdict(s, "cand", "ppo", VerdictRule())
        .report()
        .splitlines()[-1]
        .startswith("fails on: paired and minimum")
    )
    s = {"a": _scn([1.5, 1.5], [0.9, 0.9])}
    assert "fails on" not in verdict(s, "cand", "ppo", VerdictRule()).report()


def test_min_ustar_and_exclude_leave_scenarios_out() -> None:
    s = {
        "a": _scn([1.0, 1.0], [0.9, 0.9]),
        "tiny": _scn([-3.0, -3.0], [0.9, 0.9], ustar=5.0),  # a ratio of a tiny U*
        "gone": _scn([0.1, 0.1], [0.9, 0.9]),
    }
    assert not verdict(s, "cand", "ppo", VerdictRule()).ok
    v = verdict(s, "cand", "ppo", VerdictRule(min_ustar=10, exclude=frozenset({"gone"})))
    assert v.ok and [r.name for r in v.rows] == ["a"] and v.excluded == ["gone", "tiny"]


def test_exclude_matches_a_scenario_files_stem_and_refuses_a_name_it_cannot_find() -> None:
    """A result keys its scenarios by path: ``--exclude gen-v5-t01`` must leave that one out
    (it once matched nothing and still printed it as excluded)."""
    s = {
        "configs/suites/x/test/x-t01.toml": _scn([0.1, 0.1], [0.9, 0.9]),
        "configs/suites/x/test/x-t02.toml": _scn([1.0, 1.0], [0.9, 0.9]),
    }
    v = verdict(s, "cand", "ppo", VerdictRule(exclude=frozenset({"x-t01"})))
    assert v.ok and [r.name for r in v.rows] == ["configs/suites/x/test/x-t02.toml"]
    assert v.excluded == ["configs/suites/x/test/x-t01.toml"]
    with pytest.raises(ValueError, match="names no scenario of the result: x-t03"):
        verdict(s, "cand", "ppo", VerdictRule(exclude=frozenset({"x-t01", "x-t03"})))


def test_agree_judges_the_minimum_only_where_runs_agree() -> None:
    s = {
        "a": _scn([1.3, 1.32], [0.85, 0.86]),
        "b": _scn([0.8, 0.82], [0.8, 0.79]),
        # both spread widely; this scenario alone fails rule 2 without agree
        "noisy": _scn([-0.7, -0.4], [-0.5, -0.1]),
        "one-run": _scn([0.5], [0.52]),  # cannot show disagreement: stays in
    }
    plain = verdict(s, "cand", "ppo", VerdictRule())
    assert not plain.ok and plain.cand_min == pytest.approx(-0.55)
    v = verdict(s, "cand", "ppo", VerdictRule(agree=0.25))
    assert v.noisy == ["noisy"] and len(v.rows) == 4  # still in the paired difference
    assert v.mean_difference == plain.mean_difference
    assert v.cand_min == pytest.approx(0.5) and v.base_min == pytest.approx(0.52) and v.ok
    assert "runs disagree: ['noisy']" in v.report()
    assert verdict(s, "cand", "ppo", VerdictRule(agree=0.45)).noisy == []


def test_margin_raises_rule_1s_bar_above_an_a_a_reading() -> None:
    # differences +0.04, +0.06, +0.02: mean +0.04, below round 27's A/A reading of +0.044
    s = {
        "a": _scn([1.0, 1.0], [0.96, 0.96]),
        "b": _scn([0.96, 0.96], [0.9, 0.9]),
        "c": _scn([0.82, 0.82], [0.8, 0.8]),
    }
    assert verdict(s, "cand", "ppo", VerdictRule()).ok
    v = verdict(s, "cand", "ppo", VerdictRule(margin=0.05))
    assert not v.ok and "margin: difference > 0.05?" in v.report()
    assert verdict(s, "cand", "ppo", VerdictRule(margin=0.03)).ok
    assert verdict(s, "cand", "ppo", VerdictRule(margin=0.03, test=True)).ok
    for bad in ({"margin": -0.1}, {"margin": 0.05, "noninferior": 0.05}):
        with pytest.raises(ValueError, match="margin"):
            VerdictRule(**bad)


def test_noninferior_passes_a_candidate_shown_no_more_than_the_margin_worse() -> None:
    # differences -0.02, -0.03, -0.01: mean -0.02, SE 0.00577, lower bound -0.0315
    s = {
        "a": _scn([0.98, 0.98], [1.0, 1.0]),
        "b": _scn([0.87, 0.87], [0.9, 0.9]),
        "c": _scn([0.79, 0.79], [0.8, 0.8]),
    }
    assert not verdict(s, "cand", "ppo", VerdictRule()).ok  # not better
    v = verdict(s, "cand", "ppo", VerdictRule(noninferior=0.05))
    assert v.ok and "non-inferiority: difference - 2 SE -0.032 >= -0.05" in v.report()
    assert not verdict(s, "cand", "ppo", VerdictRule(noninferior=0.03)).ok  # -0.0315 < -0.03
    # a wide spread fails it although the mean difference is the same: -0.02 +- 0.052
    wide = {**s, "b": _scn([0.79, 0.79], [0.9, 0.9]), "c": _scn([0.87, 0.87], [0.8, 0.8])}
    assert not verdict(wide, "cand", "ppo", VerdictRule(noninferior=0.05)).ok
    # rule 2 still holds it: a minimum far below the base's fails however level the means
    low = {**s, "d": _scn([0.3, 0.3], [0.7, 0.7]), "e": _scn([1.1, 1.1], [0.7, 0.7])}
    assert not verdict(low, "cand", "ppo", VerdictRule(noninferior=0.5)).ok
    # one scenario has no standard error, so nothing is shown
    assert not verdict({"a": s["a"]}, "cand", "ppo", VerdictRule(noninferior=0.05)).ok
    for bad in ({"noninferior": -0.1}, {"noninferior": 0.05, "test": True}):
        with pytest.raises(ValueError):
            VerdictRule(**bad)  # type: ignore[arg-type]


def test_clear_loss_fails_a_scenario_lost_in_every_run() -> None:
    # level means, but "b" is lower in every run by more than 0.05: rule 3 names it
    s = {
        "a": _scn([1.1, 1.0, 1.2], [1.0, 1.0, 1.0]),
        "b": _scn([0.80, 0.82, 0.81], [0.90, 0.88, 0.89]),
        "c": _scn([0.7, 0.7, 0.7], [0.7, 0.7, 0.7]),
    }
    assert verdict(s, "cand", "ppo", VerdictRule(noninferior=0.2)).ok  # rules 1-2 alone pass
    v = verdict(s, "cand", "ppo", VerdictRule(noninferior=0.2, clear_loss=0.05))
    assert not v.ok and v.clear_losses == ["b"] and v.paired_ok and v.minimum_ok
    assert "lower by > 0.05 in every run: b" in v.report()
    assert "fails on: clear loss" in v.report()
    # one run that is not clearly lower clears it, and so does a wider allowance
    overlap = {**s, "b": _scn([0.80, 0.82, 0.84], [0.90, 0.88, 0.89])}
    assert verdict(overlap, "cand", "ppo", VerdictRule(noninferior=0.2, clear_loss=0.05)).ok
    assert verdict(s, "cand", "ppo", VerdictRule(noninferior=0.2, clear_loss=0.1)).ok
    with pytest.raises(ValueError, match="clear_loss"):
        VerdictRule(clear_loss=-0.01)


def test_round_53s_k52c_reading_on_gen_v13() -> None:
    """K52c on gen-v13 (3 runs): rule 1 over the two scenarios it acts on fails on their
    spread; over all seven it fails narrowly. No scenario is lower by > 0.05 in every run, and
    with no allowance two scenarios where K52c made the pair's every decision (t03, t08, A/A
    by replay) are lower in every run too: rule 3 needs its allowance."""
    res = load(str(ROOT / "docs/results/issue16-round53/k52c-test.json"))
    cand = "ppo:policy/weights/candidates/round52c.pt"
    aa = {f"gen-v13-t0{i}" for i in (2, 3, 4, 5, 8)}
    v = verdict(res, cand, "ppo", VerdictRule(min_ustar=10, noninferior=0.05, exclude=aa))
    assert not v.paired_ok and v.minimum_ok and len(v.rows) == 2
    assert round(v.mean_difference, 3) == 0.116
    rule = VerdictRule(min_ustar=10, noninferior=0.05, clear_loss=0.05)
    allv = verdict(res, cand, "ppo", rule)
    assert len(allv.rows) == 7 and allv.clear_ok and not allv.paired_ok
    assert allv.standard_error is not None
    assert round(allv.mean_difference - 2 * allv.standard_error, 3) == -0.058
    zero = verdict(res, cand, "ppo", VerdictRule(min_ustar=10, clear_loss=0.0))
    assert [PurePath(n).stem for n in zero.clear_losses or []] == [
        "gen-v13-t03",
        "gen-v13-t06",
        "gen-v13-t08",
    ]


def test_scenario_floor_fails_a_scenario_whose_mean_is_lower_by_more_than_it() -> None:
    # one large gain and one moderate loss: non-inferiority fails on the gain's spread, the
    # floor names the loss and nothing else
    s = {
        "a": _scn([0.7, 0.7, 0.7], [0.2, 0.2, 0.2]),
        "b": _scn([0.9, 0.9, 0.9], [0.9, 0.9, 0.9]),
        "c": _scn([0.84, 0.9, 0.84], [0.9, 0.92, 0.94]),
        "d": _scn([1.0, 1.0, 1.0], [1.0, 1.0, 1.0]),
    }
    assert not verdict(s, "cand", "ppo", VerdictRule(noninferior=0.05)).paired_ok
    v = verdict(s, "cand", "ppo", VerdictRule(clear_loss=0.05, scenario_floor=0.05))
    assert not v.ok and v.floor_losses == ["c"] and v.paired_ok and v.clear_ok
    assert "a scenario's difference below -0.05: c" in v.report()
    assert "fails on: scenario floor" in v.report()
    assert verdict(s, "cand", "ppo", VerdictRule(clear_loss=0.05, scenario_floor=0.1)).ok
    with pytest.raises(ValueError, match="scenario_floor"):
        VerdictRule(scenario_floor=-0.01)


def test_a_bound_failing_on_gains_alone_says_so() -> None:
    """Round 63's mid4o: one scenario of four +0.209 (one acting run), the others one policy;
    --noninferior 0.05 fails on the gain's spread, and the report names that case."""
    s = {
        "gen-v1-v02": _scn([1.127] * 3, [1.127] * 3),
        "gen-v2-v04": _scn([0.989] * 3, [0.989] * 3),
        "gen-v2-v11": _scn([0.946] * 3, [0.946] * 3),
        "gen-v3-v07": _scn([0.615], [0.3737, 0.4714, 0.425, 0.3928, 0.3651]),
    }
    v = verdict(s, "cand", "ppo", VerdictRule(noninferior=0.05, min_tolerance=0.07))
    assert not v.ok and (v.higher, v.lower) == (1, 0)
    assert "no scenario is lower, so the bound fails on the spread of gains" in v.report()
    assert verdict(s, "cand", "ppo", VerdictRule(scenario_floor=0.05, clear_loss=0.05)).ok
    s["gen-v2-v11"] = _scn([0.900] * 3, [0.946] * 3)  # one lower: an ordinary failure
    v = verdict(s, "cand", "ppo", VerdictRule(noninferior=0.05, min_tolerance=0.07))
    assert not v.ok and "spread of gains" not in v.report()


def test_a_guard_asks_nowhere_worse_not_better_overall() -> None:
    """Round 63's mid4q: three scenarios one policy, gen-v3-v07 -0.001 (2 acting runs). As a
    guard (floor 0.05, no clear loss) it passes; without --guard rule 1's default "> 0" fails
    it; a scenario below the floor fails the guard too."""
    s = {
        "gen-v1-v02": _scn([1.144] * 3, [1.144] * 3),
        "gen-v2-v04": _scn([0.995] * 3, [0.995] * 3),
        "gen-v2-v11": _scn([0.942] * 3, [0.942] * 3),
        "gen-v3-v07": _scn([0.5011, 0.4597], [0.4041, 0.4178, 0.5402, 0.5618]),
    }
    plain = VerdictRule(scenario_floor=0.05, clear_loss=0.05)
    guard = VerdictRule(scenario_floor=0.05, clear_loss=0.05, guard=True)
    assert not verdict(s, "cand", "ppo", plain).ok
    v = verdict(s, "cand", "ppo", guard)
    assert v.ok and "guard: difference >= -0.05?" in v.report()
    s["gen-v2-v11"] = _scn([0.88] * 3, [0.942] * 3)
    assert not verdict(s, "cand", "ppo", guard).ok
    with pytest.raises(ValueError, match="guard"):
        VerdictRule(guard=True)
    with pytest.raises(ValueError, match="guard"):
        VerdictRule(guard=True, scenario_floor=0.05, noninferior=0.05)


def test_round_54s_probes_on_gen_v15() -> None:
    """Round 54's two probes on gen-v15 (3 runs beside the pair): both fail non-inferiority
    on v05's gain alone (the pair held 2-3 streams there in every run); with the scenario
    floor, A (doubling) passes and B (quadrupling) fails on v04, where its probes from 6-7
    streams to 24-28 cost 0.106."""
    res = load(str(ROOT / "docs/results/issue16-round54/k54ab-v15.json"))
    a, b = (f"ppo:policy/weights/candidates/round54{x}.pt" for x in "ab")
    for cand in (a, b):
        v = verdict(res, cand, "ppo", VerdictRule(min_ustar=10, noninferior=0.05))
        assert not v.paired_ok and v.mean_difference > 0.09 and len(v.rows) == 5
    rule = VerdictRule(min_ustar=10, clear_loss=0.05, scenario_floor=0.05)
    assert verdict(res, a, "ppo", rule).ok
    vb = verdict(res, b, "ppo", rule)
    assert not vb.ok and [PurePath(n).stem for n in vb.floor_losses or []] == ["gen-v15-v04"]


def _evaluation(root: Path, name: str, runs: dict[str, list[list[int]]]) -> dict[str, Any]:
    """One scenario's evaluation directory as ``xfer evaluate --out`` leaves it: per policy,
    one jsonl log per run (the counts it ran, MI by MI) listed in summary.json; returns the
    scenario's row as ``--json`` has it, each run's ratio its mean count / 10."""
    d, logs, rows = root / "suite" / name, {}, {}
    for policy, counts in runs.items():
        sub = d / "logs" / policy.replace(":", "-")
        sub.mkdir(parents=True)
        logs[policy] = []
        for k, path in enumerate(counts, 1):
            f = sub / f"r{k}-t1.jsonl"
            f.write_text("".join(json.dumps({
                "event": "interval", "t": t + 1.0, "mi_s": 1.0, "streams": n,
                "throughput_bps": 1e8 * n, "goodput_bps": 1e8 * n, "loss_rate": 0.0,
                "rtt_ms": 10.0, "min_rtt_ms": 10.0, "rtt_gradient": 0.0, "rtt_ratio": 1.0,
                "drain": False,
            }) + "\n" for t, n in enumerate(path)))  # fmt: skip
            logs[policy].append(str(f.with_suffix(".parquet")))
        ratios = [sum(p) / len(p) / 10 for p in counts]
        rows[policy] = {"utility_ratio": sum(ratios) / len(ratios), "run_ratios": ratios}
    (d / "summary.json").write_text(
        json.dumps({"policies": {p: {"logs": v} for p, v in logs.items()}})
    )
    return {"best_fixed": {"mean_utility": 100.0}, "controllers": rows}


def test_as_base_counts_runs_that_made_the_base_policys_decisions_as_its_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rule 19 (round 55): a CAND run that replays as BASE's decisions is BASE's run. CAND is
    ``fixed:8``, BASE ``fixed:4``; one of CAND's two logged runs ran 4s (BASE's decisions), so
    it joins BASE's runs; where no CAND run acted the scenario is one policy, difference 0."""
    four, eight = [4] * 6, [8] * 6
    scen = {
        "acted": _evaluation(tmp_path, "acted", {"fixed:8": [eight, four], "fixed:4": [four, four]})
    }
    moved, notes = as_base(scen, "fixed:8", "fixed:4", tmp_path)
    c = moved["acted"]["controllers"]
    assert c["fixed:8"]["run_ratios"] == [0.8]  # its acting run
    assert c["fixed:4"]["run_ratios"] == [0.4, 0.4, 0.4]  # its two and the joined one
    assert notes["acted"].startswith("acted: 1 of 2 fixed:8 runs made fixed:4's decisions")
    # measured as labelled: 0.6 vs 0.4; as the runs behaved: 0.8 vs 0.4
    assert verdict(scen, "fixed:8", "fixed:4", VerdictRule()).mean_difference == pytest.approx(0.2)
    assert verdict(moved, "fixed:8", "fixed:4", VerdictRule()).mean_difference == pytest.approx(0.4)
    # no CAND run acted: one policy there, difference exactly 0 whatever the runs read
    only = {"none": _evaluation(tmp_path, "none", {"fixed:8": [four], "fixed:4": [four, four]})}
    only["none"]["controllers"]["fixed:8"]["run_ratios"] = [0.1]
    moved, notes = as_base(only, "fixed:8", "fixed:4", tmp_path)
    c = moved["none"]["controllers"]
    assert c["fixed:8"]["run_ratios"] == c["fixed:4"]["run_ratios"] == [0.1, 0.4, 0.4]
    assert notes["none"].endswith("one policy here (difference 0)")
    # the CLI prints the notes; a missing evaluation directory is refused
    out = tmp_path / "r.json"
    out.write_text(json.dumps({"scenarios": scen}))
    assert main([str(out), "fixed:8", "fixed:4", "--as-base", str(tmp_path)]) == 0
    assert "1 of 2 fixed:8 runs made fixed:4's decisions" in capsys.readouterr().out
    assert main([str(out), "fixed:8", "fixed:4", "--as-base", str(tmp_path / "nowhere")]) == 2
    assert main([str(out), "fixed:8", "fixed:4", "--as-base", str(tmp_path), "--ran", "x"]) == 2
    assert "--ran 'x': give LABEL=FILE" in capsys.readouterr().err


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="agree"):
        VerdictRule(agree=0)
    with pytest.raises(ValueError, match="min_tolerance"):
        VerdictRule(min_tolerance=-0.1)
    with pytest.raises(ValueError, match="no scenario"):
        verdict({"a": _scn([1.0], [1.0])}, "other", "ppo", VerdictRule())


def test_cli_exit_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "r.json"
    good.write_text(json.dumps({"scenarios": {"a": _scn([1.0, 1.0], [0.9, 0.9])}}))
    assert main([str(good), "cand", "ppo"]) == 0
    assert "PASS" in capsys.readouterr().out
    assert main([str(good), "ppo", "cand"]) == 1
    assert main([str(tmp_path / "missing.json"), "cand", "ppo"]) == 2
    assert "verdict:" in capsys.readouterr().err


def test_several_files_pool_a_scenarios_runs(tmp_path: Path) -> None:
    """Round 43 reads a confirmation block and the block before it as one: a scenario in both
    files (a suite key and a scenario file's path, the same stem) keeps the runs of both."""
    first, second, third = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    first.write_text(json.dumps({"scenarios": {
        "gen-v7-v01": _scn([0.6, 0.8], [0.7, 0.7]), "gen-v7-v02": _scn([0.5], [0.4])}}))  # fmt: skip
    second.write_text(json.dumps({"scenarios": {
        "configs/suites/gen-v7/validation/gen-v7-v01.toml": _scn([1.0], [0.4])}}))  # fmt: skip
    pooled = load(f"{first},{second}")
    assert sorted(pooled) == ["gen-v7-v01", "gen-v7-v02"]
    v01 = pooled["gen-v7-v01"]["controllers"]
    assert v01["cand"]["run_ratios"] == [0.6, 0.8, 1.0]
    assert v01["cand"]["utility_ratio"] == pytest.approx(0.8)
    assert v01["ppo"]["utility_ratio"] == pytest.approx(0.6)
    assert pooled["gen-v7-v02"]["controllers"]["cand"]["run_ratios"] == [0.5]
    v = verdict(pooled, "cand", "ppo", VerdictRule())
    assert v.mean_difference == pytest.approx(((0.8 - 0.6) + (0.5 - 0.4)) / 2)
    # runs scored against another yardstick do not pool
    third.write_text(json.dumps({"scenarios": {"gen-v7-v01": _scn([1.0], [0.4], ustar=50.0)}}))
    with pytest.raises(ValueError, match="different yardsticks"):
        load(f"{first},{third}")


def test_an_a_a_blocks_noise_floors_the_standard_error(tmp_path: Path) -> None:
    """Round 43: four scenarios that each read -0.04 show an SE near 0, so non-inferiority
    at 0.05 passes; an identical pair that differed by 0.07 per scenario on the same set at
    the same run count says the bound is really -0.04 - 2 * 0.035 and fails it."""
    aa = {
        "x": _scn([0.90, 0.94], [0.97, 1.01]),  # -0.07
        "y": _scn([1.05, 1.07], [0.98, 1.00]),  # +0.07
        "z": _scn([0.60, 0.62], [0.67, 0.69]),  # -0.07
        "w": _scn([0.80, 0.80], [0.73, 0.73]),  # +0.07
        "tiny": _scn([5.0, 5.0], [0.0, 0.0], ustar=1.0),  # left out by min_ustar
    }
    rms, runs, n = aa_noise(aa, "cand", "ppo", min_ustar=10)
    assert (rms, runs, n) == (pytest.approx(0.07), 2, 4)
    cand = {k: _scn([v - d, v - d], [v, v]) for k, v, d in
            (("a", 0.9, 0.040), ("b", 1.0, 0.041), ("c", 0.8, 0.039), ("d", 0.95, 0.040))}  # fmt: skip
    plain = verdict(cand, "cand", "ppo", VerdictRule(noninferior=0.05))
    assert plain.ok and plain.standard_error == pytest.approx(0.000408, abs=1e-5)
    floored = verdict(cand, "cand", "ppo", VerdictRule(noninferior=0.05, noise=rms, noise_runs=2))
    assert not floored.ok
    assert floored.noise_se == pytest.approx(0.035) and floored.standard_error == floored.noise_se
    assert floored.observed_se == plain.standard_error
    assert "(observed 0.000, A/A floor 0.035)" in floored.report()
    # eight runs per scenario against an A/A block of two: the floor halves
    eight = {k: _scn(r["controllers"]["cand"]["run_ratios"] * 4,
                     r["controllers"]["ppo"]["run_ratios"] * 4) for k, r in cand.items()}  # fmt: skip
    v8 = verdict(eight, "cand", "ppo", VerdictRule(noninferior=0.05, noise=rms, noise_runs=2))
    assert v8.noise_se == pytest.approx(0.0175)
    # a larger observed SE stands
    wide = verdict(aa, "cand", "ppo", VerdictRule(noise=0.001, min_ustar=10))
    assert wide.standard_error == wide.observed_se > wide.noise_se
    # and the CLI reads the A/A file
    (tmp_path / "aa.json").write_text(json.dumps({"scenarios": aa}))
    (tmp_path / "c.json").write_text(json.dumps({"scenarios": cand}))
    args = [str(tmp_path / "c.json"), "cand", "ppo", "--noninferior", "0.05", "--min-ustar", "10"]
    assert main(args) == 0
    assert main([*args, "--aa", str(tmp_path / "aa.json"), "cand", "ppo"]) == 1
    assert main([*args, "--aa", str(tmp_path / "aa.json"), "nobody", "ppo"]) == 2
    with pytest.raises(ValueError, match="noise"):
        VerdictRule(noise=-0.1)


def _stored() -> list[tuple[Path, str]]:
    """Every stored testbed result with a candidate beside the shipped policy."""
    out = []
    for p in sorted((ROOT / "docs/results").glob("issue16-round*/*.json")):
        d = json.loads(p.read_text())
        if not isinstance(d, dict) or "scenarios" not in d or "ppo" not in d.get("policies", []):
            continue
        out += [(p, c) for c in d["policies"] if c not in ("ppo", "gd", "bo")]
    return out


def _rule15(argv: list[str]) -> tuple[int, str] | None:
    """rule15.py's exit status and report; None where it crashes (one scenario: no SE)."""
    buf, old = io.StringIO(), sys.argv
    sys.argv = [str(RULE15), *argv]
    try:
        with contextlib.redirect_stdout(buf):
            runpy.run_path(str(RULE15), run_name="__main__")
    except SystemExit as e:
        return int(e.code or 0), buf.getvalue()
    except TypeError:
        return None
    finally:
        sys.argv = old
    raise AssertionError("rule15.py always exits")


def test_same_verdict_and_report_as_rule15_on_every_stored_result(
    capsys: pytest.CaptureFixture[str],
) -> None:
    cases = _stored()
    assert len(cases) >= 20  # rounds 15-23 left at least this many
    for path, cand in cases:
        for extra in ([], ["--min-ustar", "10"], ["--test", "--min-ustar", "10"]):
            want = _rule15([str(path), cand, "ppo", *extra])
            got = main([str(path), cand, "ppo", *extra])
            out = capsys.readouterr().out
            if want is None:  # one scenario: rule15.py cannot format a missing SE, we can
                assert "+- n/a" in out and "not established" in out, (path.name, cand)
                continue
            # the report may add a "fails on:" line after rule15's, naming the part that failed
            out = "".join(x for x in out.splitlines(True) if not x.startswith("fails on:"))
            assert (got, out) == want, (path.name, cand, extra)


def test_an_a_a_floor_scales_with_the_runs_and_keeps_rule_18s_least() -> None:
    """Round 65: the floor rounds 63-64 wrote out in their chain scripts, now one function:
    twice the A/A RMS at the A/A block's runs, scaled by sqrt(aa_runs / runs), never under
    0.05; an A/A block without the pair, or a block of no runs, is an error."""
    aa = {k: _scn([0.9, 0.9, 0.9, 0.9], [0.9 + d] * 4) for k, d in (("x", 0.1), ("y", -0.1))}
    assert aa_floor(aa, "cand", "ppo", runs=4) == pytest.approx(0.2)
    assert aa_floor(aa, "cand", "ppo", runs=16) == pytest.approx(0.1)
    assert aa_floor(aa, "cand", "ppo", runs=3) == pytest.approx(0.2 * (4 / 3) ** 0.5)
    assert aa_floor(aa, "cand", "ppo", runs=400) == 0.05  # rule 18's floor holds
    assert aa_floor(aa, "cand", "ppo", runs=400, least=0.0) == pytest.approx(0.02)
    with pytest.raises(ValueError, match="A/A: no scenario"):
        aa_floor(aa, "cand", "other", runs=3)
    with pytest.raises(ValueError, match="runs must be >= 1"):
        aa_floor(aa, "cand", "ppo", runs=0)
