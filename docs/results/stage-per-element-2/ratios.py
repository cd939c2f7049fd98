import json,glob,sys
for f in sys.argv[1:]:
    d=json.load(open(f))[0]
    pts=d['points']
    worst=max(pts,key=lambda p:abs(p['measured']/p['predicted']-1))
    print(f.split('/')[-2][:22].ljust(22), ' '.join(f"{p['measured']/p['predicted']:.2f}" for p in pts), f"| worst x={worst['x']} {worst['measured']/worst['predicted']:.3f}")
