"""Round 24, offline check on round 23's kept run logs (../issue16-round23/logs): what would a
policy do after an add if it judged the add by the MI after the join MI?

For every add of >= 4 streams (bursts23.adds: MI i is the join MI, the first with the added
streams) whose next MI i+1 ran at no fewer streams (the logged policy did not retreat in the
join MI, so MI i+1 measured at least the added streams; where it added again, MI i+1 also
holds that add's join burst: only 10 adds held exactly), replay the logged signal vectors through POLICY and take
its action
  join: after MIs 0..i (what it does today, in the join MI);
  next: after MIs 0..i+1 (the join MI shown, the policy made to hold through it);
  skip: after MIs 0..i-1, i+1 (the join MI never shown, as the engine hides drain MIs).
Per scenario: how many such adds, and the share of them where each action is a retreat (< 0)
and an add (> 0).
python3 docs/results/issue16-round24/joinmi24.py [POLICY] (repository root; default: ppo)."""
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "issue16-round23"))
from bursts23 import adds, runs  # noqa: E402

from policy.base import ControllerConfig, make_controller  # noqa: E402
from policy.ppo import ACTIONS  # noqa: E402
from policy.signals import SignalVector  # noqa: E402

spec = sys.argv[1] if len(sys.argv) > 1 else "ppo"
FIELDS = ("t", "mi_s", "streams", "throughput_bps", "goodput_bps", "loss_rate", "rtt_ms",
          "min_rtt_ms", "rtt_gradient", "rtt_ratio")


def sig(r):
    return SignalVector(**{k: r[k] for k in FIELDS}, cc="cubic")


def action(rows):
    c = make_controller(spec, ControllerConfig(max_streams=64))
    if len(c.nets) == 1:
        for r in rows[:-1]:
            c.features.push(sig(r))
        return ACTIONS[c.act(c.features.push(sig(rows[-1])))]
    for r in rows[:-1]:
        c.member_probabilities(sig(r))
    return ACTIONS[c.combine(c.member_probabilities(sig(rows[-1])))]


table = defaultdict(lambda: defaultdict(list))
for scen, _, t in runs([str(Path(__file__).parents[1] / "issue16-round23" / "logs")]):
    n = [r["streams"] for r in t]
    for i in adds(n[:-1]):
        if n[i + 1] < n[i]:
            continue
        table[scen]["join"].append(action(t[: i + 1]))
        table[scen]["next"].append(action(t[: i + 2]))
        table[scen]["skip"].append(action(t[:i] + [t[i + 1]]))

print(f"policy {spec}: adds of >= 4 streams not retreated from in their join MI; share retreat / add")
print(f"{'scenario':22s} adds   join: -  +    next: -  +    skip: -  +")
tot = defaultdict(list)
for scen in sorted(table):
    row = table[scen]
    cells = []
    for k in ("join", "next", "skip"):
        a = row[k]
        tot[k] += a
        cells.append(f"{sum(x < 0 for x in a) / len(a):4.2f} {sum(x > 0 for x in a) / len(a):4.2f}")
    print(f"{scen[:22]:22s} {len(row['join']):4d}   " + "   ".join(cells))
print(f"{'all':22s} {len(tot['join']):4d}   " + "   ".join(
    f"{sum(x < 0 for x in tot[k]) / len(tot[k]):4.2f} {sum(x > 0 for x in tot[k]) / len(tot[k]):4.2f}"
    for k in ("join", "next", "skip")))
