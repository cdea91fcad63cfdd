# Summarises an ncu --csv log (gpu__time_duration.sum, dram__bytes_read.sum) per kernel name:
#   python3 docs/perf/ncu-agg.py LOG
import csv,collections,sys
lines=[l for l in open(sys.argv[1]) if l.startswith('"')]
rows=list(csv.reader(lines))
h=rows[0]
ki=h.index('Kernel Name'); mi=h.index('Metric Name'); vi=h.index('Metric Value'); ui=h.index('Metric Unit')
t=collections.defaultdict(lambda:[0,0.0,0.0])
scale={'ns':1e-3,'nsecond':1e-3,'us':1,'usecond':1,'msecond':1e3,'byte':1,'Kbyte':1e3,'Mbyte':1e6,'Gbyte':1e9}
for r in rows[1:]:
    k=r[ki].split('(')[0]; v=float(r[vi].replace(',',''))*scale.get(r[ui],1)
    if r[mi].startswith('gpu__time'): t[k][0]+=1; t[k][1]+=v
    else: t[k][2]+=v
tot=sum(x[1] for x in t.values()); totb=sum(x[2] for x in t.values())
print(f'total {tot/1e3:.2f} ms, {totb/1e9:.2f} GB read, kernels {sum(x[0] for x in t.values())}')
for k,(n,us,b) in sorted(t.items(), key=lambda x:-x[1][1])[:40]:
    print(f"{k[:50]:50s} n={n:5d} ms={us/1e3:8.3f} ({100*us/tot:4.1f}%) GB={b/1e9:7.3f} GB/s={b/us/1e3 if us else 0:6.0f} us/launch={us/n:7.1f}")
