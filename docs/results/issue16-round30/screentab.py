import json, sys
for f in sys.argv[1:]:
    d = json.load(open(f))
    for pol, v in d['screen'].items():
        m = v['median']
        print(f"{pol.split('/')[-1][:40]:40s}", " ".join(f"{k[:8]}={x:.3f}" for k, x in m.items()), f"mean={sum(m.values())/len(m):.3f}")
