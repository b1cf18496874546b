"""Round 29: what a policy asks on a fixed-N history, on the testbed and in the simulator.

For each calibration run (our BBR streams at a fixed N beside a BBR rival) the logged
signal vectors are fed to POLICY (no warm-up: the bare networks' vote) and its action taken
after every MI from the 4th on; the same for the simulator's clone of the world at the same
N. Printed per N: the share of MIs where it asks to retreat (-) and to add (+), and the mean
of the features that differ most.
python3 replay29.py RUN_DIR WORLD POLICY"""
import sys
import numpy as np
import pyarrow.parquet as pq
import json
from policy.base import ControllerConfig, make_controller
from policy.ppo import ACTIONS
from policy.signals import SignalVector
from train.sim import SimConfig, Simulator, fixed_params

FIELDS = ("t", "mi_s", "streams", "throughput_bps", "goodput_bps", "loss_rate", "rtt_ms",
          "min_rtt_ms", "rtt_gradient", "rtt_ratio")
WORLDS = {
 "gen-v6-v01": dict(capacity=1.243e9, rtt=0.1066, buffer=0.13, cc=2, cap=47e6, comp_streams=6, comp_loss=0.02, bbr_own=1.0),
 "1g-100ms-q0.13": dict(capacity=1e9, rtt=0.1, buffer=0.13, cc=2, comp_streams=6, comp_loss=0.02, bbr_own=1.0),
 "gen-v6-v04": dict(capacity=0.143e9, rtt=0.182, buffer=0.57, cc=2, cap=15e6, comp_streams=5, comp_loss=0.01, loss=0.0039, bbr_own=1.0),
}
run_dir, world, spec = sys.argv[1:4]


def ask(rows):
    c = make_controller(spec, ControllerConfig(max_streams=64))
    out = []
    for i, r in enumerate(rows):
        s = SignalVector(**{k: r[k] for k in FIELDS}, cc="bbr")
        if hasattr(c, "nets") and len(c.nets) > 1:
            a = ACTIONS[c.combine(c.member_probabilities(s))]
        else:
            a = ACTIONS[c.act(c.features.push(s))]
        if i >= 3:
            out.append(a)
    return np.array(out)


def sim_rows(n, mis=30, seed=0):
    sim = Simulator(1, SimConfig(), seed)
    sim.reset(np.ones(1, dtype=bool), fixed_params(1, comp_flip_p=0.0, noise=0.03, **WORLDS[world]))
    sim.comp_on[:] = 1.0
    rows = []
    for t in range(mis):
        m = sim.step(np.array([float(n)]))
        s = m.signal(0, float(t + 1), 1.0)
        rows.append({k: getattr(s, k) for k in FIELDS})
    return rows


s = json.load(open(f"{run_dir}/summary.json"))
print(f"{world} {spec[:60]}")
print("  N  where  ask-  ask+  loss%   ratio  grad     thr/M")
for pspec, p in s["policies"].items():
    n = int(pspec.split(":")[1])
    for where, rows in (("test", pq.read_table(p["logs"][0]).to_pylist()), ("sim", sim_rows(n))):
        a = ask(rows)
        L = np.array([r["loss_rate"] for r in rows[3:]]); R = np.array([r["rtt_ratio"] for r in rows[3:]])
        G = np.array([r["rtt_gradient"] for r in rows[3:]]); T = np.array([r["throughput_bps"] for r in rows[3:]])
        print(f"{n:3d}  {where:5s} {np.mean(a < 0):5.2f} {np.mean(a > 0):5.2f} {np.nanmean(L)*100:5.2f} {np.nanmean(R):7.3f} {np.nanmean(G):+.4f} {np.nanmean(T)/1e6:7.0f}")
