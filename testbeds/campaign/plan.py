"""The run matrix of a campaign and the state file that lets a campaign resume.

Every run has a stable id (``LINK__POLICY__rNNN``) and a fingerprint of everything that
shapes its data (link, policy, run settings, dataset). The state file (``state.json`` in the
output directory) records finished runs with their fingerprint; a resumed campaign skips a
run only when its id is recorded as done with the same fingerprint and its log is on disk.
The state file is rewritten atomically after every run, so an interrupted campaign loses at
most the run in flight.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from testbeds.campaign.schema import Campaign, LinkSpec

STATE_VERSION = 1


def policy_slug(spec: str) -> str:
    """A file-name-safe form of a policy spec (``fixed:8`` -> ``fixed-8``)."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", spec).strip("-")
    return slug or "policy"


@dataclass(frozen=True, slots=True)
class PlannedRun:
    """One cell x repetition of the matrix."""

    run_id: str
    """Stable id: ``LINK__POLICY__rNNN`` (also the log file's stem)."""
    link: LinkSpec
    """Where it runs."""
    policy: str
    """Controller spec passed to ``xfer send --policy``."""
    rep: int
    """Repetition number, from 0."""
    fingerprint: str
    """Hash of everything that shapes this run's data; a change means the run is redone."""

    def meta(self, campaign: Campaign) -> dict[str, str]:
        """The run log metadata (``--meta``) that the report groups by."""
        return {
            "campaign": campaign.name,
            "testbed": self.link.testbed,
            "link": self.link.name,
            "scenario": f"{self.link.testbed}:{self.link.name}",
            "policy": self.policy,
            "rep": str(self.rep),
            "run_id": self.run_id,
        }


def _fingerprint(campaign: Campaign, link: LinkSpec, policy: str) -> str:
    shape = {
        "link": dataclasses.asdict(link),
        "policy": policy,
        "run": dataclasses.asdict(campaign.run),
        "dataset": dataclasses.asdict(campaign.dataset),
    }
    blob = json.dumps(shape, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def plan_runs(campaign: Campaign) -> list[PlannedRun]:
    """Every run of the campaign, in execution order."""
    links = campaign.selected_links()
    policies = campaign.matrix.policies
    reps = range(campaign.matrix.repetitions)
    cells: list[tuple[LinkSpec, str, int]]
    if campaign.matrix.order == "interleaved":
        cells = [(lk, p, r) for r in reps for lk in links for p in policies]
    else:
        cells = [(lk, p, r) for lk in links for p in policies for r in reps]
    return [
        PlannedRun(
            run_id=f"{lk.name}__{policy_slug(p)}__r{r:03d}",
            link=lk,
            policy=p,
            rep=r,
            fingerprint=_fingerprint(campaign, lk, p),
        )
        for lk, p, r in cells
    ]


class CampaignState:
    """The ``state.json`` of an output directory: which runs are done, which failed."""

    def __init__(self, out_dir: Path, campaign_name: str) -> None:
        self.out_dir = out_dir
        self.path = out_dir / "state.json"
        self.campaign_name = campaign_name
        self.runs: dict[str, dict[str, Any]] = {}
        self.calibrations: list[dict[str, Any]] = []
        if self.path.exists():
            self._load()

    def _load(self) -> None:
        try:
            doc = json.loads(self.path.read_text())
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"{self.path}: corrupt state file ({exc}); move it away to restart"
            ) from exc
        if doc.get("campaign") != self.campaign_name:
            raise ValueError(
                f"{self.path}: belongs to campaign {doc.get('campaign')!r}, not "
                f"{self.campaign_name!r}; use another --out directory"
            )
        self.runs = dict(doc.get("runs", {}))
        self.calibrations = list(doc.get("calibrations", []))

    def save(self) -> None:
        """Write the state atomically (temp file, fsync, rename)."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        doc = {
            "version": STATE_VERSION,
            "campaign": self.campaign_name,
            "runs": self.runs,
            "calibrations": self.calibrations,
        }
        tmp = self.path.with_suffix(".json.tmp")
        with open(tmp, "w") as fh:
            json.dump(doc, fh, indent=1, sort_keys=True)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)

    def log_path(self, run: PlannedRun) -> Path:
        """Where the run's Parquet log is kept locally."""
        return self.out_dir / "logs" / f"{run.run_id}.parquet"

    def is_done(self, run: PlannedRun) -> bool:
        """True if the run finished before with the same fingerprint and its log is here."""
        rec = self.runs.get(run.run_id)
        return (
            rec is not None
            and rec.get("status") == "done"
            and rec.get("fingerprint") == run.fingerprint
            and self.log_path(run).exists()
        )

    def pending(self, runs: list[PlannedRun]) -> list[PlannedRun]:
        """The runs still to do, in order."""
        return [r for r in runs if not self.is_done(r)]

    def mark(self, run: PlannedRun, status: str, **info: Any) -> None:
        """Record a run's outcome (``done`` or ``failed``) and save."""
        prev = self.runs.get(run.run_id, {})
        self.runs[run.run_id] = {
            "status": status,
            "fingerprint": run.fingerprint,
            "policy": run.policy,
            "link": run.link.name,
            "rep": run.rep,
            "attempts": int(prev.get("attempts", 0)) + 1,
            "finished_at": time.time(),
            **info,
        }
        self.save()

    def add_calibration(self, record: dict[str, Any]) -> None:
        """Append a calibration result and save."""
        self.calibrations.append(record)
        self.save()
