"""Tabulate per-scenario `xfer evaluate --json` files of an A/B run (candidate beside base).

Usage: python3 tab14.py DIR CAND_SPEC BASE_SPEC OUT.json
Per scenario: the mean of the runs' ratios (n/a scenarios, U* <= 0, are skipped); per policy:
mean, min, >= 0.90, and beats both gd and bo (the stored yardstick's ratios).
"""

from __future__ import annotations

import glob
import json
import os
import sys


def main() -> None:
    d, cand, base, out = sys.argv[1:5]
    rows = {}
    for f in sorted(glob.glob(os.path.join(d, "*.json"))):
        j = json.load(open(f))
        for _, s in j["scenarios"].items():
            c = s["controllers"]
            if cand not in c or base not in c:
                continue
            r = {p: c[p].get("utility_ratio") for p in (cand, base, "gd", "bo") if p in c}
            if r[cand] is None:
                continue
            name = os.path.basename(f)[:-5]
            rows[name] = {"ratios": r, "runs": {p: c[p].get("run_ratios") for p in (cand, base)}}
    summ = {}
    for p in (cand, base):
        v = {n: r["ratios"][p] for n, r in rows.items()}
        beats = sum(
            1 for n, r in rows.items()
            if all(r["ratios"][p] > (r["ratios"].get(q) or float("-inf")) for q in ("gd", "bo"))
        )
        worst = min(v, key=v.get)
        summ[p] = {"n": len(v), "mean": sum(v.values()) / len(v), "min": v[worst], "argmin": worst,
                   "ge_0.90": sum(x >= 0.90 for x in v.values()), "beats_gd_bo": beats}
    for n, r in rows.items():
        rr = r["ratios"]
        runs = r["runs"]
        fmt = lambda xs: "[" + ", ".join(f"{x:.2f}" for x in xs or []) + "]"  # noqa: E731
        print(f"{n:20} cand {rr[cand]:.3f} {fmt(runs[cand])}  base {rr[base]:.3f} {fmt(runs[base])}"
              + (f"  gd {rr['gd']:.3f} bo {rr['bo']:.3f}" if rr.get("gd") is not None else ""))
    for p in (cand, base):
        s = summ[p]
        print(f"{p}: n={s['n']} mean {s['mean']:.3f} min {s['min']:.3f} ({s['argmin']}) "
              f">=0.90 {s['ge_0.90']} beats gd&bo {s['beats_gd_bo']}")
    json.dump({"cand": cand, "base": base, "rows": rows, "summary": summ}, open(out, "w"), indent=1)


if __name__ == "__main__":
    main()
