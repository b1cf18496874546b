import sys, json, glob
from policy.base import make_controller, ControllerConfig
from policy.signals import SignalVector
from lab.runlog import read_intervals
FIELDS = SignalVector.__dataclass_fields__.keys()
def sv(e):
    d = {k: e[k] for k in FIELDS if k in e}; d["paths"] = (); return SignalVector(**d)
for log in sorted(glob.glob(sys.argv[1])):
    mis = [e for e in read_intervals(log) if not e.get("drain")]
    for drop in (False, True):
        c = make_controller("ppo", ControllerConfig())
        n = c.initial(); out = []
        for e in mis[:8]:
            if drop and e["mi_s"] < 0.5: continue
            c.target = e["streams"]
            out.append((round(e["mi_s"],2), e["streams"], c.decide(sv(e))))
        print(log.split("/")[-3][:12], log.split("/")[-1][:2], "drop-short" if drop else "full      ", out[:6])
