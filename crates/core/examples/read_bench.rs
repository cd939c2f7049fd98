//! Reader throughput: writes one synthetic experiment as Extra-P text, JSON Lines and CSV
//! into a directory, then times `measure::read_path` on each (median of several runs).
//! `scripts/bench-readers` runs it beside Extra-P's readers on the same files;
//! results are in `docs/formats.md`.
//!
//! ```text
//! cargo run --release -p perfcompose-core --example read_bench -- DIR [REGIONS] [RUNS]
//! ```

use std::time::Instant;

use perfcompose_core::measure::{jsonl, read_path, text, Experiment, SeriesKey};

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().unwrap_or_else(|| "bench-out/read".into()));
    let regions: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(2000);
    let runs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    std::fs::create_dir_all(&dir).expect("create the output directory");

    // 2 parameters on a 5×5 grid, 2 metrics, 5 repetitions; deterministic values.
    let mut exp = Experiment::new(vec!["p".into(), "n".into()]);
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut noise = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        1.0 + (state % 2000) as f64 / 100_000.0
    };
    for r in 0..regions {
        for metric in ["time", "visits"] {
            for p in [2.0, 4.0, 8.0, 16.0, 32.0] {
                for n in [1e3_f64, 2e3, 4e3, 8e3, 16e3] {
                    let base = (r + 1) as f64 * p * n.log2();
                    let values = (0..5).map(|_| base * noise()).collect();
                    exp.push(
                        SeriesKey::new(format!("main->r{r}"), metric),
                        vec![p, n],
                        values,
                    );
                }
            }
        }
    }
    let txt = dir.join("bench.txt");
    std::fs::write(&txt, text::write(&exp).expect("text")).expect("write");
    let jl = dir.join("bench.jsonl");
    std::fs::write(&jl, jsonl::write(&exp).expect("jsonl")).expect("write");
    let csv = dir.join("bench.csv");
    let mut out = String::from("callpath,metric,p,n,value\n");
    for (k, points) in &exp.series {
        for pt in points {
            for v in &pt.values {
                out.push_str(&format!(
                    "{},{},{},{},{v:?}\n",
                    k.callpath, k.metric, pt.coordinate[0], pt.coordinate[1]
                ));
            }
        }
    }
    std::fs::write(&csv, out).expect("write");

    println!("format\tfile\tMB\tmedian_s\tmin_s\tmax_s\tMB_per_s");
    for (name, path) in [("text", &txt), ("jsonl", &jl), ("csv", &csv)] {
        let mb = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0) as f64 / 1e6;
        let mut times: Vec<f64> = (0..runs)
            .map(|_| {
                let t = Instant::now();
                let e = read_path(path).expect("read back");
                assert_eq!(e.series.len(), 2 * regions);
                t.elapsed().as_secs_f64()
            })
            .collect();
        times.sort_by(f64::total_cmp);
        let med = times[times.len() / 2];
        println!(
            "{name}\t{}\t{mb:.1}\t{med:.4}\t{:.4}\t{:.4}\t{:.0}",
            path.display(),
            times[0],
            times[times.len() - 1],
            mb / med
        );
    }
}
