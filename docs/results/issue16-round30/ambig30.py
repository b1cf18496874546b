"""Round 30: which teacher labels the simulator's episodes give to histories that look like the
`stays` world's (the count unchanged for 8+ MIs, loss 1.5-4 %, RTT ratio 1.05-1.3, throughput
steady), under a recipe's env. Rollouts mix the teacher's and uniform random actions (as the
DAgger rounds mix teacher and student). python3 ambig30.py CONFIG [STEPS]"""
import sys
import numpy as np
from train.config import load_config
from train.env import SimVecEnv, teacher_action

cfg = load_config(sys.argv[1]).env
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
env = SimVecEnv(64, cfg, seed=5)
env.reset(seed=5)
rng = np.random.default_rng(5)
labels = {k: 0 for k in ("+5", "+1", "0", "-1", "-5")}
names = list(labels)
rival = {k: 0 for k in names}
prev_thr = np.zeros(env.n_envs)
for t in range(steps):
    n_opt, _ = env.sim.optimum()
    lab = teacher_action(env.streams, n_opt)
    m = env.last
    if m is not None:
        steady = np.abs(np.log(np.maximum(m.throughput_bps, 1) / np.maximum(prev_thr, 1))) < 0.05
        like = (env.still >= 8) & (m.loss_rate > 0.015) & (m.loss_rate < 0.04) & (m.rtt_ratio > 1.05) & (m.rtt_ratio < 1.3) & steady
        for i in np.flatnonzero(like):
            labels[names[lab[i]]] += 1
            if env.sim.comp_on[i] > 0 and env.sim.params.comp_loss[i] > 0:
                rival[names[lab[i]]] += 1
        prev_thr = m.throughput_bps.copy()
    act = np.where(rng.random(env.n_envs) < 0.8, lab, np.where(rng.random(env.n_envs) < 0.7, 2, rng.integers(0, 5, env.n_envs)))
    env.step(act)
tot = sum(labels.values())
print(f"{sys.argv[1]}: {tot} stays-like states in {steps} x {env.n_envs} MIs")
print("  teacher label share:", " ".join(f"{k}:{v / max(tot, 1):.2f}" for k, v in labels.items()))
rt = sum(rival.values())
print(f"  of them beside a BBR rival: {rt} ({rt / max(tot, 1):.2f}); their labels:", " ".join(f"{k}:{v / max(rt, 1):.2f}" for k, v in rival.items()))
