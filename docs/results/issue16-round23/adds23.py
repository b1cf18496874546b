"""Round 23, descriptive: every add of >= 4 streams in the kept run logs (logs/), with the MI
before it (b), the MI it took effect (a) and the next (a2): loss, throughput relative to b,
rtt_ratio, rtt_gradient (x1e3), utility, and the min/mean RTT of b; then per scenario the
medians. python3 docs/results/issue16-round23/adds23.py > adds23.txt (repository root)."""
import glob, statistics
from pathlib import Path
import pyarrow.parquet as pq
rows=[]
for log in sorted(glob.glob('docs/results/issue16-round23/logs/**/r*-t1.parquet', recursive=True)):
    p=Path(log); scen=p.parents[2].name.replace('.toml','').split('/')[-1]
    t=pq.read_table(log).to_pylist()
    n=[r['streams'] for r in t]
    for i in range(1,len(n)-1):
        if n[i]-n[i-1]>=4:
            b=t[i-1]; a=t[i]; a2=t[i+1]
            f=lambda r,k: (r[k] or 0.0)
            rows.append((scen, n[i-1], n[i], f(b,'loss_rate')*100, f(a,'loss_rate')*100, f(a2,'loss_rate')*100,
                         f(a,'throughput_bps')/max(1,f(b,'throughput_bps')), f(a2,'throughput_bps')/max(1,f(b,'throughput_bps')),
                         f(b,'rtt_ratio'), f(a,'rtt_ratio'), f(b,'rtt_gradient')*1e3, f(a,'rtt_gradient')*1e3,
                         f(b,'utility'), f(a,'utility'), f(a2,'utility'), f(b,'min_rtt_ms'), f(b,'rtt_ms')))
print("scen                 n0->n1 loss b/a/a2 %     thr x a/a2   rttratio b/a  grad b/a      util b/a/a2        minrtt rtt")
for r in rows:
    print(f"{r[0][:20]:20s} {r[1]:2d}->{r[2]:2d} {r[3]:5.1f} {r[4]:5.1f} {r[5]:5.1f}  {r[6]:5.2f} {r[7]:5.2f}  {r[8]:5.2f} {r[9]:5.2f}  {r[10]:6.2f} {r[11]:6.2f}  {r[12]:6.1f} {r[13]:6.1f} {r[14]:6.1f}  {r[15]:6.2f} {r[16]:6.2f}")

print()
print("per scenario, medians over its adds: loss b/a/a2 %, throughput a2/b, utility b -> a2, rtt_ratio b")
for scen in sorted({r[0] for r in rows}):
    rs = [r for r in rows if r[0] == scen and r[15] > 0]
    if not rs:
        continue
    med = lambda k: statistics.median(r[k] for r in rs)  # noqa: E731
    print(f"{scen[:20]:20s} adds {len(rs):2d}  loss {med(3):5.1f} {med(4):5.1f} {med(5):5.1f}  "
          f"thr x{med(7):5.2f}  utility {med(12):6.1f} -> {med(14):6.1f}  rtt_ratio {med(8):5.2f}")
