"""Rule 5: every fig3 group JFI >= 0.98 with the link >= 92 % used; writes OUT/../fig3-TAG.json."""
import json, sys
out, cand = sys.argv[1], sys.argv[2]
s = json.load(open(f"{out}/summary.json"))
runs = [{"jfi": g["jfi"], "link_utilization": g["link_utilization"], "means_bps": g["means_bps"]}
        for g in s["groups"]]
json.dump({"note": f"xfer experiment fig3 --policies {cand} --repetitions 3 --no-sweep", "runs": runs},
          open(out.rstrip("/") + ".json", "w"), indent=1)
ok = len(runs) == 3 and all(r["jfi"] >= 0.98 and r["link_utilization"] >= 0.92 for r in runs)
print(" ".join(f"JFI {r['jfi']:.3f} link {100 * r['link_utilization']:.1f} %" for r in runs),
      "PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
