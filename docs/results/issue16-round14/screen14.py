"""Round 14 screen: peer.toml's simulator, six world classes x 40 networks (seed 1000003),
every policy in the same worlds; median / p10 per class and the mean of the six medians.

Usage: PYTHONPATH=/work/main python3 screen14.py OUT.json SPEC [SPEC ...]
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile

CLASSES = ["lan-competitor", "bbr-competitor", "lossy-long", "lossy-lan", "bbr-onoff-lan", "peer"]


def main() -> None:
    out, specs = sys.argv[1], sys.argv[2:]
    res: dict[str, dict[str, dict[str, float]]] = {}
    for c in CLASSES:
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            cmd = ["xfer", "evaluate", "--sim", "--sim-config", "/work/main/configs/train/peer.toml",
                   "--world-class", c, "--networks", "40", "--json", f.name]
            for s in specs:
                cmd += ["--policy", s]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            d = json.load(open(f.name))
        res[c] = {s: {k: d[s]["random"][k] for k in
                      ("utility_ratio_median", "utility_ratio_p10", "utility_ratio_mean", "mean_streams")}
                  for s in specs}
    json.dump({"note": "xfer evaluate --sim --sim-config configs/train/peer.toml --world-class C "
               "--networks 40 (seed 1000003)", "classes": res}, open(out, "w"), indent=1)
    print(f"{'policy':42}" + "".join(f"{c[:13]:>14}" for c in CLASSES) + "  mean of medians")
    for s in specs:
        meds = [res[c][s]["utility_ratio_median"] for c in CLASSES]
        cells = "".join(f"  {res[c][s]['utility_ratio_median']:.3f}/{res[c][s]['utility_ratio_p10']:.3f}"
                        for c in CLASSES)
        print(f"{s[-42:]:42}{cells}  {sum(meds) / len(meds):.3f}")


if __name__ == "__main__":
    main()
