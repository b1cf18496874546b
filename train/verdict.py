"""The shipping rule's verdict: does a candidate beat the policy it ran beside?

    python3 -m train.verdict RESULT.json[,MORE.json...] CAND BASE [--test] [--min-ustar U]
        [--agree GAP] [--noninferior MARGIN] [--margin M] [--exclude NAME ...]
        [--aa AA.json A B] [--clear-loss D] [--scenario-floor F [--guard]] [--as-base RUN_DIR]

RESULT.json is ``xfer evaluate --json`` output where CAND and BASE ran in the same invocations
(``--suite`` or several ``--scenario``); several files pool their scenarios, and their runs
where a scenario is in more than one (:func:`load`). Over the
scenarios where both have a utility ratio (:class:`VerdictRule` says which are left out):

1. the paired mean difference CAND - BASE (:func:`train.suite_eval.paired`) is > 0 on a
   validation set, >= 0 on the test set (``--test``), and
2. CAND's minimum is >= BASE's minimum - :attr:`VerdictRule.min_tolerance`.

This is ``docs/results/issue16-round15/rule15.py`` (rounds 15-23), moved here with tests;
with ``agree`` unset the two give the same verdict on every stored result.

``agree`` (round 23) answers rule 2's weakness: one scenario whose runs disagree could decide
the verdict by its noise alone (round 22's gen-v3-v06: both policies' runs spanned -0.3 to
-1.4; it failed one candidate and passed the next). With ``agree = GAP``, rule 2 compares
minimums only over the scenarios where each policy's per-run ratios lie within GAP of each
other; the others still count in rule 1 and are listed, so they can be run again. A scenario
with fewer than two runs of a policy cannot show disagreement and stays in.
``noninferior`` (round 25) is rule 1 for a set where the policy it is judged against already
sits at the set's ceiling (gen-v2 validation: ``docs/results/issue16-round25/``): the paired
difference minus two standard errors must be >= -MARGIN, so a candidate passes if it is shown
to be no more than MARGIN worse, not only if it is better. Rule 2 is unchanged.
``margin`` (round 28) raises rule 1's bar from 0 to M: the paired difference must be > M
(validation) or >= M (test). Round 27's A/A (the shipped policy beside an identical copy
listed first, 3 runs, ten long-path scenarios) read +0.044 +- 0.019, which passes "> 0": on
such a set a difference below that reading is not evidence of anything.
``noise`` (round 43) floors rule 1's standard error with an A/A block's reading: four
scenarios at two runs can show a paired SE of 0.014 while an identical pair on the same set
differs by 0.07 per scenario (round 43's gen-v2-lan). :func:`aa_noise` takes the root mean
square of an identical pair's per-scenario differences (its mean counts as noise too: a
listing-order effect is no evidence either), and the SE used becomes
``max(observed, noise * sqrt(noise_runs / runs) / sqrt(n))`` for a candidate with ``runs``
runs per scenario over ``n`` scenarios. Without ``noise`` nothing changes.
``clear_loss`` (round 53) adds a third part: no scenario where every CAND run is more than D
below every BASE run. Rule 1 over a few scenarios is decided by their spread (round 53's K52c
on gen-v13: +0.116 +- 0.170 over two, one up by a lucky run, one down in every run); a loss
that every run shows is a finding whatever the mean says. D must sit above the offset runs of
one scenario in one block share whoever decides: at D = 0 that reading also flags two
scenarios where K52c made the pair's every decision (up to 0.03). Without it nothing changes.
``scenario_floor`` (round 54) adds a fourth part: no scenario whose mean difference is below
-F. Non-inferiority's standard error is the spread of the per-scenario differences, so one
large gain fails it as surely as a loss does: round 54's probe read +0.100 +- 0.092 on gen-v15
(v05 +0.454, the other four -0.047..+0.091) and failed "difference - 2 SE >= -0.05". With
``--margin 0`` (the default: difference > 0) and ``--clear-loss``, the floor says "better
overall, and nowhere worse by more than F", where a gain in one place cannot excuse a loss
in another and does not count against the candidate either. Without it nothing changes.
``guard`` (round 63) drops "better overall" for a block the candidate does not target: rule 1
becomes "difference >= -F", so the block reads "nowhere worse by more than F" (with rules 2
and 3). Round 63's mid4q, declared as such a guard, failed the default "> 0" at -0.0005.
``--as-base RUN_DIR`` (round 55, ``docs/evaluation.md`` rule 19) reads the result as the runs
behaved, not as they were labelled (:func:`as_base`): each run in RUN_DIR (the ``--out`` of
the evaluation) is replayed closed-loop under the other policy (``train.replay.differs``), and
a CAND run that made BASE's every decision joins BASE's runs. CAND's ratio is then the mean of
its runs that acted, BASE's the mean of its runs and the joined ones; a scenario where no CAND
run acted is one policy there and reads a difference of 0 (its runs pooled for both). Round 55's K55 read -0.066 +- 0.038 on gen-v14 from runs that made the
pair's decisions MI for MI (t06: 0.783 and 0.967 against the pair's 1.203-1.519), while
leaving such scenarios out (rule 16) leaves too few to judge by. Without it nothing changes.
Each label replays as the files it ran (``summary.json``'s ``checkpoints``,
``train.replay.pinned``): after a ship, ``ppo`` in an earlier block is the policy shipped then,
found by its bytes under ``policy/weights``. A block run before round 57 has no such record:
``--ran LABEL=FILE`` names the file a ``ppo`` without a path in LABEL loaded (round 46-56
blocks: ``ppo`` is ``policy/weights/candidates/round45.pt``); without it the label is read
as today's files and the note says so.
Exit status 0 if the rule holds, 1 if not, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from train.suite_eval import paired


@dataclass(frozen=True)
class VerdictRule:
    """Which scenarios count and how the two halves of the rule are judged."""

    test: bool = False
    """Test set: rule 1 needs a paired difference >= 0 (validation: > 0)."""
    min_tolerance: float = 0.05
    """Rule 2: CAND's minimum may be this far below BASE's (round 6's between-invocation
    spread of one policy's validation mean)."""
    min_ustar: float | None = None
    """Leave out scenarios whose best fixed N's mean utility U* is below this (round 16:
    a ratio of a tiny U* is noise)."""
    agree: float | None = None
    """Rule 2 over agreeing scenarios only (module docstring); None: over all."""
    noninferior: float | None = None
    """Rule 1 as non-inferiority (module docstring): paired difference - 2 SE >= -this."""
    margin: float = 0.0
    """Rule 1's bar: the paired difference must exceed this (module docstring)."""
    noise: float | None = None
    """An identical pair's RMS per-scenario difference on this set (:func:`aa_noise`);
    floors the standard error (module docstring). None: the observed SE alone."""
    noise_runs: int = 2
    """How many runs per scenario the A/A block that measured ``noise`` had."""
    clear_loss: float | None = None
    """Rule 3: no scenario where CAND's best run is more than this below BASE's worst run
    (module docstring). None: no rule 3."""
    scenario_floor: float | None = None
    """Rule 4: no scenario whose mean difference CAND - BASE is below -this (module
    docstring). None: no rule 4."""
    guard: bool = False
    """A guard block (round 63): rule 1 asks only that the paired difference is >= -
    ``scenario_floor`` (which rule 4 implies), not that the candidate is better overall; needs
    ``scenario_floor``. For a block the candidate does not target, where it plays the pair on
    most scenarios and its mean difference sits at 0 (round 63's mid4q read -0.0005)."""
    exclude: frozenset[str] = frozenset()
    """Leave out these scenarios: a result's key or its file's stem (``gen-v5-t01`` for
    ``configs/suites/gen-v5/test/gen-v5-t01.toml``). A name that matches none is an error."""

    def __post_init__(self) -> None:
        if self.min_tolerance < 0:
            raise ValueError(f"min_tolerance must be >= 0, got {self.min_tolerance}")
        if self.agree is not None and self.agree <= 0:
            raise ValueError(f"agree must be > 0, got {self.agree}")
        if self.noninferior is not None and (self.noninferior < 0 or self.test):
            raise ValueError("noninferior must be >= 0 and is a validation rule (not with test)")
        if self.margin < 0 or (self.margin and self.noninferior is not None):
            raise ValueError("margin must be >= 0 and is not a non-inferiority rule's")
        if (self.noise is not None and self.noise < 0) or self.noise_runs < 1:
            raise ValueError("noise must be >= 0 and noise_runs >= 1")
        if self.clear_loss is not None and self.clear_loss < 0:
            raise ValueError(f"clear_loss must be >= 0, got {self.clear_loss}")
        if self.scenario_floor is not None and self.scenario_floor < 0:
            raise ValueError(f"scenario_floor must be >= 0, got {self.scenario_floor}")
        if self.guard and (
            self.scenario_floor is None or self.noninferior is not None or self.margin or self.test
        ):
            raise ValueError("guard needs a scenario_floor, and no noninferior, margin or test")


@dataclass(frozen=True)
class Row:
    name: str
    cand: float
    base: float
    cand_runs: list[float]
    base_runs: list[float]

    def agrees(self, gap: float | None) -> bool:
        """Each policy's runs lie within ``gap`` of each other (always, without a gap)."""
        if gap is None:
            return True
        return all(max(r) - min(r) <= gap for r in (self.cand_runs, self.base_runs) if len(r) >= 2)

    def clearly_lower(self, by: float) -> bool:
        """Every CAND run is more than ``by`` below every BASE run (the means without runs)."""
        return max(self.cand_runs or [self.cand]) < min(self.base_runs or [self.base]) - by


@dataclass
class Verdict:
    rule: VerdictRule
    rows: list[Row]
    excluded: list[str]
    """Left out entirely: by ``exclude`` or ``min_ustar``."""
    noisy: list[str]
    """In rule 1, not in rule 2: their runs disagree by more than ``agree``."""
    mean_difference: float
    standard_error: float | None
    """The SE rule 1 uses: the observed one, floored by ``rule.noise`` when it is set."""
    higher: int
    lower: int
    cand_mean: float
    base_mean: float
    cand_min: float
    base_min: float
    observed_se: float | None = None
    """The paired differences' own standard error (None with one scenario)."""
    noise_se: float | None = None
    """The floor from ``rule.noise`` (None without it)."""
    clear_losses: list[str] | None = None
    """Rule 3: the scenarios CAND lost in every run by more than ``rule.clear_loss``."""
    floor_losses: list[str] | None = None
    """Rule 4: the scenarios whose mean difference is below ``-rule.scenario_floor``."""

    @property
    def paired_ok(self) -> bool:
        """Rule 1: the paired difference (margin, ``test`` or non-inferiority)."""
        md = self.mean_difference
        if self.rule.guard and self.rule.scenario_floor is not None:
            return md >= -self.rule.scenario_floor
        if self.rule.noninferior is not None:
            # one scenario has no standard error: nothing is shown, so it does not pass
            se = self.standard_error
            return se is not None and md - 2 * se >= -self.rule.noninferior
        m = self.rule.margin
        return md >= m if self.rule.test else md > m

    @property
    def minimum_ok(self) -> bool:
        """Rule 2: CAND's minimum >= BASE's minimum - ``min_tolerance``."""
        return self.cand_min >= self.base_min - self.rule.min_tolerance

    @property
    def clear_ok(self) -> bool:
        """Rule 3 (with ``rule.clear_loss``): no scenario lost in every run by more than it."""
        return not self.clear_losses

    @property
    def floor_ok(self) -> bool:
        """Rule 4 (with ``rule.scenario_floor``): no scenario's mean difference below -it."""
        return not self.floor_losses

    @property
    def ok(self) -> bool:
        """The rule holds: rule 1's paired difference, rule 2's minimum and, when they are
        set, rule 3's clear losses and rule 4's scenario floor (module docstring)."""
        return self.paired_ok and self.minimum_ok and self.clear_ok and self.floor_ok

    @property
    def established(self) -> bool:
        """The difference is more than two standard errors from 0."""
        return (
            self.standard_error is not None and abs(self.mean_difference) > 2 * self.standard_error
        )

    def report(self) -> str:
        lines = [
            f"{r.name:22s} {r.cand:7.3f} {r.base:7.3f} {r.cand - r.base:+7.3f}  "
            f"cand runs {r.cand_runs}  base runs {r.base_runs}"
            for r in self.rows
        ]
        scope = ""
        if self.rule.agree is not None:
            scope = (
                f"; minimums over {len(self.rows) - len(self.noisy)} whose runs agree within "
                f"{self.rule.agree:g} (runs disagree: {self.noisy or 'none'})"
            )
        se = "n/a" if self.standard_error is None else f"{self.standard_error:.3f}"
        if self.noise_se is not None:
            obs = "n/a" if self.observed_se is None else f"{self.observed_se:.3f}"
            se += f" (observed {obs}, A/A floor {self.noise_se:.3f})"
        if self.rule.noninferior is not None and self.standard_error is not None:
            low = self.mean_difference - 2 * self.standard_error
            scope += (
                f"; non-inferiority: difference - 2 SE {low:+.3f} >= -{self.rule.noninferior:g}?"
            )
        if self.rule.guard:
            scope += f"; guard: difference >= -{self.rule.scenario_floor:g}?"
        if self.rule.margin:
            scope += f"; margin: difference {'>=' if self.rule.test else '>'} {self.rule.margin:g}?"
        if self.rule.clear_loss is not None:
            scope += (
                f"; lower by > {self.rule.clear_loss:g} in every run: "
                f"{', '.join(self.clear_losses or []) or 'none'}"
            )
        if self.rule.scenario_floor is not None:
            scope += (
                f"; a scenario's difference below -{self.rule.scenario_floor:g}: "
                f"{', '.join(self.floor_losses or []) or 'none'}"
            )
        parts = (("paired", self.paired_ok), ("minimum", self.minimum_ok))
        more = (("clear loss", self.clear_ok), ("scenario floor", self.floor_ok))
        failed = [w for w, ok in (*parts, *more) if not ok]
        lines.append(
            f"n={len(self.rows)} (excluded {self.excluded or 'none'}): cand {self.cand_mean:.3f} / "
            f"min {self.cand_min:.3f}, base {self.base_mean:.3f} / min {self.base_min:.3f}; paired "
            f"{self.mean_difference:+.3f} +- {se} (higher {self.higher}, lower {self.lower})"
            f"{scope}: {'PASS' if self.ok else 'FAIL'}"
            f"{'' if self.established else ' (within 2 SE: not established)'}"
        )
        if failed:  # which part failed (round 33: a failed minimum read as a failed bound)
            floor = self.base_min - self.rule.min_tolerance
            why = ""
            if "paired" in failed and self.rule.noninferior is not None and self.lower == 0:
                # rounds 54, 60, 63: the bound's SE is the spread of the gains themselves
                why = (
                    "; no scenario is lower, so the bound fails on the spread of gains "
                    "(docs/evaluation.md rule 18: judge a guard block by --scenario-floor F --guard)"
                )
            lines.append(
                f"fails on: {' and '.join(failed)} (minimum {self.cand_min:.3f}, "
                f"floor {floor:.3f}){why}"
            )
        return "\n".join(lines)


def verdict(scenarios: dict[str, Any], cand: str, base: str, rule: VerdictRule) -> Verdict:
    """Judge ``cand`` against ``base`` over one result's ``scenarios`` (module docstring)."""
    rows, excluded = [], set()
    unmatched = set(rule.exclude)
    for name, row in sorted(scenarios.items()):
        c = row["controllers"]
        a = (c.get(cand) or {}).get("utility_ratio")
        b = (c.get(base) or {}).get("utility_ratio")
        hit = {name, PurePath(name).stem} & rule.exclude
        if hit:
            unmatched -= hit
            excluded.add(name)
            continue
        if a is None or b is None:
            continue
        if rule.min_ustar is not None and row["best_fixed"]["mean_utility"] < rule.min_ustar:
            excluded.add(name)
            continue
        rows.append(Row(name, a, b, list(c[cand].get("run_ratios") or []),
                        list(c[base].get("run_ratios") or [])))  # fmt: skip
    if unmatched:
        raise ValueError(
            f"--exclude names no scenario of the result: {', '.join(sorted(unmatched))}"
        )
    if not rows:
        raise ValueError(f"no scenario where both {cand!r} and {base!r} have a ratio")
    kept = {r.name for r in rows}
    p = paired(
        {"policy": cand, "scenarios": {k: v for k, v in scenarios.items() if k in kept}}, base
    )
    assert p is not None  # rows is not empty
    # if no scenario's runs agree, the minimum is judged over all of them (as without agree)
    judged = [r for r in rows if r.agrees(rule.agree)] or rows
    noisy = [r.name for r in rows if r not in judged]
    observed = p["standard_error"]
    se, floor = observed, None
    if rule.noise is not None:
        runs = _runs_per_scenario(rows)
        floor = rule.noise * (rule.noise_runs / runs) ** 0.5 / len(rows) ** 0.5
        se = floor if observed is None else max(observed, floor)
    return Verdict(
        rule=rule,
        rows=rows,
        excluded=sorted(excluded),
        noisy=noisy,
        mean_difference=p["mean_difference"],
        standard_error=se,
        observed_se=observed,
        noise_se=floor,
        higher=p["higher"],
        lower=p["lower"],
        cand_mean=statistics.fmean(r.cand for r in rows),
        base_mean=statistics.fmean(r.base for r in rows),
        cand_min=min(r.cand for r in judged),
        base_min=min(r.base for r in judged),
        clear_losses=None
        if rule.clear_loss is None
        else [r.name for r in rows if r.clearly_lower(rule.clear_loss)],
        floor_losses=None
        if rule.scenario_floor is None
        else [r.name for r in rows if r.cand - r.base < -rule.scenario_floor],
    )


def _runs_per_scenario(rows: list[Row]) -> float:
    """The median number of runs behind a row's CAND ratio (1 where none are listed)."""
    return statistics.median(len(r.cand_runs) or 1 for r in rows)


def aa_noise(
    scenarios: dict[str, Any], a: str, b: str, min_ustar: float | None = None
) -> tuple[float, int, int]:
    """An A/A block's noise: ``(rms, runs, n)``, the root mean square of ``a - b`` over the
    ``n`` rows :func:`verdict` keeps for the pair (both names of one policy have a ratio,
    U* >= ``min_ustar``), and the median number of runs behind each ratio. Raises
    ValueError if there is none."""
    try:
        rows = verdict(scenarios, a, b, VerdictRule(min_ustar=min_ustar)).rows
    except ValueError as e:
        raise ValueError(f"A/A: {e}") from None
    rms = statistics.fmean((r.cand - r.base) ** 2 for r in rows) ** 0.5
    return rms, int(_runs_per_scenario(rows)), len(rows)


def aa_floor(
    scenarios: dict[str, Any],
    a: str,
    b: str,
    runs: int,
    min_ustar: float | None = None,
    least: float = 0.05,
) -> float:
    """A scenario floor (``--scenario-floor``) from an A/A block, for a block of ``runs`` runs
    per label: twice the pair's per-scenario RMS (:func:`aa_noise`), scaled from the A/A
    block's runs to ``runs`` (a mean of more runs differs less), never below ``least``
    (rule 18's 0.05). Round 64's on/off floor, ``max(0.05, 2 * 0.155 * sqrt(4 / 3))`` = 0.357,
    written out in two chain scripts before it was here. Raises ValueError as
    :func:`aa_noise` does, or if ``runs`` < 1."""
    if runs < 1:
        raise ValueError(f"A/A floor: runs must be >= 1, got {runs}")
    rms, aa_runs, _ = aa_noise(scenarios, a, b, min_ustar)
    return max(least, 2 * rms * (aa_runs / runs) ** 0.5)


def load(paths: str) -> dict[str, Any]:
    """The scenarios of one or more comma-separated ``xfer evaluate --json`` files, pooled.

    A scenario in more than one file (matched by its file stem, so a ``--suite`` run and a
    ``--scenario-file`` run of the same scenario pool) becomes one row: each policy's runs
    concatenated and its utility ratio their mean (:func:`pool`). Before round 43 a later file
    replaced the earlier one's row, silently dropping its runs.
    """
    out: dict[str, Any] = {}
    key_of: dict[str, str] = {}  # stem -> the key its first file used
    for p in paths.split(","):
        with open(p) as f:
            scenarios = json.load(f)["scenarios"]
        for name, row in scenarios.items():
            stem = PurePath(name).stem
            if stem in key_of:
                out[key_of[stem]] = pool(out[key_of[stem]], row, stem)
            else:
                key_of[stem] = name
                out[name] = row
    return out


def pool(a: dict[str, Any], b: dict[str, Any], name: str) -> dict[str, Any]:
    """One scenario's rows from two invocations as one: per policy, the runs of both and a
    utility ratio that is their mean. Both must be scored against the same best fixed
    count, and every policy in both must carry its per-run ratios."""
    ua, ub = a["best_fixed"]["mean_utility"], b["best_fixed"]["mean_utility"]
    if ua != ub:
        raise ValueError(
            f"{name}: the files were scored against different yardsticks ({ua} vs {ub})"
        )
    controllers = dict(a["controllers"])
    for policy, row in b["controllers"].items():
        if policy not in controllers:
            controllers[policy] = row
            continue
        runs = [controllers[policy].get("run_ratios"), row.get("run_ratios")]
        if not all(runs) or None in (
            controllers[policy].get("utility_ratio"),
            row.get("utility_ratio"),
        ):
            raise ValueError(f"{name}: {policy} has no per-run ratios in every file to pool")
        both = [*runs[0], *runs[1]]
        controllers[policy] = {"utility_ratio": statistics.fmean(both), "run_ratios": both}
    return {**a, "controllers": controllers}


def replayed_as(
    scenario_dir: Path, policy: str, other: str, ran: dict[str, str] | None = None
) -> tuple[list[bool], str]:
    """Per run of ``policy`` in one scenario's evaluation directory, in ``run_ratios`` order
    (its ``summary.json`` lists the runs' logs), whether the run replays under ``other`` with
    0 differing decisions (``train.replay.carried`` on ``scenario_dir/logs/<policy's dir>``,
    so a moved run directory reads the same). Every listed run must have its jsonl log.
    ``other`` decides with the files it ran in this block (:func:`train.replay.pinned`), else
    with ``ran[other]`` for a ``ppo`` without a path, else with today's files. Also returns
    how ``other`` was read, for the note ("" when as it ran by its record)."""
    from train.replay import carried, pinned

    summary = json.loads((scenario_dir / "summary.json").read_text())
    recorded = (summary["policies"].get(other) or {}).get("checkpoints")
    if recorded is not None:
        ckpt = pinned(recorded)
        how = f"{other} read as {ckpt}" if ckpt else ""
    elif ran and other in ran:
        ckpt, how = ran[other], f"{other} read as {ran[other]} (--ran)"
    else:
        from policy.base import checkpoint_files, make_controller

        learned = checkpoint_files(make_controller(other))
        ckpt, how = "", f"no record of {other}'s files: read as today's" if learned else ""
    logs = [Path(log) for log in (summary["policies"].get(policy) or {}).get("logs", [])]
    if not logs:
        return [], how
    runs = carried(other, scenario_dir / "logs" / logs[0].parent.name, ckpt)
    if [r for r, _ in runs] != [log.name.split("-")[0] for log in logs]:
        raise ValueError(f"{scenario_dir.name}: {policy}'s jsonl logs are not the runs it lists")
    return [not any(n) for _, n in runs], how


def as_base(
    scenarios: dict[str, Any],
    cand: str,
    base: str,
    run_dir: Path,
    ran: dict[str, str] | None = None,
) -> tuple[dict[str, Any], dict[str, str]]:
    """The scenarios with each CAND run that made BASE's every decision moved to BASE's runs
    (module docstring), and one note per scenario on what moved. A scenario without both
    policies' per-run ratios stays as it is; one whose evaluation directory is missing or
    whose runs do not match its logs (e.g. a result pooled from several invocations) is an
    error. Each policy replays as the files it ran (:func:`replayed_as`; ``ran``: for blocks
    without a record)."""
    out, notes = dict(scenarios), {}
    for name, row in scenarios.items():
        c = row["controllers"]
        cr = (c.get(cand) or {}).get("run_ratios") or []
        br = (c.get(base) or {}).get("run_ratios") or []
        if not cr or not br:
            continue
        stem = PurePath(name).stem
        found = sorted(run_dir.glob(f"**/{stem}/summary.json"))
        if len(found) != 1:
            raise ValueError(f"--as-base: {len(found)} evaluation directories for {stem}")
        d = found[0].parent
        (cf, how_b), (bf, how_c) = replayed_as(d, cand, base, ran), replayed_as(d, base, cand, ran)
        if len(cf) != len(cr) or len(bf) != len(br):
            raise ValueError(f"--as-base: {stem}'s runs and logs differ in number")
        acting = [r for r, f in zip(cr, cf, strict=True) if not f]
        pooled = [*br, *(r for r, f in zip(cr, cf, strict=True) if f)]
        one = not acting  # every CAND run made BASE's decisions: one policy here
        if one:
            acting = pooled = [*cr, *br]
        out[name] = {**row, "controllers": {
            **c,
            cand: {**c[cand], "utility_ratio": statistics.fmean(acting), "run_ratios": acting},
            base: {**c[base], "utility_ratio": statistics.fmean(pooled), "run_ratios": pooled},
        }}  # fmt: skip
        notes[name] = (
            f"{stem}: {sum(cf)} of {len(cf)} {cand} runs made {base}'s decisions, "
            f"{sum(bf)} of {len(bf)} {base} runs {cand}'s"
            + ("; one policy here (difference 0)" if one else "")
            + "".join(f"; {h}" for h in (how_b, how_c) if h)
        )
    return out, notes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python3 -m train.verdict", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("result", help="xfer evaluate --json output(s), comma-separated")
    ap.add_argument("cand")
    ap.add_argument("base")
    ap.add_argument("--test", action="store_true", help="test set: paired difference >= 0")
    ap.add_argument("--min-ustar", type=float, default=None)
    ap.add_argument("--agree", type=float, default=None, help="judge minimums where runs agree")
    ap.add_argument("--noninferior", type=float, default=None, metavar="MARGIN",
                    help="rule 1: paired difference - 2 SE >= -MARGIN")  # fmt: skip
    ap.add_argument("--margin", type=float, default=0.0, metavar="M",
                    help="rule 1: paired difference > M (an A/A margin)")  # fmt: skip
    ap.add_argument("--min-tolerance", type=float, default=VerdictRule.min_tolerance)
    ap.add_argument("--exclude", nargs="*", default=[], help="scenario keys or file stems")
    ap.add_argument("--clear-loss", type=float, default=None, metavar="D",
                    help="rule 3: no scenario lower by more than D in every run")  # fmt: skip
    ap.add_argument("--scenario-floor", type=float, default=None, metavar="F",
                    help="rule 4: no scenario's mean difference below -F")  # fmt: skip
    ap.add_argument("--guard", action="store_true",
                    help="a guard block: rule 1 is difference >= -F (needs --scenario-floor)")  # fmt: skip
    ap.add_argument("--aa", nargs=3, metavar=("AA.json", "A", "B"), default=None,
                    help="floor the SE with this A/A block's noise (A and B: one policy)")  # fmt: skip
    ap.add_argument("--as-base", type=Path, default=None, metavar="RUN_DIR",
                    help="CAND runs that replay as BASE's decisions count as BASE's (rule 19)")  # fmt: skip
    ap.add_argument("--ran", action="append", default=[], metavar="LABEL=FILE",
                    help="--as-base on a block without a record: a ppo without a path in LABEL "
                    "loaded FILE (repeat per label)")  # fmt: skip
    a = ap.parse_args(argv)
    try:
        if bad := [r for r in a.ran if "=" not in r]:
            raise ValueError(f"--ran {bad[0]!r}: give LABEL=FILE")
        ran = dict(r.split("=", 1) for r in a.ran)
        noise, noise_runs, aa_note = None, 2, ""
        if a.aa:
            noise, noise_runs, n = aa_noise(load(a.aa[0]), a.aa[1], a.aa[2], a.min_ustar)
            aa_note = f"A/A {a.aa[0]}: RMS {noise:.3f} over {n} scenarios at {noise_runs} runs"
        rule = VerdictRule(test=a.test, min_tolerance=a.min_tolerance, min_ustar=a.min_ustar,
                           agree=a.agree, noninferior=a.noninferior, margin=a.margin,
                           exclude=frozenset(a.exclude), noise=noise,
                           noise_runs=noise_runs, clear_loss=a.clear_loss,
                           scenario_floor=a.scenario_floor, guard=a.guard)  # fmt: skip
        scenarios, notes = load(a.result), dict[str, str]()
        if a.as_base is not None:
            scenarios, notes = as_base(scenarios, a.cand, a.base, a.as_base, ran)
        v = verdict(scenarios, a.cand, a.base, rule)
    except (OSError, ValueError, KeyError) as e:
        print(f"verdict: {e}", file=sys.stderr)
        return 2
    if aa_note:
        print(aa_note)
    for note in notes.values():
        print(note)
    print(v.report())
    return 0 if v.ok else 1


if __name__ == "__main__":
    sys.exit(main())
