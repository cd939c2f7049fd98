import sys, statistics as st
rows=[list(map(float,l.split())) for l in open(sys.argv[1])]
nc=len(rows[0]); mins=[min(r[c] for r in rows) for c in range(nc)]
for c in range(nc):
    v=[r[c] for r in rows]; print('core',c,'min %.0f median %.0f p90 %.0f max %.0f ns/call'%(min(v),st.median(v),sorted(v)[int(.9*len(v))],max(v)))
    fast=[x<mins[c]*1.3 for x in v]; print(' fast fraction %.2f'%(sum(fast)/len(fast)))
    runs=[];cur=fast[0];n=0
    for f in fast:
        if f==cur:n+=1
        else: runs.append((cur,n));cur=f;n=1
    runs.append((cur,n))
    print(' fast runs (windows):',[n for f,n in runs if f][:25]); print(' slow runs:',[n for f,n in runs if not f][:25])
if nc==2:
    both=[r[0]<mins[0]*1.3 and r[1]<mins[1]*1.3 for r in rows]
    print('both fast %.2f'%(sum(both)/len(both)))
