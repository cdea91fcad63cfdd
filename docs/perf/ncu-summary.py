#!/usr/bin/env python3
"""Sums an ncu --csv --metrics gpu__time_duration.sum report by kernel name:
launches, total and mean microseconds, share of the whole, largest first.
Usage: ncu-summary.py REPORT.csv"""
import csv
import sys
from collections import defaultdict

rows = [l for l in open(sys.argv[1]) if l.startswith('"')]
total, count = defaultdict(float), defaultdict(int)
for r in csv.DictReader(rows):
    if r["Metric Name"] != "gpu__time_duration.sum":
        continue
    v = float(r["Metric Value"].replace(",", ""))
    v = v / 1000 if r["Metric Unit"] == "ns" else v * 1000 if r["Metric Unit"] == "ms" else v
    total[r["Kernel Name"]] += v
    count[r["Kernel Name"]] += 1
whole = sum(total.values())
print("| kernel | launches | µs total | µs each | share |")
print("| --- | --- | --- | --- | --- |")
for k in sorted(total, key=total.get, reverse=True):
    print("| `%s` | %d | %.0f | %.1f | %.1f %% |" % (k, count[k], total[k], total[k] / count[k], 100 * total[k] / whole))
print("| all | %d | %.0f | | (each kernel alone, caches flushed) |" % (sum(count.values()), whole))
