//! Recompute the coefficient errors of a saved `perfcompose validate --save DIR` run with
//! the current definition (`validate::coefficient_error`), from its `rows.jsonl` and
//! `points.json`, without measuring again.
//!
//! `cargo run --release -p perfcompose-runtime --example rescore -- DIR`
//!
//! Prints one line per configuration: the stored and the recomputed coefficient error.

use perfcompose_core::model::parse_model;
use perfcompose_runtime::validate::coefficient_error;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .ok_or("usage: rescore DIR (a directory written by `validate --save`)")?;
    let dir = std::path::Path::new(&dir);
    let rows: Vec<serde_json::Value> = std::fs::read_to_string(dir.join("rows.jsonl"))?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    let points: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("points.json"))?)?;
    if rows.len() != points.len() {
        return Err(format!("{} rows but {} point sets", rows.len(), points.len()).into());
    }
    for (row, pts) in rows.iter().zip(&points) {
        let text = |v: &serde_json::Value, k: &str| v[k].as_str().unwrap_or_default().to_string();
        let modular = parse_model(&text(row, "modular")).map_err(|e| e.to_string())?;
        let monolithic = parse_model(&text(row, "monolithic")).map_err(|e| e.to_string())?;
        let measured: Vec<(f64, f64)> = pts["points"]
            .as_array()
            .ok_or("points.json: no `points`")?
            .iter()
            .filter_map(|p| Some((p["x"].as_f64()?, p["measured"].as_f64()?)))
            .collect();
        let x_max = measured.iter().map(|p| p.0).fold(0.0, f64::max);
        let x_min = measured.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
        let new = coefficient_error(&modular, &monolithic, x_min, x_max);
        println!(
            "{:<80} stored {:>8.1}%  now {:>6.1}%",
            text(row, "configuration"),
            100.0 * row["coefficient_error"].as_f64().unwrap_or(f64::NAN),
            100.0 * new
        );
    }
    Ok(())
}
