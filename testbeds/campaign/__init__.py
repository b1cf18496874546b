"""Campaigns on real testbeds over SSH: the campaign file, the runner, provisioning helpers.

``xfer campaign run FILE`` (see :mod:`testbeds.campaign.cli`) loads a campaign with
:func:`load_campaign`, then :func:`run_campaign` installs xfer on every host, calibrates
every link, runs the matrix, collects the Parquet logs and ends with ``xfer report``.
"""

from __future__ import annotations

from testbeds.campaign.plan import CampaignState, PlannedRun, plan_runs
from testbeds.campaign.schema import Campaign, CampaignError, campaign_from_dict, load_campaign

__all__ = [
    "Campaign",
    "CampaignError",
    "CampaignState",
    "PlannedRun",
    "campaign_from_dict",
    "load_campaign",
    "plan_runs",
]
