"""Rules 6/7: cand mean >= base mean and cand min >= base min - 0.05 (tab14's JSON)."""
import json, sys
d = json.load(open(sys.argv[1]))
c, b = d["summary"][d["cand"]], d["summary"][d["base"]]
ok = c["mean"] >= b["mean"] and c["min"] >= b["min"] - 0.05 and c["n"] == b["n"]
print(f"cand {c['mean']:.3f}/{c['min']:.3f} base {b['mean']:.3f}/{b['min']:.3f} n={c['n']}: {'PASS' if ok else 'FAIL'}")
sys.exit(0 if ok else 1)
