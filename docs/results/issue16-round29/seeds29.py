"""Rule 6: the reset fix over seeds. python3 seeds29.py SCREEN_JSON... (hold-wu28 vs hold-wu28m)."""
import json, re, sys
import numpy as np
rows = {}
for f in sys.argv[1:]:
    for pol, v in json.load(open(f))["screen"].items():
        m = re.search(r"hold-(wu28m?)-s(\d+)", pol)
        if not m:
            continue
        med = v["median"]
        rows[(m.group(1), int(m.group(2)))] = (sum(med.values()) / len(med), med["bbr-competitor"], med["lan-competitor"])
seeds = sorted({s for _, s in rows})
print("seed  wu28: mean  bbr   lan  | wu28m: mean  bbr   lan  | diff")
d = []
for s in seeds:
    a, b = rows[("wu28", s)], rows[("wu28m", s)]
    d.append(b[0] - a[0])
    print(f"{s:4d}  {a[0]:.3f} {a[1]:.3f} {a[2]:.3f} | {b[0]:.3f} {b[1]:.3f} {b[2]:.3f} | {b[0]-a[0]:+.3f}")
d = np.array(d)
A = np.array([rows[("wu28", s)][0] for s in seeds]); B = np.array([rows[("wu28m", s)][0] for s in seeds])
se = d.std(ddof=1) / np.sqrt(len(d))
print(f"n={len(d)}: wu28 {A.mean():.3f} (min {A.min():.3f}), wu28m {B.mean():.3f} (min {B.min():.3f}); paired {d.mean():+.3f} +- {se:.3f}")
ok = abs(d.mean()) > 2 * se and B.min() >= A.min()
print("rule 6:", "the fix improves the screen" if ok and d.mean() > 0 else ("the fix worsens the screen" if abs(d.mean()) > 2 * se and d.mean() < 0 else "not shown"))
