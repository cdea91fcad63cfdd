# Prints an ncu --csv log one launch a line (every metric it holds), for kernels whose name matches a regex,
# launches of the same kernel, grid and block grouped (count, mean of each metric):
#   python3 docs/perf/ncu-launches.py LOG [REGEX]
import csv, collections, re, sys
lines = [l for l in open(sys.argv[1]) if l.startswith('"')]
rows = list(csv.reader(lines))
h = rows[0]
col = {n: h.index(n) for n in ('ID', 'Kernel Name', 'Metric Name', 'Metric Value')}
gi = h.index('Grid Size') if 'Grid Size' in h else None
bi = h.index('Block Size') if 'Block Size' in h else None
pat = re.compile(sys.argv[2] if len(sys.argv) > 2 else '.')
launch = collections.OrderedDict()
for r in rows[1:]:
    k = r[col['Kernel Name']].split('(')[0]
    if not pat.search(k):
        continue
    key = (r[col['ID']], k, r[gi] if gi is not None else '', r[bi] if bi is not None else '')
    try:
        v = float(r[col['Metric Value']].replace(',', ''))
    except ValueError:
        continue
    launch.setdefault(key, {})[r[col['Metric Name']]] = v
groups = collections.OrderedDict()
for (i, k, g, b), m in launch.items():
    groups.setdefault((k, g, b), []).append(m)
names = sorted({n for ms in groups.values() for m in ms for n in m})
short = [re.sub(r'^(smsp__average_warps_issue_stalled_|smsp__|sm__|l1tex__|lts__|launch__)', '', n).replace('_per_issue_active.ratio', '').replace('.avg.pct_of_peak_sustained_active', '%').replace('.sum', '')[:22] for n in names]
print('kernel | grid | block | n | ' + ' | '.join(short))
for (k, g, b), ms in groups.items():
    mean = [sum(m.get(n, 0) for m in ms) / len(ms) for n in names]
    print(f"{k[:28]} | {g} | {b} | {len(ms)} | " + ' | '.join(f'{v:.4g}' for v in mean))
