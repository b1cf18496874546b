"""Round 23, descriptive: every stored candidate-vs-shipped result of rounds 15-23 judged by the
standing rule (round 19's test) and by the same rule with --agree 0.3 (train.verdict).
python3 docs/results/issue16-round23/agree23.py > agree23.txt (from the repository root)."""
import sys

sys.path.insert(0, ".")
from tests.unit.test_verdict import _stored  # noqa: E402
from train.verdict import VerdictRule, load, verdict  # noqa: E402

for p, c in _stored():
    sc = load(str(p))
    try:
        a = verdict(sc, c, "ppo", VerdictRule(min_ustar=10))
        b = verdict(sc, c, "ppo", VerdictRule(min_ustar=10, agree=0.3))
    except ValueError:
        continue
    if len(a.rows) < 2:
        continue
    noisy = [n.split("/")[-1].removesuffix(".toml") for n in b.noisy]
    flag = "" if a.ok == b.ok else "  <- differs"
    print(f"{p.parent.name[-7:]}/{p.name:24s} {c.split('/')[-1][:28]:28s} n={len(a.rows):2d} "
          f"plain {'PASS' if a.ok else 'FAIL'} agree {'PASS' if b.ok else 'FAIL'} noisy {noisy}{flag}")
