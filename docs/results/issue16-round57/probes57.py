"""Per run of K55 (round55.pt) in validation blocks: probes started / kept, and after a failed
probe the lowest count within the next 8 MIs vs the count the probe left."""
import sys
from pathlib import Path
from policy.base import ControllerConfig, make_controller
from train.replay import records
K = "ppo:policy/weights/candidates/round55.pt"
for root in sys.argv[1:]:
    for f in sorted(Path(root).glob("**/logs/ppo-policy-weights-candidates-round55.pt/r*-t*.jsonl")):
        sig = records(f, steady=True)
        c = make_controller(K, ControllerConfig()); c.initial()
        led = c.ledger
        out, events = [], []
        for i, s in enumerate(sig):
            before = (led.probes, led.kept, led.probing)
            n = c.decide(s); out.append(n)
            if led.probing is None and before[2] is not None and led.kept == before[1]:
                events.append((i, before[2][0], before[2][1]))
        diff = sum(a != b.streams for a, b in zip(out, sig[1:]))
        if led.probes:
            after = [(src, dst, min(out[i:i + 9])) for i, src, dst in events]
            print(f"{f.parent.parent.parent.name[:26]:26s} {f.name[:8]} probes {led.probes} kept {led.kept} failed->low8 {after} replay-diff {diff}")
