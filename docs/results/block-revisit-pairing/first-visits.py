"""A saved run with the first visit put back at every block point that was measured again
alone and kept from its second visit (the counterfactual of `--block-revisit alone`
never keeping a lone second visit): the point's repetitions scaled by the ratio of the
two visits' statistics its row's note gives (rounded to three figures there).

    python3 first-visits.py SAVED_RUN COPY
"""
import json, os, re, sys, shutil
src,dst=sys.argv[1],sys.argv[2]
shutil.rmtree(dst, ignore_errors=True)
os.makedirs(dst)
for name in os.listdir(src):  # the saved files only, not the analyses under them
    if os.path.isfile(os.path.join(src, name)):
        shutil.copy(os.path.join(src, name), dst)
unit={'ns':1,'µs':1e3,'ms':1e6,'s':1e9}
rows=[json.loads(l) for l in open(src+'/rows.jsonl')]
fix={}
for r in rows:
    for n in r['notes']:
        m=re.match(r"measured block `([^`]+)` at x=(\d+) again: it took ([\d.]+) ?(ns|µs|ms|s), .*and ([\d.]+) ?(ns|µs|ms|s) \(.*kept the second visit",n)
        if m:
            a=float(m.group(3))*unit[m.group(4)]; b=float(m.group(5))*unit[m.group(6)]
            fix[(r['configuration']+'->'+m.group(1),float(m.group(2)))]=a/b
lines=open(src+'/blocks.txt').read().split('\n')
points=[float(re.search(r'\(\s*([\d.]+)',l).group(1)) for l in lines if l.startswith('POINTS')]
out=[];region=None;k=0;done=0
for l in lines:
    if l.startswith('REGION '): region=l[7:];k=0
    if l.startswith('DATA'):
        x=points[k] if k<len(points) else None; k+=1
        f=fix.get((region,x))
        if f:
            l='DATA '+' '.join(str(float(v)*f) for v in l.split()[1:]); done+=1
    out.append(l)
open(dst+'/blocks.txt','w').write('\n'.join(out))
print(f'{src}: {len(fix)} block points revisited alone and kept second; {done} restored to the first visit',file=sys.stderr)
