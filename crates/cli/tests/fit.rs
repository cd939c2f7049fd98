//! `perfcompose fit` end to end: human and JSON output, modelers, basis fits, errors.

use std::path::PathBuf;
use std::process::{Command, Output};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn peer(path: &str) -> String {
    repo()
        .join("testdata/peers/extrap")
        .join(path)
        .display()
        .to_string()
}

fn perfcompose(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perfcompose"))
        .args(args)
        .output()
        .expect("run perfcompose")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("perfcompose-fit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn human_output_is_one_line_per_series_in_extrap_syntax() {
    let o = perfcompose(&["fit", &peer("text/one_parameter_1.txt")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{out}");
    assert!(lines[0].starts_with("compute; time; "), "{out}");
    assert!(lines[0].contains(" * x^(2)"), "{out}");
    assert!(lines[0].contains("; SMAPE "), "{out}");
}

#[test]
fn extrap_modeler_prints_what_extrap_prints() {
    // Extra-P 4.2.5: `extrap --text one_parameter_1.txt` → -0.8897934098062792 + 0.20168243826499183 * x^(2)
    let o = perfcompose(&[
        "fit",
        "--modeler",
        "extrap",
        &peer("text/one_parameter_1.txt"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let model = out.split("; ").nth(2).unwrap();
    let e = perfcompose_core::model::parse_model(model).unwrap();
    let want =
        perfcompose_core::model::parse_model("-0.8897934098062792 + 0.20168243826499183 * x^(2)")
            .unwrap();
    assert!(e.approx_eq(&want, 1e-9), "{model}");
}

#[test]
fn json_output_follows_the_schema() {
    let o = perfcompose(&["fit", "--json", &peer("text/two_parameter_1.txt")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let m = &v["models"][0];
    assert_eq!(m["callpath"], "reg");
    assert_eq!(m["metric"], "metr");
    assert_eq!(m["parameters"], serde_json::json!(["x", "y"]));
    assert!(m["model"].as_str().unwrap().contains("^("));
    assert!(m["constant"].is_f64());
    for key in ["rss", "smape", "ar2"] {
        assert!(m[key].is_f64(), "{key}: {m}");
    }
    let terms = m["terms"].as_array().unwrap();
    assert!(!terms.is_empty());
    for t in terms {
        assert!(t["coefficient"].is_f64());
        for f in t["factors"].as_array().unwrap() {
            assert!(f["parameter"].is_string());
            // Exact fraction strings, parseable back.
            let e = f["exponent"].as_str().unwrap();
            perfcompose_core::model::parse_rational(e).unwrap();
            assert!(f["log_exponent"].is_i64(), "{f}");
        }
    }
}

#[test]
fn basis_fit_recovers_a_known_cost_function() {
    let mut text = String::from("PARAMETER N\nPARAMETER M\n\n");
    let mut data = String::new();
    for n in [1000, 2000, 4000, 8000] {
        for m in [10, 20, 40] {
            text.push_str(&format!("POINTS ( {n} {m} )\n"));
            let v = 5.0 + 0.25 * n as f64 + 3.0 * m as f64;
            data.push_str(&format!("DATA {v} {v}\n"));
        }
    }
    text.push_str("\nREGION block\nMETRIC time\n");
    text.push_str(&data);
    let file = temp_file("basis.txt", &text);
    let o = perfcompose(&[
        "fit",
        "--json",
        "--basis",
        "1, N, M",
        "--basis",
        "1, N",
        file.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let models = v["models"].as_array().unwrap();
    assert_eq!(models.len(), 2);
    let full = &models[0]["basis"];
    let coef: Vec<f64> = full
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["coefficient"].as_f64().unwrap())
        .collect();
    for (got, want) in coef.iter().zip([5.0, 0.25, 3.0]) {
        assert!((got - want).abs() < 1e-6 * want.max(1.0), "{coef:?}");
    }
    assert!((models[0]["r2"].as_f64().unwrap() - 1.0).abs() < 1e-9);
    assert!(models[1]["r2"].as_f64().unwrap() < 1.0);
}

#[test]
fn modelers_are_listed_and_unknown_ones_rejected() {
    let o = perfcompose(&["fit", "--list-modelers"]);
    assert!(o.status.success());
    let out = stdout(&o);
    assert!(
        out.contains("perfcompose (default)") && out.contains("extrap"),
        "{out}"
    );
    let o = perfcompose(&[
        "fit",
        "--modeler",
        "nope",
        &peer("text/one_parameter_1.txt"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown modeler `nope`"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn bad_input_is_a_clear_error_with_status_2() {
    let negative = temp_file(
        "neg.txt",
        "PARAMETER x\nPOINTS ( 1 ) ( 2 )\nREGION r\nMETRIC t\nDATA 1 1\nDATA -3 1\n",
    );
    let o = perfcompose(&["fit", negative.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("negative") && err.contains("neg.txt"), "{err}");
    let o = perfcompose(&[
        "fit",
        "--basis",
        "1, N +",
        &peer("text/one_parameter_1.txt"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--basis"), "{}", stderr(&o));
    let o = perfcompose(&["fit", "--basis", "1, Q", &peer("text/one_parameter_1.txt")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("`Q`"), "{}", stderr(&o));
    for bad in ["nan", "-4", "twelve"] {
        let o = perfcompose(&[
            "fit",
            "--modeler",
            "segmented",
            &format!("--breaks={bad}"),
            &peer("text/one_parameter_1.txt"),
        ]);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        assert!(stderr(&o).contains("--breaks"), "{bad}: {}", stderr(&o));
    }
    let o = perfcompose(&[
        "fit",
        "--measure",
        "mode",
        &peer("text/one_parameter_1.txt"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let o = perfcompose(&["fit", "/nonexistent/file.txt"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!stderr(&o).contains("panicked"));
}

#[test]
fn stats_show_standard_errors_and_point_cv() {
    let o = perfcompose(&["fit", "--stats", &peer("text/one_parameter_1.txt")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("adjusted R²") && out.contains(" ± ") && out.contains("CV "),
        "{out}"
    );
}

#[test]
fn segmented_modeler_prints_every_segment() {
    // A block whose cost per element steps between 65,536 and 98,304 elements.
    let mut text = String::from("PARAMETER x\n");
    let xs = [
        1024.0,
        2048.0,
        4096.0,
        8192.0,
        16384.0,
        32768.0,
        65536.0,
        98304.0,
        131072.0,
        163840.0,
        196608.0,
        229376.0,
        262144.0f64,
    ];
    for x in xs {
        text += &format!("POINTS ( {x} )\n");
    }
    text += "REGION inc\nMETRIC time\n";
    for x in xs {
        let v = 40.0 + if x < 80_000.0 { 0.52 } else { 0.60 } * x;
        text += &format!("DATA {} {} {}\n", 0.995 * v, v, 1.005 * v);
    }
    let file = temp_file("step.txt", &text);
    let o = perfcompose(&[
        "fit",
        "--modeler",
        "segmented",
        "--json",
        file.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let model = &v["models"][0];
    assert!(
        model["model"]
            .as_str()
            .unwrap()
            .starts_with("piecewise(x, "),
        "{model}"
    );
    let segments = model["segments"].as_array().unwrap();
    assert_eq!(segments.len(), 2, "{model}");
    assert!(segments[0]["from"].is_null() && segments[1]["to"].is_null());
    assert_eq!(segments[0]["to"], segments[1]["from"]);
    // The top-level constant and terms are the last segment's (large sizes).
    assert_eq!(model["terms"], segments[1]["terms"]);
    let slope = segments[1]["terms"][0]["coefficient"].as_f64().unwrap();
    assert!((slope - 0.6).abs() < 0.01, "{model}");
    // The default modeler keeps one model.
    let o = perfcompose(&["fit", "--json", file.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["models"][0].get("segments").is_none());
    let o = perfcompose(&["fit", "--list-modelers"]);
    assert!(stdout(&o).contains("segmented"));
}
