"""Round 65's fig1 rule: each run's time to optimum (lab.metrics.time_to_optimum against the
experiment's best fixed throughput, as `xfer experiment` computes it) <= 6 s at the 0.1 s
`xfer experiment` prints (an MI ends at 6.0001 s), in at least WANT
of the runs of SPEC under OUT. Prints each run's time and writes OUT.json beside OUT. With
YARDSTICK (another fig1 summary.json), its best fixed throughput is the one met, so OUT can be
run with --no-sweep (round 62's fig1o sweep at 200 s: 952.7 Mbit/s, 32 streams).

    python3 docs/results/issue16-round65/fig1check65.py OUT SPEC RUNS WANT [YARDSTICK]
"""

import json
import sys
from pathlib import Path

from lab.metrics import active_end, run_mean_throughput, time_to_optimum
from lab.runlog import read_runs

out, spec, runs, want = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
s = json.loads(Path(out, "summary.json").read_text())
yard = json.loads(Path(sys.argv[5]).read_text()) if len(sys.argv) > 5 else s
best = yard["best_fixed"]["throughput_bps"]
rows = []
for r in sorted(read_runs(s["policies"][spec]["logs"]), key=lambda r: str(r.path)):
    t = time_to_optimum(r.col("t"), r.col("throughput_bps"), best, end=active_end(r))
    rows.append({"run": Path(str(r.path)).name, "time_to_optimum_s": t,
                 "mean_throughput_bps": run_mean_throughput(r)})  # fmt: skip
note = f"xfer experiment fig1 --policies {spec} --repetitions {runs}"
doc = {"note": note, "best_fixed_bps": best, "runs": rows}
Path(out.rstrip("/") + ".json").write_text(json.dumps(doc, indent=1))
good = [
    x["time_to_optimum_s"] is not None and round(x["time_to_optimum_s"], 1) <= 6.0 for x in rows
]
ok = len(rows) == runs and sum(good) >= want
print(
    " / ".join(
        "never" if x["time_to_optimum_s"] is None else f"{x['time_to_optimum_s']:.1f} s"
        for x in rows
    ),  # fmt: skip
    f"({sum(good)} of {len(rows)} <= 6 s, {want} wanted)",
    "PASS" if ok else "FAIL",
)
sys.exit(0 if ok else 1)
