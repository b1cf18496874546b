"""Pick the better of several trained runs and ship it as ``policy/weights/default.pt``.

    python3 -m train.ship RUN_DIR [RUN_DIR...] [--note "how it was chosen"]
    python3 -m train.ship --ensemble CKPT CKPT [...] [--rule veto] --note "how it was chosen"
    python3 -m train.ship --checkpoint CKPT --note "how it was chosen" [--judge]
        [--warmup [KEY=VALUE,...]] [--fast [KEY=VALUE,...]]
    python3 -m train.ship --from-record policy/weights/default.json --change RULE:KEY=VALUE,...
        --dest policy/weights/candidates/NAME.pt --note "what changed and why"

Each RUN_DIR holds ``policy.pt`` and ``eval.json`` (written by ``xfer train``). The run with
the highest mean utility ratio on the held-out simulated networks wins (give one RUN_DIR
and a ``--note`` when the choice was made elsewhere, e.g. by ``xfer evaluate --testbed``);
its checkpoint is re-saved with the evaluation of every candidate in ``meta`` and the record
``policy/weights/default.json`` (config, seed, training time, evaluation tables, the note)
is written. With ``--ensemble`` the checkpoints are bundled (``xfer-ppo-ensemble/1``,
:mod:`policy.ensemble`) as the default instead, and the record lists every member's training.
With ``--checkpoint`` one checkpoint file is shipped as it is (chosen elsewhere, its run
directory gone). ``--judge`` (with ``--ensemble`` or ``--checkpoint``) writes the default
:class:`policy.judge.JudgeConfig` into the shipped file's ``meta["judge"]``: ``ppo`` then
judges each large add by the MI after its join MI (:mod:`policy.judge`). ``--warmup
[KEY=VALUE,...]`` (likewise) writes a :class:`policy.warmup.WarmupConfig` into
``meta["warmup"]``: ``ppo`` then defers adds while its youngest streams start (``--warmup
cc=bbr`` is ``warmup:cc=bbr:ppo`` inside the file). ``--fast [KEY=VALUE,...]`` writes a
:class:`policy.fast.FastConfig` into ``meta["fast"]``: ``ppo`` then asks for short MIs at the
start of a short path, as ``fast:ppo`` does around a file without it. ``--shed
[KEY=VALUE,...]`` writes a :class:`policy.shed.ShedConfig` into ``meta["shed"]``: a retreat of
``ppo``'s then sheds at least a share of the streams, as ``shed:ppo`` does around a file
without it. ``--from-record JSON`` ships the ensemble a record describes with one or more
rules' fields changed (``--change ledger:probe=4``): a candidate made from the shipped bundle.
A rule the record lacks starts from its defaults (``--change rebound:step=5`` adds
:mod:`policy.rebound` as ``meta["rebound"]``).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from policy.band import BandConfig
from policy.fast import FastConfig
from policy.gd import parse_args
from policy.judge import JudgeConfig
from policy.ledger import LedgerConfig
from policy.ppo import (
    COMBINE,
    DEFAULT_CHECKPOINT,
    combiner,
    load_checkpoint,
    read_members,
    save_checkpoint,
    save_ensemble,
)
from policy.rebound import ReboundConfig
from policy.shed import ShedConfig
from policy.warmup import WarmupConfig


def candidate(run: Path) -> dict[str, Any]:
    """Metadata and evaluation of one run directory."""
    _, ckpt = load_checkpoint(run / "policy.pt")
    ev = json.loads((run / "eval.json").read_text())
    return {"run": str(run), "kind": ckpt["arch"]["kind"], "meta": ckpt["meta"], "eval": ev}


def ship(
    runs: list[Path], dest: Path = DEFAULT_CHECKPOINT, note: str | None = None
) -> dict[str, Any]:
    """Ship the best run; return the record written next to the checkpoint."""
    cands = [candidate(r) for r in runs]
    best = max(cands, key=lambda c: c["eval"]["random"]["utility_ratio_mean"])
    net, ckpt = load_checkpoint(Path(best["run"]) / "policy.pt")
    record = {
        "shipped": {"kind": best["kind"], "from_run": best["run"], "selection": note},
        "training": best["meta"],
        "evaluation": best["eval"],
        "comparison": [
            {
                "kind": c["kind"],
                "run": c["run"],
                "timesteps": c["meta"].get("timesteps"),
                "train_seconds": c["meta"].get("train_seconds"),
                "train_cpu_seconds": c["meta"].get("train_cpu_seconds"),
                "random": c["eval"]["random"],
                "fig1": c["eval"]["named"][0],
            }
            for c in cands
        ],
    }
    meta = {**ckpt["meta"], "evaluation": best["eval"], "comparison": record["comparison"]}
    save_checkpoint(dest, net, meta, int(ckpt.get("initial_streams", 2)))
    dest.with_suffix(".json").write_text(json.dumps(record, indent=2) + "\n")
    return record


RULE_CONFIGS: dict[str, Any] = {
    "judge": JudgeConfig, "warmup": WarmupConfig, "fast": FastConfig, "ledger": LedgerConfig,
    "band": BandConfig, "shed": ShedConfig, "rebound": ReboundConfig,
}  # fmt: skip
"""Each rule ``ppo`` applies itself by its config class (a record's ``shipped[rule]`` read
back), in the order the record lists them."""

RULES = tuple(RULE_CONFIGS)
"""The rules ``ppo`` applies itself when a file's meta names them, in the order the record
lists them (``band``: which members decide on paths of which minimum RTT)."""


def _wrappers(
    meta: dict[str, Any],
    judge: JudgeConfig | None,
    warmup: WarmupConfig | None,
    fast: FastConfig | None = None,
    ledger: LedgerConfig | None = None,
    band: BandConfig | None = None,
    shed: ShedConfig | None = None,
    rebound: ReboundConfig | None = None,
) -> dict[str, Any]:
    """``meta`` with the rules ``ppo`` applies itself (``meta[k]`` for k in :data:`RULES`); a
    judge scoped to a band (``band=1``) without a band is refused before anything is written."""
    if judge is not None and judge.band and band is None:
        raise ValueError("judge: band=1 needs a bundle with a band (--band)")
    for key, cfg in zip(RULES, (judge, warmup, fast, ledger, band, shed, rebound), strict=True):
        if cfg is not None:
            meta[key] = cfg.to_dict()
    return meta


def _rules(meta: dict[str, Any]) -> dict[str, Any]:
    """The record's view of :data:`RULES` in ``meta`` (None where a rule is absent)."""
    return {k: meta.get(k) for k in RULES}


def ship_checkpoint(
    path: Path,
    dest: Path = DEFAULT_CHECKPOINT,
    note: str | None = None,
    judge: JudgeConfig | None = None,
    warmup: WarmupConfig | None = None,
    fast: FastConfig | None = None,
    ledger: LedgerConfig | None = None,
    shed: ShedConfig | None = None,
    rebound: ReboundConfig | None = None,
) -> dict[str, Any]:
    """Ship one checkpoint file as it is, with ``note`` and (if given) ``judge``, ``warmup``,
    ``fast``, ``ledger``, ``shed`` and ``rebound`` in its meta; return the record written next
    to it."""
    net, ckpt = load_checkpoint(path)
    meta = _wrappers(
        {**ckpt["meta"], "selection": note, "from_file": str(path)},
        judge, warmup, fast, ledger, shed=shed, rebound=rebound,
    )  # fmt: skip
    tmp = dest.with_name(dest.name + ".new")
    save_checkpoint(tmp, net, meta, int(ckpt.get("initial_streams", 2)))
    tmp.replace(dest)
    record = {
        "shipped": {"kind": ckpt["arch"]["kind"], "from_file": str(path), "selection": note,
                    **_rules(meta)},
        "training": ckpt["meta"],
    }  # fmt: skip
    dest.with_suffix(".json").write_text(json.dumps(record, indent=2) + "\n")
    return record


def ship_ensemble(
    members: list[Path],
    dest: Path = DEFAULT_CHECKPOINT,
    note: str | None = None,
    rule: str = "mean",
    judge: JudgeConfig | None = None,
    warmup: WarmupConfig | None = None,
    fast: FastConfig | None = None,
    ledger: LedgerConfig | None = None,
    band: BandConfig | None = None,
    shed: ShedConfig | None = None,
    rebound: ReboundConfig | None = None,
) -> dict[str, Any]:
    """Ship the checkpoints ``members`` as one ensemble deciding by ``rule``
    (:data:`policy.ppo.COMBINE`), ``band`` naming which of them decide on which paths; return
    the record written next to it. Read every member before writing, so a member that is the
    current default survives."""
    combiner(rule)
    trained = [{"file": str(m), "training": c.get("meta", {})} for m in members
               for c in read_members(m)[0]]  # fmt: skip
    if band is not None:
        band.split(len(trained))  # its member index must name one of these
    tmp = dest.with_name(dest.name + ".new")
    meta = _wrappers(
        {"selection": note, "rule": rule, "members": trained},
        judge, warmup, fast, ledger, band, shed, rebound,
    )  # fmt: skip
    save_ensemble(tmp, members, meta)
    tmp.replace(dest)
    record = {
        "shipped": {
            "kind": "ensemble",
            "members": [str(m) for m in members],
            "rule": rule,
            "selection": note,
            **_rules(meta),
        },
        "members": trained,
    }
    dest.with_suffix(".json").write_text(json.dumps(record, indent=2) + "\n")
    return record


def ship_from_record(
    record: Path,
    dest: Path,
    note: str,
    changes: dict[str, str] | None = None,
    members: list[Path] | None = None,
) -> dict[str, Any]:
    """Ship the ensemble a record (``policy/weights/default.json`` or a candidate's ``.json``)
    describes, its members and rules as they are, except the rules in ``changes``: ``{rule:
    "KEY=VALUE,..."}`` replaces those fields of that rule (a rule the record lacks starts from
    its defaults), ``{rule: "off"}`` drops it. How a candidate is made from the shipped bundle
    (rounds 52-54: one rule's fields changed, everything else carried); return the new record.
    ``members`` replaces the record's members, one for one (the same recipes trained again:
    round 53's ``scratch53.sh``), keeping its rule and rules."""
    shipped = json.loads(record.read_text())["shipped"]
    if shipped.get("kind") != "ensemble":
        raise ValueError(f"{record}: not an ensemble record (kind {shipped.get('kind')!r})")
    rules = {k: RULE_CONFIGS[k].from_dict(shipped[k]) if shipped.get(k) else None for k in RULES}
    for key, text in (changes or {}).items():
        if key not in RULE_CONFIGS:
            raise ValueError(f"unknown rule {key!r}; expected one of {', '.join(RULES)}")
        if text == "off":
            rules[key] = None
            continue
        cls = RULE_CONFIGS[key]
        kinds = {f.name: type(f.default) for f in fields(cls)}
        rules[key] = replace(rules[key] or cls(), **parse_args(text, kinds, key))
    if members is None:
        root = Path(__file__).resolve().parents[1]  # a record names members from the repository
        members = [Path(m) if Path(m).exists() else root / m for m in shipped["members"]]
    elif len(members) != len(shipped["members"]):
        raise ValueError(
            f"{record} has {len(shipped['members'])} members, got {len(members)} to replace them"
        )
    return ship_ensemble(members, dest, note=note, rule=shipped["rule"], **rules)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="ship a trained run as the default policy")
    ap.add_argument("runs", nargs="*", type=Path, help="run directories from xfer train")
    ap.add_argument(
        "--from-record",
        type=Path,
        metavar="JSON",
        help="ship the ensemble this record describes (e.g. policy/weights/default.json), "
        "its rules changed by --change; needs --dest and --note",
    )
    ap.add_argument(
        "--change",
        action="append",
        default=[],
        metavar="RULE:KEY=VALUE,...",
        help="with --from-record: change those fields of one rule (RULE:off drops it), e.g. "
        "--change ledger:probe=4,probe_min=1",
    )
    ap.add_argument("--dest", type=Path, help="with --from-record: the file to write")
    ap.add_argument("--note", help="how the shipped run was chosen (kept in the record)")
    ap.add_argument(
        "--ensemble", action="store_true", help="the arguments are checkpoints: ship them as one"
    )
    ap.add_argument(
        "--rule",
        default="mean",
        choices=sorted(COMBINE),
        help="with --ensemble: how members decide",
    )
    ap.add_argument(
        "--checkpoint", action="store_true", help="the one argument is a checkpoint: ship it"
    )
    ap.add_argument(
        "--judge",
        nargs="?",
        const="",
        metavar="KEY=VALUE,...",
        help="with --ensemble or --checkpoint: ppo judges large adds (policy/judge.py), e.g. "
        "--judge (the defaults) or, with --band, --judge band=1 (the band's member only)",
    )
    ap.add_argument(
        "--warmup",
        nargs="?",
        const="",
        metavar="KEY=VALUE,...",
        help="with --ensemble or --checkpoint: ppo defers adds while streams start "
        "(policy/warmup.py), e.g. --warmup cc=bbr",
    )
    ap.add_argument(
        "--fast",
        nargs="?",
        const="",
        metavar="KEY=VALUE,...",
        help="with --ensemble or --checkpoint: ppo's first MIs on a short path are short "
        "(policy/fast.py), e.g. --fast (the defaults) or --fast mis=8,div=4",
    )
    ap.add_argument(
        "--ledger",
        nargs="?",
        const="",
        metavar="KEY=VALUE,...",
        help="with --ensemble or --checkpoint: ppo refuses or undoes a retreat into a count "
        "just measured as worse (policy/ledger.py), e.g. --ledger seek=1,max_rtt_ms=20",
    )
    ap.add_argument(
        "--shed",
        nargs="?",
        const="",
        metavar="KEY=VALUE,...",
        help="with --ensemble or --checkpoint: a retreat of ppo's sheds at least a share of the "
        "streams (policy/shed.py), e.g. --shed beta=0.1",
    )
    ap.add_argument(
        "--rebound",
        nargs="?",
        const="",
        metavar="KEY=VALUE,...",
        help="with --ensemble or --checkpoint: the end of a flood of loss others made adds "
        "streams at once (policy/rebound.py), e.g. --rebound step=5,climbs=2",
    )
    ap.add_argument(
        "--band",
        nargs="?",
        const="",
        metavar="KEY=VALUE,...",
        help="with --ensemble: on paths whose minimum RTT is in (min_rtt_ms, max_rtt_ms] only "
        "member `inside` (default: the last) decides, elsewhere the others (policy/band.py), "
        "e.g. --band min_rtt_ms=20,max_rtt_ms=60",
    )
    a = ap.parse_args()
    if a.from_record is not None:
        if a.runs or a.dest is None or not a.note:
            ap.error("--from-record takes no positional arguments and needs --dest and --note")
        given = [f"--{k}" for k in ("ensemble", "checkpoint", *RULES) if getattr(a, k)
                 not in (None, False)]  # fmt: skip
        if given or a.rule != "mean":
            ap.error(f"--from-record takes its members, rule and rules from the record; "
                     f"change them with --change, not {' '.join(given) or '--rule'}")  # fmt: skip
        changes: dict[str, str] = {}
        for item in a.change:
            key, sep, text = item.partition(":")
            if not sep or key in changes:
                ap.error(f"--change {item!r}: expected RULE:KEY=VALUE,... once per rule")
            changes[key] = text
        try:
            rec = ship_from_record(a.from_record, a.dest, a.note, changes)
        except ValueError as e:
            ap.error(str(e))
        print(f"shipped {a.from_record} with {changes or 'no changes'} -> {a.dest}")
        raise SystemExit(0)
    if not a.runs:
        ap.error("give run directories or checkpoints (or --from-record)")
    if a.change or a.dest is not None:
        ap.error("--change and --dest need --from-record")
    jc = None if a.judge is None else JudgeConfig.parse(a.judge)  # bare --judge: defaults
    wc = None if a.warmup is None else WarmupConfig.parse(a.warmup)  # bare --warmup: defaults
    fc = None if a.fast is None else FastConfig.parse(a.fast)
    lc = None if a.ledger is None else LedgerConfig.parse(a.ledger)
    bc = None if a.band is None else BandConfig.parse(a.band)
    sc = None if a.shed is None else ShedConfig.parse(a.shed)
    rc = None if a.rebound is None else ReboundConfig.parse(a.rebound)
    if bc is not None and not a.ensemble:
        ap.error("--band needs --ensemble")
    rules_given = any(r is not None for r in (jc, wc, fc, lc, sc, rc))
    if rules_given and not (a.ensemble or a.checkpoint):
        ap.error(
            "--judge, --warmup, --fast, --ledger, --shed and --rebound need --ensemble or "
            "--checkpoint"
        )
    if a.checkpoint:
        if len(a.runs) != 1 or a.ensemble:
            ap.error("--checkpoint ships exactly one checkpoint file (not with --ensemble)")
        rec = ship_checkpoint(
            a.runs[0], note=a.note, judge=jc, warmup=wc, fast=fc, ledger=lc, shed=sc, rebound=rc
        )
        print(f"shipped {a.runs[0]} -> {DEFAULT_CHECKPOINT} (judge: {rec['shipped']['judge']})")
    elif a.ensemble:
        rec = ship_ensemble(
            a.runs, note=a.note, rule=a.rule, judge=jc, warmup=wc, fast=fc, ledger=lc, band=bc,
            shed=sc, rebound=rc,
        )  # fmt: skip
        print(f"shipped an ensemble of {len(rec['members'])} -> {DEFAULT_CHECKPOINT}")
    else:
        rec = ship(a.runs, note=a.note)
        print(
            f"shipped {rec['shipped']['kind']} from {rec['shipped']['from_run']}"
            f" -> {DEFAULT_CHECKPOINT}"
        )
