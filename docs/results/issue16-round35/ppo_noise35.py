"""Round 35: the shipped policy as its own A/A. `ppo` has been the same bundle since round 26
(policy/weights/default.pt), and every later round ran it beside its candidates, so its runs
in the committed `xfer evaluate --json` files of rounds 27-35 are repeated measurements of one
policy. Per scenario: how many runs, their mean, standard deviation and range.
python3 ppo_noise35.py [MIN_RUNS]"""
import glob
import json
import statistics as st
import sys
from pathlib import Path

min_runs = int(sys.argv[1]) if len(sys.argv) > 1 else 4
runs: dict[str, list[float]] = {}
files = []
for r in range(27, 36):
    for f in sorted(glob.glob(f"docs/results/issue16-round{r}/*.json")):
        try:
            with open(f) as fh:
                d = json.load(fh)
        except (OSError, ValueError):
            continue
        if not isinstance(d, dict) or "scenarios" not in d:
            continue
        got = False
        for key, s in d["scenarios"].items():
            c = s.get("controllers", {}).get("ppo")
            if c and c.get("run_ratios"):
                runs.setdefault(Path(key).stem, []).extend(c["run_ratios"])
                got = True
        if got:
            files.append(f)
print(f"{len(files)} files: " + " ".join(Path(f).parent.name[8:] + "/" + Path(f).name for f in files))
print(f"{'scenario':14s} {'runs':>4s} {'mean':>7s} {'sd':>6s} {'min':>7s} {'max':>7s}")
sds = []
for k in sorted(runs):
    x = runs[k]
    if len(x) < min_runs:
        continue
    sd = st.stdev(x)
    sds.append((k, sd))
    print(f"{k:14s} {len(x):4d} {st.fmean(x):7.3f} {sd:6.3f} {min(x):7.3f} {max(x):7.3f}")
print(f"{len(sds)} scenarios with >= {min_runs} runs; sd > 0.15 on: "
      + ", ".join(f"{k} ({s:.2f})" for k, s in sds if s > 0.15))
