#!/usr/bin/env bash
# Round 20: V20's stricter fig3 (README): 6 fresh runs, each JFI >= 0.98 with the link >= 92 %.
set -uo pipefail
WT=/work/wt/eval20; R=/work/runs/r20; H=$WT/docs/results; C=$WT/policy/weights/candidates
V20="ensemble:rule=veto:$C/hold-s2.pt+$C/onoff-s4.pt"
export PYTHONPATH=$WT
cd $WT
echo "fig3 x6 start $(date -u +%T)"
flock /tmp/xfer-netns.lock python3 -m xfer.cli experiment fig3 --policies "$V20" --repetitions 6 --no-sweep \
   --out $R/fig3six-V20 > $R/fig3six-V20.log 2>&1
echo "fig3 x6 rc $? $(date -u +%T)"
python3 - "$R/fig3six-V20" <<'PY'
import json, sys
out = sys.argv[1]
s = json.load(open(f"{out}/summary.json"))
runs = [{"jfi": g["jfi"], "link_utilization": g["link_utilization"], "means_bps": g["means_bps"]} for g in s["groups"]]
json.dump({"note": "xfer experiment fig3 --policies V20 --repetitions 6 --no-sweep", "runs": runs},
          open(out + ".json", "w"), indent=1)
ok = len(runs) == 6 and all(r["jfi"] >= 0.98 and r["link_utilization"] >= 0.92 for r in runs)
print(" ".join(f"JFI {r['jfi']:.3f} link {100 * r['link_utilization']:.1f} %" for r in runs), "PASS" if ok else "FAIL")
PY
echo "DONE $(date -u +%T)"
