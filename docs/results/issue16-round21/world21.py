"""What round 21's simulator scripts share: hand-bbr-shared-1g's network, and one policy played
on a rebuilt world (8 networks x 30 MIs, seed 11) with the BBR flow on in every network (the
simulator's default ``p_competing_at_start = 0.5`` left it off in about half; README,
"A correction")."""

from typing import Any

from policy.base import ControllerConfig, make_controller
from train.sim import NetParams, SimConfig
from train.simeval import run_episodes, summarise

HAND_BBR: dict[str, Any] = dict(capacity=1e9, rtt=0.03, buffer=0.1, cc=1, comp_streams=2,
                                comp_loss=0.04, comp_flip_p=0.0)  # fmt: skip
"""hand-bbr-shared-1g: 1 Gbit/s, 30 ms, 0.1 BDP, 2 BBR streams holding 4 % from the start."""


def play(spec: str, params: NetParams) -> tuple[list[float], str]:
    """``spec`` on ``params``: each network's utility ratio, and network 0's stream count per MI
    as one character (0-9, then a-z for 10-35)."""
    r = run_episodes(
        lambda: make_controller(spec, ControllerConfig(max_streams=64)),
        params, 30, 11, SimConfig(p_competing_at_start=1.0),
    )  # fmt: skip
    ratios = [summarise(r, i)["utility_ratio"] for i in range(len(params.capacity))]
    counts = "".join(
        "0123456789abcdefghijklmnopqrstuvwxyz"[min(int(x), 35)] for x in r["streams"][:, 0]
    )
    return ratios, counts
