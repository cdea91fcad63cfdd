#!/usr/bin/env python3
"""Sums an ncu --csv log of gpu__time_duration.sum (and dram__bytes_read.sum) by kernel name:
time, launches, bytes and GB/s per kernel, largest first, then the total."""
import collections, csv, sys
rows = [r for r in csv.reader(open(sys.argv[1], errors='replace')) if len(r) > 10]
h = rows[0]; k, m, u, v = (h.index(x) for x in ('Kernel Name', 'Metric Name', 'Metric Unit', 'Metric Value'))
scale = {'ns': 1e-3, 'us': 1.0, 'ms': 1e3, 'nsecond': 1e-3, 'usecond': 1.0, 'msecond': 1e3, 'second': 1e6, 'byte': 1, 'Kbyte': 1e3, 'Mbyte': 1e6, 'Gbyte': 1e9, 'KB': 1e3, 'MB': 1e6, 'GB': 1e9}
agg = collections.defaultdict(lambda: [0, 0.0, 0.0])
for r in rows[1:]:
    name = r[k].split('(')[0].strip(); val = float(r[v].replace(',', '')) * scale.get(r[u], 1)
    if r[m] == 'gpu__time_duration.sum': agg[name][0] += 1; agg[name][1] += val
    elif r[m] == 'dram__bytes_read.sum': agg[name][2] += val
tot = sum(a[1] for a in agg.values())
for name, (n, us, b) in sorted(agg.items(), key=lambda x: -x[1][1]):
    print(f"{us/1000:8.3f} ms {n:5d}× {us/max(n,1):8.1f} µs  {b/1e6:9.1f} MB {b/max(us,1e-9)/1e3:7.0f} GB/s  {name}")
print(f"{tot/1000:8.3f} ms total, {sum(a[0] for a in agg.values())} launches")
