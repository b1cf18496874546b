"""Per-MI streams, loss, throughput and RTT ratio of run logs (python3 mitrace.py LOG.parquet...)."""
import sys
import pyarrow.parquet as pq

for f in sys.argv[1:]:
    t = pq.read_table(f).to_pylist()
    print(f)
    print("  n   ", " ".join(f"{r['streams']:>4}" for r in t))
    print("  loss", " ".join(f"{r['loss_rate'] * 100:4.1f}" for r in t))
    print("  thr ", " ".join(f"{r['throughput_bps'] / 1e6:4.0f}" for r in t))
    print("  rat ", " ".join(f"{r['rtt_ratio']:4.2f}" for r in t))
