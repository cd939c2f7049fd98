import json,glob,os,sys
base=sys.argv[1]
for row in sorted(set(os.path.basename(p) for p in glob.glob(base+"/*/row*") if os.path.isdir(p))):
    for proto in ["rounds","sandwich"]:
        d=f"{base}/{proto}/{row}"
        if not os.path.exists(d+"/points.json"): continue
        rep=json.load(open(d+"/report.json"))
        pts=json.load(open(d+"/points.json"))
        for r,p in zip(rep["rows"],pts):
            ratios=" ".join("%.2f"%(q["measured"]/q["predicted"]) for q in p["points"])
            fb=p["time_error_from_measured_blocks"]
            print(f"{row} {proto:8s} {r['configuration'][:60]:60s} time {100*r['time_error']:5.1f}% self {100*(r.get('repeat_error') or 0):5.1f}% blocks {100*fb if fb else float('nan'):5.1f}% | {ratios}")
