"""Each count's mean utility before and after a scenario's rival joins (round 40).

    python3 docs/results/issue16-round40/phase40.py SWEEP_MI_DIR SCENARIO_DIR

From a stored yardstick's per-MI sweep logs (``sweep-mi/SCENARIO/sweep/fixed-N/``, read as
``ident40.py`` does) and the scenario files (``SCENARIO_DIR/SCENARIO.toml``): the rival
joins in the MI holding its ``start_s`` (0-based MI ``int(start_s)``, 1-s MIs); printed per
scenario, each count's mean utility over the MIs before that and from it on, with the best
count of each phase. A rival that switches on and off (``on_s``) is marked so: its "after"
mixes both phases.
"""

from __future__ import annotations

import statistics as st
import sys
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from ident40 import runs  # noqa: E402


def rival(toml: Path) -> tuple[int, bool]:
    """(0-based MI the first background transfer starts in, whether it switches on and off)."""
    bg = tomllib.loads(toml.read_text())["background"][0]
    return int(bg.get("start_s", 0.0)), "on_s" in bg


def main(root: Path, scenarios: Path) -> None:
    print("| scenario | rival joins (MI) | best before | best after | count: before / after |")
    print("|---|---|---|---|---|")
    for scenario in sorted(p for p in root.iterdir() if p.is_dir()):
        u = runs(scenario)
        j, onoff = rival(scenarios / f"{scenario.name}.toml")
        pre = max(u, key=lambda n: st.mean(u[n][:j]))
        post = max(u, key=lambda n: st.mean(u[n][j:]))
        cells = " ".join(
            f"{n}: {st.mean(v[:j]):.0f} / {st.mean(v[j:]):.0f}" for n, v in sorted(u.items())
        )
        when = f"{j + 1}" + (" (on/off)" if onoff else "")
        print(f"| {scenario.name} | {when} | {pre} | {post} | {cells} |")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
