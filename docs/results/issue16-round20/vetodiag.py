import sys, numpy as np, tomllib
from policy.base import ControllerConfig, make_controller
from policy.ppo import ACTIONS, combine_mean, combine_veto
from train.simeval import class_networks, run_episodes
from train.config import load_config
C = "policy/weights/candidates"
cfg = load_config("configs/train/peer.toml").env.sim
stats = {}
class Counting:
    def __init__(s):
        s.c = make_controller(f"ensemble:rule=veto:{C}/hold-s2.pt+{C}/onoff-s4.pt", ControllerConfig(max_streams=cfg.max_streams))
        s.c.combine = s.comb; s.fired = 0; s.calls = 0
    def comb(s, p):
        a, v = combine_mean(p), combine_veto(p); s.calls += 1; s.fired += a != v
        stats.setdefault(wc, []).append((ACTIONS[a], ACTIONS[v], s.c.target))
        return v
    def initial(s): return s.c.initial()
    def decide(s, sv): return s.c.decide(sv)
for wc in sys.argv[1:]:
    p, rc = class_networks(cfg, wc, 40, np.random.default_rng(1000003))
    r = run_episodes(Counting, p, 60, 1000004, rc)
    st = stats[wc]; fired = [x for x in st if x[0] != x[1]]
    print(wc, "decisions", len(st), "veto fired", len(fired), "mean->veto", {k: sum(1 for x in fired if (x[0], x[1]) == k) for k in set((x[0], x[1]) for x in fired)},
          "at n median", np.median([x[2] for x in fired]) if fired else None)
