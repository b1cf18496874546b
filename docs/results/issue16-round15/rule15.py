"""Rules 4/5 of round 15: paired difference of CAND - BASE over one suite JSON (--suite --json).

python3 rule15.py RESULT.json[,MORE.json...] CAND BASE [--min-ustar U] [--exclude NAME ...];
exit 0 if the rule holds (several suites' JSONs pool their scenarios; --min-ustar, round 16,
leaves out scenarios whose yardstick's best mean utility U* is below U):
paired mean difference > 0 (rule 4: validation) / >= 0 (rule 5: test, --test) and CAND's
minimum >= BASE's minimum - 0.05, over the scenarios where both have a ratio."""
import json, statistics, sys

from train.suite_eval import paired  # the same paired difference as --suite's summary

args = sys.argv[1:]
test = "--test" in args
args = [a for a in args if a != "--test"]
excl = set(args[args.index("--exclude") + 1:]) if "--exclude" in args else set()
min_ustar = float(args[args.index("--min-ustar") + 1]) if "--min-ustar" in args else None
path, cand, base = args[:3]
d = {"scenarios": {k: v for p in path.split(",") for k, v in json.load(open(p))["scenarios"].items()}}
rows = []
for name, row in sorted(d["scenarios"].items()):
    c = row["controllers"]
    a, b = (c.get(cand) or {}).get("utility_ratio"), (c.get(base) or {}).get("utility_ratio")
    if a is None or b is None or name in excl:
        continue
    if min_ustar is not None and row["best_fixed"]["mean_utility"] < min_ustar:
        excl.add(name)
        continue
    rows.append((name, a, b, c[cand].get("run_ratios"), c[base].get("run_ratios")))
for name, a, b, ra, rb in rows:
    print(f"{name:22s} {a:7.3f} {b:7.3f} {a - b:+7.3f}  cand runs {ra}  base runs {rb}")
kept = {name for name, *_ in rows}
p = paired({"policy": cand, "scenarios": {k: v for k, v in d["scenarios"].items() if k in kept}}, base)
ca, ba = [a for _, a, _, _, _ in rows], [b for _, _, b, _, _ in rows]
md, se = p["mean_difference"], p["standard_error"]
ok = (md >= 0 if test else md > 0) and min(ca) >= min(ba) - 0.05
print(f"n={len(rows)} (excluded {sorted(excl) or 'none'}): cand {statistics.fmean(ca):.3f} / "
      f"min {min(ca):.3f}, base {statistics.fmean(ba):.3f} / min {min(ba):.3f}; paired "
      f"{md:+.3f} +- {se:.3f} (higher {p['higher']}, lower {p['lower']}): {'PASS' if ok else 'FAIL'}"
      f"{'' if abs(md) > 2 * se else ' (within 2 SE: not established)'}")
sys.exit(0 if ok else 1)
