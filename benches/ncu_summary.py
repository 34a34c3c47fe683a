"""Sums Nsight Compute's kernel durations by kernel name.

The GPU machine has Nsight Compute but not Nsight Systems. ncu runs the
kernels one at a time, so the sum per kernel is the GPU time each kernel
needs alone (not the scan's wall time, where they overlap):

    ncu --csv --metrics gpu__time_duration.sum -c 2000 \
        gdscan bench decode --data DIR --cases all --iterations 1 > ncu.csv
    python3 benches/ncu_summary.py ncu.csv
"""
import csv, sys, collections
rows = list(csv.reader(open(sys.argv[1])))
hdr = None
agg = collections.defaultdict(lambda: [0, 0.0])
for r in rows:
    if 'Kernel Name' in r and 'Metric Value' in r:
        hdr = r; continue
    if hdr is None or len(r) != len(hdr): continue
    d = dict(zip(hdr, r))
    if d.get('Metric Name') != 'gpu__time_duration.sum': continue
    v = float(d['Metric Value'].replace(',', ''))
    unit = d.get('Metric Unit', 'ns')
    v *= {'ns': 1e-6, 'us': 1e-3, 'usecond': 1e-3, 'nsecond': 1e-6, 'msecond': 1, 'ms': 1}.get(unit, 1e-6)
    name = d['Kernel Name'].split('(')[0][:60]
    agg[name][0] += 1; agg[name][1] += v
tot = sum(v[1] for v in agg.values())
for k, v in sorted(agg.items(), key=lambda kv: -kv[1][1]):
    print(f"{v[1]:9.2f} ms {v[0]:6d} launches  {k}")
print(f"{tot:9.2f} ms total")
