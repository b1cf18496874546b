"""How much does the own_cc input move a policy's decisions? Replays the interval records of
testbed runs (``*.jsonl`` under DIR, the candidate's logs only) through the policy twice: with
``cc`` as recorded, and with it flipped (bbr <-> cubic). Open loop (the history is what the
recorded decisions produced), so it measures sensitivity, not outcome.

    python3 bitflip.py DIR SPEC [SUBSTR]
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from policy.base import ControllerConfig, make_controller
from policy.ppo import ACTIONS, PPOController
from train.live import _signal_of


def replay(spec: str, sigs: list, flip: bool) -> list[int]:
    c = make_controller(spec, ControllerConfig())
    assert isinstance(c, PPOController)
    out = []
    for s in sigs:
        if flip:
            s = replace(s, cc="cubic" if (s.cc or "").startswith("bbr") else "bbr")
        probs = c.member_probabilities(s).mean(axis=0)
        out.append(ACTIONS[int(np.argmax(probs))])
    return out


def main() -> None:
    root, spec = Path(sys.argv[1]), sys.argv[2]
    sub = sys.argv[3] if len(sys.argv) > 3 else ""
    for f in sorted(root.rglob("*.jsonl")):
        if "/logs/ppo/" in str(f) or sub not in str(f):
            continue
        recs = [json.loads(x) for x in f.read_text().splitlines() if x.strip()]
        sigs = [_signal_of(r) for r in recs if r.get("event") == "interval"]
        if not sigs:
            continue
        a = replay(spec, sigs, False)
        b = replay(spec, sigs, True)
        diff = sum(x != y for x, y in zip(a, b, strict=True))
        name = f"{f.parts[-4]}/{f.stem}"
        print(
            f"{name:28s} cc={sigs[0].cc:6s} MIs {len(a):3d}  differ {diff:3d}  "
            f"sum(actions) {sum(a):+4d} as recorded, {sum(b):+4d} flipped"
        )


if __name__ == "__main__":
    main()
