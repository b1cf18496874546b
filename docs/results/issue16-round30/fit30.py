"""Round 30: fit the loss our paced BBR streams add beside a BBR rival against our share of
the link (throughput / capacity), from calib30.txt and round 29's gen-v6-v01 row. Per world
L(N) = L0_world + b * share (+ c * share^2), least squares over points with share <= SMAX."""
import re
import numpy as np

CAP = {"cb30-1g-150ms-q0.13-c25-r6": 1000, "cb30-1g-50ms-q0.25-c50-r4": 1000,
       "cb30-2g-100ms-q0.13-c100-r6": 2000, "cb30-500m-100ms-q0.5-c30-r3": 500,
       "cal-gen-v6-v01": 1243}
rows = open("docs/results/issue16-round30/calib30.txt").read().splitlines()
rows += [l for l in open("docs/results/issue16-round29/calib29.txt").read().splitlines() if l.startswith("cal-gen-v6-v01")]
data = {}
for line in rows:
    name = line.split()[0]
    pts = re.findall(r"(\d+):\s+([\d.]+)%\s+(\d+)M", line)
    data[name] = [(int(n), float(l) / 100, float(t) / CAP[name]) for n, l, t in pts]
for smax in (0.55, 0.75):
    for quad in (False, True):
        names = list(data)
        X, y = [], []
        for i, name in enumerate(names):
            for n, l, s in data[name]:
                if s <= smax:
                    row = [0.0] * len(names) + [s] + ([s * s] if quad else [])
                    row[i] = 1.0
                    X.append(row); y.append(l)
        coef, *_ = np.linalg.lstsq(np.array(X), np.array(y), rcond=None)
        pred = np.array(X) @ coef
        rms = float(np.sqrt(np.mean((pred - np.array(y)) ** 2)))
        b = coef[len(names):]
        print(f"share <= {smax}, {'b s + c s^2' if quad else 'b s'}: {len(y)} points, "
              f"b = {b[0]:.4f}" + (f", c = {b[1]:.4f}" if quad else "") + f", rms {rms*100:.2f} pp; "
              + " ".join(f"{n.split('-')[1]}..:L0={coef[i]*100:.1f}%" for i, n in enumerate(names)))
for name, pts in data.items():
    print(name, " ".join(f"N={n}: {s:.2f} {l*100:.1f}%" for n, l, s in pts))
