"""Round 50's fig3 rule: every run JFI >= 0.98 with the link >= 92 % used, at the number of runs
the rule names (5). Writes OUT.json beside the run directory OUT.

    python3 docs/results/issue16-round50/fig3check50.py OUT SPEC RUNS
"""

import json
import sys
from pathlib import Path

out, cand, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = json.loads(Path(out, "summary.json").read_text())
runs = [
    {"jfi": g["jfi"], "link_utilization": g["link_utilization"], "means_bps": g["means_bps"]}
    for g in s["groups"]
]
note = f"xfer experiment fig3 --policies {cand} --repetitions {want} --no-sweep"
Path(out.rstrip("/") + ".json").write_text(json.dumps({"note": note, "runs": runs}, indent=1))
good = [r["jfi"] >= 0.98 and r["link_utilization"] >= 0.92 for r in runs]
ok = len(runs) == want and all(good)
print(
    " ".join(f"JFI {r['jfi']:.3f} link {100 * r['link_utilization']:.1f} %" for r in runs),
    f"({sum(good)} of {len(runs)} meet it)",
    "PASS" if ok else "FAIL",
)
sys.exit(0 if ok else 1)
