"""Sums Nsight Compute's per-kernel metrics by kernel name.

The GPU machine has Nsight Compute but not Nsight Systems. ncu runs the
kernels one at a time, so the duration per kernel is the GPU time each
kernel needs alone (not the scan's wall time, where they overlap). SM
active cycles (`sm__cycles_active.sum`, summed over the SMs) are the
share of the GPU a kernel occupies whatever its neighbours: divided by
the SM count and the clock they give the time it would take if the SMs
were shared out perfectly, the figure that bounds a scan whose kernels
fill the GPU together:

    ncu --csv --metrics gpu__time_duration.sum,sm__cycles_active.sum,sm__inst_executed.sum \
        -c 4000 gdscan bench decode --data DIR --cases all --iterations 1 > ncu.csv
    python3 benches/ncu_summary.py ncu.csv [SMS] [CLOCK_GHZ]

(SMS defaults to 132 and the clock to 1.98 GHz: the H200's.)
"""
import collections
import csv
import sys

TIME_UNITS = {'ns': 1e-6, 'nsecond': 1e-6, 'us': 1e-3, 'usecond': 1e-3, 'ms': 1, 'msecond': 1}
rows = list(csv.reader(open(sys.argv[1])))
sms = int(sys.argv[2]) if len(sys.argv) > 2 else 132
ghz = float(sys.argv[3]) if len(sys.argv) > 3 else 1.98
hdr = None
launches = collections.Counter()
agg = collections.defaultdict(lambda: collections.defaultdict(float))
for r in rows:
    if 'Kernel Name' in r and 'Metric Value' in r:
        hdr = r
        continue
    if hdr is None or len(r) != len(hdr):
        continue
    d = dict(zip(hdr, r))
    metric = d.get('Metric Name')
    try:
        v = float(d['Metric Value'].replace(',', ''))
    except ValueError:
        continue
    name = d['Kernel Name'].split('(')[0][:60]
    if metric == 'gpu__time_duration.sum':
        v *= TIME_UNITS.get(d.get('Metric Unit', 'ns'), 1e-6)
        launches[name] += 1
    agg[name][metric] += v
dur = 'gpu__time_duration.sum'
cyc = 'sm__cycles_active.sum'
ins = 'sm__inst_executed.sum'
tot = collections.defaultdict(float)
for k in agg:
    for m, v in agg[k].items():
        tot[m] += v
print(f"{'alone ms':>9} {'SM-share ms':>11} {'Ginst':>7} {'launches':>8}  kernel")
for k, v in sorted(agg.items(), key=lambda kv: -kv[1].get(cyc, kv[1][dur])):
    share = v.get(cyc, 0.0) / sms / (ghz * 1e6)
    print(f"{v[dur]:9.2f} {share:11.2f} {v.get(ins, 0.0) / 1e9:7.2f} {launches[k]:8d}  {k}")
print(f"{tot[dur]:9.2f} {tot.get(cyc, 0.0) / sms / (ghz * 1e6):11.2f} {tot.get(ins, 0.0) / 1e9:7.2f} "
      f"{sum(launches.values()):8d}  total")
