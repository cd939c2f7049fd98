import sys,re,collections
for f in sys.argv[1:]:
    d=collections.defaultdict(list); prog={}
    for l in open(f):
        m=re.search(r"the program's fastest repetition (\d+) ns per element, the fastest slower-stage mean (\d+)",l)
        if l.startswith('x = '): cur=int(l.split()[2].rstrip(':'))
        if m: prog[cur]=(int(m.group(1)),int(m.group(2)))
        if l.startswith('RIG'):
            m=re.match(r'RIG x=(\d+) n=(\d+) wall_per_el=(\d+) stages=(\d+),(\d+)',l)
            x,n,w,a,b=map(int,m.groups()); d[x].append((w,a,b))
    print(f)
    for x,v in sorted(d.items()):
        wmin=min(w for w,a,b in v); mmax=min(max(a,b) for w,a,b in v)
        p=prog.get(x,(0,0))
        print(f"  x={x}: rig best wall/el {wmin}, rig best slower-stage {mmax} | program best {p[0]}, program best slower-stage {p[1]} | program/rig wall {p[0]/wmin:.3f}, slower-stage {p[1]/mmax:.3f}")
