import re,collections,sys
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    if l.startswith('=='): v=l.split()[1]
    m=re.match(r'\s+program\s+min\s+(\d+)\s+p25\s+(\d+)\s+median\s+(\d+)',l)
    if m: pm=list(map(int,m.groups()))
    m=re.match(r'\s+rig slower stage\s+min\s+(\d+)\s+p25\s+(\d+)\s+median\s+(\d+)',l)
    if m: d[v].append((pm,list(map(int,m.groups()))))
for v,rows in d.items():
    rat=sorted(p[0]/r[0] for p,r in rows)
    print(f"{v:10}", ' '.join(f"{p[0]}/{r[0]}" for p,r in rows), f"| min ratio median {rat[len(rat)//2]:.3f}")
