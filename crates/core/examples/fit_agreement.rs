//! Agreement with Extra-P on Extra-P's own test files.
//!
//! ```sh
//! bash scripts/install-extrap
//! cargo run -p perfcompose-core --release --example fit_agreement
//! ```
//!
//! Extra-P 4.2.5 reads every test file it accepts (`testdata/peers/extrap/`: text,
//! JSON Lines, JSON) and models every series with its default modeler; the data it read
//! and its models are recorded (`scripts/record-extrap-answers.py`). For each series we
//! then fit the same data with our default modeler and report the share of series where
//! both pick the same hypothesis (the same set of exponents). For every disagreement, both
//! sides are judged on held-out points: leave one point out, fit on the rest, predict it;
//! the mean relative error over all points decides which model generalises better. (The
//! Extra-P side of the held-out folds is our reproduction, `--modeler extrap`, which
//! the same run checks against Extra-P's own models.) Details of every disagreement go to
//! `bench-out/fit_agreement.md`.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;

use perfcompose_core::fit::synth::{eval, same_exponents};
use perfcompose_core::fit::{modeler, FitOptions, Measure, Modeler};
use perfcompose_core::measure::{read_path, Experiment, Point, SeriesKey};
use perfcompose_core::model::{parse_rational, Monomial, Pmnf};

/// Extra-P fits the mean of the repetitions: so do ours here, like for like.
const MEAN: FitOptions = FitOptions {
    measure: Some(Measure::Mean),
    allow_negative: false,
    breaks: Vec::new(),
};

/// Held-out errors closer than this (relative to each other) count as a tie.
const TIE: f64 = 0.01;

struct Case {
    name: String,
    parameters: Vec<String>,
    points: Vec<Point>,
    extrap: Pmnf,
}

fn cases(json: &serde_json::Value) -> Vec<Case> {
    let f64s = |v: &serde_json::Value| -> Vec<f64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };
    json["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let mut terms = vec![(c["constant"].as_f64().unwrap(), Monomial::one())];
            for t in c["terms"].as_array().unwrap() {
                let mut m = Monomial::one();
                for f in t["factors"].as_array().unwrap() {
                    let q = |k: &str| parse_rational(f[k].as_str().unwrap()).unwrap();
                    m = m
                        .mul(&Monomial::power(
                            f["parameter"].as_str().unwrap(),
                            q("exponent"),
                            q("log_exponent"),
                        ))
                        .unwrap();
                }
                terms.push((t["coefficient"].as_f64().unwrap(), m));
            }
            Case {
                name: format!(
                    "{} {} / {}",
                    c["file"].as_str().unwrap(),
                    c["callpath"].as_str().unwrap(),
                    c["metric"].as_str().unwrap()
                ),
                parameters: c["parameters"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| p.as_str().unwrap().to_string())
                    .collect(),
                points: c["points"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| Point::new(f64s(&p["coordinate"]), f64s(&p["values"])))
                    .collect(),
                extrap: Pmnf::from_terms(terms),
            }
        })
        .collect()
}

/// Mean relative error predicting each point from a fit on the others (`None` when no
/// fold could be fitted).
fn held_out_error(m: &dyn Modeler, c: &Case) -> Option<f64> {
    let mut sum = 0.0;
    let mut n = 0usize;
    for k in 0..c.points.len() {
        let train: Vec<Point> = c
            .points
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != k)
            .map(|(_, p)| p.clone())
            .collect();
        let Ok(fit) = m.fit(&c.parameters, &train, &MEAN) else {
            continue;
        };
        let p = &c.points[k];
        let y = p.values.iter().sum::<f64>() / p.values.len() as f64;
        let f = eval(fit.pmnf()?, &c.parameters, &p.coordinate);
        if y != 0.0 && f.is_finite() {
            sum += ((f - y) / y).abs();
            n += 1;
        }
    }
    (n > 0).then(|| sum / n as f64)
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = root.join(".venv/bin/python");
    assert!(
        python.exists(),
        "Extra-P is not installed: run scripts/install-extrap"
    );
    let out_dir = root.join("bench-out");
    std::fs::create_dir_all(&out_dir).unwrap();
    let peers = root.join("testdata/peers/extrap");
    let mut files: Vec<PathBuf> = Vec::new();
    for (dir, exts) in [
        ("text", &["txt"][..]),
        ("text/mpa", &["txt"]),
        ("jsonlines", &["jsonl"]),
        ("json", &["JSON", "json"]),
        ("json/new", &["json"]),
        ("input", &["jsonl", "txt"]),
    ] {
        let mut here: Vec<PathBuf> = std::fs::read_dir(peers.join(dir))
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.is_file()
                    && p.extension()
                        .and_then(|e| e.to_str())
                        .is_some_and(|e| exts.contains(&e))
            })
            .collect();
        here.sort();
        files.extend(here);
    }
    let recorded = out_dir.join("extrap-testfiles.json");
    let status = Command::new(&python)
        .arg(root.join("scripts/record-extrap-answers.py"))
        .arg(&recorded)
        .args(&files)
        .status()
        .expect("run Extra-P");
    assert!(status.success());
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&recorded).unwrap()).unwrap();
    let mut cases = cases(&json);
    // Fit the data as *our* readers read it (Extra-P's recording is the fallback, and
    // every fallback is counted).
    let mut ours_read = 0usize;
    let mut experiments: std::collections::BTreeMap<String, Option<Experiment>> =
        Default::default();
    for (c, raw) in cases.iter_mut().zip(json["cases"].as_array().unwrap()) {
        let file = raw["file"].as_str().unwrap().to_string();
        let exp = experiments
            .entry(file.clone())
            .or_insert_with(|| read_path(root.join("testdata").join(&file)).ok());
        let key = SeriesKey::new(
            raw["callpath"].as_str().unwrap(),
            raw["metric"].as_str().unwrap(),
        );
        if let Some(points) = exp.as_ref().and_then(|e| e.series.get(&key)) {
            c.points = points.clone();
            c.parameters = exp.as_ref().unwrap().parameters.clone();
            ours_read += 1;
        }
    }

    let ours = modeler("perfcompose").unwrap();
    let compat = modeler("extrap").unwrap();
    let (mut same, mut faithful, mut exact_ties) = (0usize, 0usize, 0usize);
    let (mut ours_better, mut extrap_better, mut ties) = (0usize, 0usize, 0usize);
    let mut details = String::from(
        "| series | perfcompose | Extra-P | held-out error (perfcompose) | held-out error (Extra-P) |\n|---|---|---|---|---|\n",
    );
    let mut unfaithful = String::from(
        "\n## Where `--modeler extrap` differs from Extra-P\n\n| series | --modeler extrap | Extra-P |\n|---|---|---|\n",
    );
    for c in &cases {
        let o = ours.fit(&c.parameters, &c.points, &MEAN).expect("fits");
        let o = o.pmnf().unwrap();
        let r = compat.fit(&c.parameters, &c.points, &MEAN).expect("fits");
        let rp = r.pmnf().unwrap();
        // Forms that span the same functions on the measured points (a cross of two
        // lines) fit identically; Extra-P's pick among them is decided by rounding.
        let same_on_data = c.points.iter().all(|p| {
            let (u, v) = (
                eval(rp, &c.parameters, &p.coordinate),
                eval(&c.extrap, &c.parameters, &p.coordinate),
            );
            (u - v).abs() <= 1e-6 * u.abs().max(v.abs())
        });
        if same_exponents(rp, &c.extrap) {
            faithful += 1;
        } else {
            exact_ties += same_on_data as usize;
            let _ = writeln!(
                unfaithful,
                "| {} | `{}` | `{}` |",
                c.name,
                r.pmnf().unwrap().rounded(4),
                c.extrap.rounded(4)
            );
        }
        if same_exponents(o, &c.extrap) {
            same += 1;
            continue;
        }
        let eo = held_out_error(ours, c);
        let ee = held_out_error(compat, c);
        match (eo, ee) {
            (Some(a), Some(b)) if (a - b).abs() <= TIE * a.max(b) => ties += 1,
            (Some(a), Some(b)) if a < b => ours_better += 1,
            (Some(_), Some(_)) => extrap_better += 1,
            _ => ties += 1,
        }
        let show = |e: Option<f64>| e.map_or("–".into(), |e| format!("{:.3}%", 100.0 * e));
        let _ = writeln!(
            details,
            "| {} | `{}` | `{}` | {} | {} |",
            c.name,
            o.rounded(4),
            c.extrap.rounded(4),
            show(eo),
            show(ee)
        );
    }
    let n = cases.len();
    let pct = |a: usize, b: usize| format!("{:.1}% ({a}/{b})", 100.0 * a as f64 / b.max(1) as f64);
    println!("Extra-P's test files: {} files, {n} series", files.len());
    println!(
        "series read by perfcompose's own readers: {ours_read}/{n} (the rest: the data as Extra-P read it)"
    );
    println!("same hypothesis as Extra-P: {}", pct(same, n));
    println!(
        "disagreements: {}; better on held-out points: perfcompose {ours_better}, Extra-P {extrap_better}, tie (within {:.0}%) {ties}",
        n - same,
        TIE * 100.0
    );
    println!(
        "`--modeler extrap` reproduces Extra-P's hypothesis: {}; of the rest, {exact_ties} are ties (identical predictions at every measured point)",
        pct(faithful, n)
    );
    details.push_str(&unfaithful);
    std::fs::write(out_dir.join("fit_agreement.md"), details).unwrap();
    println!("details: bench-out/fit_agreement.md");
}
