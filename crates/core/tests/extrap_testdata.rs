//! Every file of Extra-P's own test data (`testdata/peers/extrap/`, copied from Extra-P
//! 4.2.5's repository) is read through format detection, and the result is compared with
//! what Extra-P 4.2.5 itself reports for the same file: parameter names, number of series
//! (callpath, metric), number of coordinates, number of points and of repetitions.
//! Files Extra-P rejects must be rejected too, with a message that names the file.
//!
//! The expectations were produced by `scripts/extrap-inventory.py` (run it with the venv
//! of `scripts/install-extrap` to check them again); this test needs no Python.

use std::path::{Path, PathBuf};

use perfcompose_core::measure::{read_path, Experiment};

enum Expect {
    Ok {
        parameters: &'static [&'static str],
        series: usize,
        coordinates: usize,
        points: usize,
        /// Repetitions, where Extra-P counts them (it does not for files that store
        /// only statistics).
        values: Option<usize>,
    },
    Rejected,
}

fn ok(
    path: &'static str,
    parameters: &'static [&'static str],
    series: usize,
    coordinates: usize,
    points: usize,
    values: Option<usize>,
) -> (&'static str, Expect) {
    (
        path,
        Expect::Ok {
            parameters,
            series,
            coordinates,
            points,
            values,
        },
    )
}

fn rejected(path: &'static str) -> (&'static str, Expect) {
    (path, Expect::Rejected)
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/peers/extrap")
}

/// What Extra-P 4.2.5 reports (scripts/extrap-inventory.py).
fn expectations() -> Vec<(&'static str, Expect)> {
    vec![
        ok(
            "cubeset/allowed_formats",
            &["x", "y", "z"],
            28,
            7,
            196,
            Some(280),
        ),
        ok("cubeset/extra_file", &["x"], 28, 2, 56, Some(56)),
        ok("cubeset/extra_folder", &["x"], 28, 2, 56, Some(56)),
        ok(
            "cubeset/multi_parameter",
            &["x", "y", "z"],
            28,
            27,
            756,
            Some(756),
        ),
        rejected("cubeset/negative_example"), // Extra-P: FileFormatError: Parameters must be the same and in the same order: ['x', 'y', 'z'] is not
        rejected("cubeset/negative_example2"), // Extra-P: FileFormatError: Parameters must be the same and in the same order: ['x', 'y', 'z'] is not
        // Four threads per profile: Extra-P counts one repetition per profile (45) with the
        // statistics over all four locations; we keep the four values (same statistics).
        ok("cubeset/simple_threaded", &["f"], 9, 5, 45, Some(180)),
        ok("cubeset/single_parameter", &["x"], 28, 9, 252, Some(252)),
        ok(
            "experiments/two_parameter3.txt.extra-p",
            &["x", "y"],
            4,
            25,
            100,
            Some(500),
        ),
        ok(
            "input/exp_only_mean_median.extra-p",
            &["x", "y"],
            4,
            25,
            100,
            None,
        ),
        ok("input/experiment_3", &["p"], 4, 5, 20, None),
        ok("input/experiment_3_mp", &["x", "y", "z"], 36, 27, 972, None),
        ok(
            "input/experiment_3_sparse",
            &["x", "y", "z"],
            36,
            27,
            972,
            None,
        ),
        ok(
            "input/experiments_MP/experiment_MP.txt",
            &["p", "n"],
            4,
            25,
            100,
            Some(445),
        ),
        rejected("input/experiments_MP/experiment_MP_neg1.txt"), // Extra-P: InvalidExperimentError: The number of measurements (24) for (Callpath(met1), Metric()) doe
        rejected("input/experiments_MP/experiment_MP_neg2.txt"), // Extra-P: FileFormatError: To many DATA lines (25) for the number of POINTS (25) in line 33.
        ok(
            "input/experiments_SP/experiment2.txt",
            &["p"],
            4,
            5,
            20,
            Some(89),
        ),
        rejected("input/experiments_SP/experiment3_neg.txt"), // Extra-P: InvalidExperimentError: The number of coordinate units of (1000.0,) does not match the num
        ok(
            "input/experiments_SP/experiment4.txt",
            &["p"],
            4,
            5,
            20,
            Some(89),
        ),
        rejected("input/experiments_SP/experiment_neg.txt"), // Extra-P: FileFormatError: This file has no parameters.
        ok("input/input_data_1p.txt", &["x"], 1, 5, 5, Some(25)),
        ok("input/input_data_2p.txt", &["x", "y"], 1, 25, 25, Some(125)),
        ok(
            "input/input_data_3p.txt",
            &["x", "y", "z"],
            1,
            125,
            125,
            Some(625),
        ),
        ok("input/json_test_input.jsonl", &["x"], 1, 5, 5, Some(25)),
        ok(
            "input/json_test_input2.jsonl",
            &["x", "y"],
            1,
            25,
            25,
            Some(125),
        ),
        ok(
            "input/json_test_input3.jsonl",
            &["x", "y", "z"],
            1,
            125,
            125,
            Some(125),
        ),
        ok(
            "input/json_test_input4.jsonl",
            &["t", "s", "a"],
            1,
            125,
            125,
            Some(125),
        ),
        ok(
            "input/json_test_input5.jsonl",
            &["p", "np", "pnp"],
            1,
            125,
            125,
            Some(125),
        ),
        ok(
            "input/json_test_input6.jsonl",
            &["x", "y", "z", "t"],
            1,
            625,
            625,
            Some(625),
        ),
        ok("json/input_1.JSON", &["x"], 1, 5, 5, Some(25)),
        ok(
            "json/input_10.JSON",
            &["x", "y", "z", "t"],
            1,
            625,
            625,
            Some(3125),
        ),
        rejected("json/input_11.JSON"), // Extra-P: InvalidExperimentError: The number of measurements (4) for (Callpath(sweep), Metric(time))
        ok("json/input_12.JSON", &["x", "y"], 1, 25, 25, Some(125)),
        ok("json/input_2.JSON", &["x"], 2, 5, 10, Some(50)),
        ok("json/input_3.JSON", &["x"], 2, 5, 10, Some(50)),
        ok("json/input_4.JSON", &["x"], 4, 5, 20, Some(100)),
        ok("json/input_5.JSON", &["x", "y"], 1, 25, 25, Some(125)),
        ok("json/input_6.JSON", &["x", "y"], 2, 25, 50, Some(250)),
        ok("json/input_7.JSON", &["x", "y"], 2, 25, 50, Some(250)),
        ok("json/input_8.JSON", &["x", "y"], 4, 25, 100, Some(500)),
        ok(
            "json/input_9.JSON",
            &["x", "y", "z"],
            1,
            125,
            125,
            Some(625),
        ),
        ok("json/new/input1.json", &["x"], 1, 5, 5, Some(25)),
        ok("json/new/input2.json", &["x", "y"], 4, 5, 20, Some(60)),
        ok(
            "jsonlines/band_matrix_2p.jsonl",
            &["x", "y"],
            1,
            14,
            14,
            Some(70),
        ),
        ok(
            "jsonlines/complete_matrix_2p.jsonl",
            &["x", "y"],
            1,
            25,
            25,
            Some(125),
        ),
        ok(
            "jsonlines/cross_matrix_2p.jsonl",
            &["x", "y"],
            1,
            9,
            9,
            Some(45),
        ),
        ok(
            "jsonlines/extended1.jsonl",
            &["x", "y"],
            1,
            25,
            25,
            Some(125),
        ),
        ok("jsonlines/extended2.jsonl", &["x", "y"], 1, 9, 9, Some(45)),
        ok(
            "jsonlines/incomplete_matrix_2p.jsonl",
            &["x", "y"],
            1,
            7,
            7,
            Some(35),
        ),
        ok("jsonlines/input_1.jsonl", &["x", "y"], 1, 25, 25, Some(125)),
        ok(
            "jsonlines/matrix_3p.jsonl",
            &["x", "y", "z"],
            1,
            13,
            13,
            Some(15),
        ),
        ok(
            "jsonlines/matrix_3p_bands.jsonl",
            &["x", "y", "z"],
            1,
            17,
            17,
            Some(17),
        ),
        ok(
            "jsonlines/matrix_3p_bands_incomplete.jsonl",
            &["x", "y", "z"],
            1,
            18,
            18,
            Some(18),
        ),
        ok(
            "jsonlines/matrix_4p.jsonl",
            &["a", "b", "c", "d"],
            1,
            17,
            17,
            Some(20),
        ),
        ok("jsonlines/reduced.jsonl", &["x", "y"], 1, 25, 25, Some(125)),
        ok(
            "jsonlines/sparse_matrix_2p.jsonl",
            &["x", "y"],
            1,
            25,
            25,
            Some(125),
        ),
        ok("jsonlines/test1.jsonl", &["x", "y"], 1, 25, 25, Some(125)),
        ok("jsonlines/test2.jsonl", &["p", "n"], 1, 25, 25, Some(125)),
        ok("talpas/talpas_1.txt", &["x"], 1, 5, 5, Some(25)),
        rejected("talpas/talpas_10_neg.txt"), // Extra-P: InvalidExperimentError: The number of measurements (3) for (Callpath(compute), Metric(flop
        ok("talpas/talpas_2.txt", &["x", "y"], 1, 25, 25, Some(125)),
        ok(
            "talpas/talpas_3.txt",
            &["x", "y", "z"],
            1,
            125,
            125,
            Some(125),
        ),
        ok(
            "talpas/talpas_4.txt",
            &["p", "np", "pnp"],
            1,
            125,
            125,
            Some(125),
        ),
        ok(
            "talpas/talpas_5.txt",
            &["x", "y", "z", "t"],
            1,
            625,
            625,
            Some(625),
        ),
        ok("talpas/talpas_6.txt", &["x"], 2, 5, 10, Some(50)),
        ok("talpas/talpas_7.txt", &["x"], 2, 5, 10, Some(50)),
        ok("talpas/talpas_8.txt", &["x"], 4, 5, 20, Some(100)),
        ok("talpas/talpas_9.txt", &["x", "y"], 4, 25, 100, Some(500)),
        ok("text/mpa/1_param_add.txt", &["p"], 1, 5, 5, Some(10)),
        ok("text/mpa/1_param_base.txt", &["p"], 1, 3, 3, Some(6)),
        ok("text/mpa/1_param_base2.txt", &["p"], 1, 4, 4, Some(8)),
        ok("text/mpa/1_param_base3.txt", &["p"], 1, 4, 4, Some(8)),
        ok("text/mpa/1_param_base4.txt", &["p"], 1, 3, 3, Some(6)),
        ok("text/mpa/1_param_base5.txt", &["p"], 1, 3, 3, Some(6)),
        ok("text/mpa/1_param_base6.txt", &["p"], 1, 3, 3, Some(6)),
        ok("text/mpa/1_param_base7.txt", &["p"], 1, 4, 4, Some(8)),
        ok("text/mpa/1_param_base8.txt", &["p"], 1, 4, 4, Some(8)),
        ok("text/mpa/1_param_gpr.txt", &["p"], 1, 6, 6, Some(12)),
        ok("text/mpa/2_param_add.txt", &["p", "n"], 1, 9, 9, Some(18)),
        ok("text/mpa/2_param_add2.txt", &["p", "n"], 3, 9, 27, Some(54)),
        ok("text/mpa/2_param_base.txt", &["p", "n"], 1, 7, 7, Some(14)),
        ok("text/mpa/2_param_base2.txt", &["p", "n"], 1, 7, 7, Some(14)),
        ok("text/mpa/2_param_base3.txt", &["p", "n"], 1, 7, 7, Some(14)),
        ok("text/mpa/2_param_gpr.txt", &["p", "n"], 1, 10, 10, Some(20)),
        ok(
            "text/mpa/2_param_gpr2.txt",
            &["p", "n"],
            3,
            10,
            30,
            Some(60),
        ),
        ok(
            "text/mpa/3_param_add.txt",
            &["p", "n", "s"],
            1,
            13,
            13,
            Some(26),
        ),
        ok(
            "text/mpa/3_param_base.txt",
            &["p", "n", "s"],
            1,
            10,
            10,
            Some(20),
        ),
        ok(
            "text/mpa/3_param_gpr.txt",
            &["p", "n", "s"],
            1,
            14,
            14,
            Some(28),
        ),
        ok(
            "text/mpa/4_param_add.txt",
            &["p", "n", "s", "o"],
            1,
            17,
            17,
            Some(34),
        ),
        ok(
            "text/mpa/4_param_base.txt",
            &["p", "n", "s", "o"],
            1,
            13,
            13,
            Some(26),
        ),
        ok(
            "text/mpa/4_param_gpr.txt",
            &["p", "n", "s", "o"],
            1,
            18,
            18,
            Some(36),
        ),
        ok("text/mpa/gpr_test_data_1.txt", &["x"], 3, 4, 12, Some(64)),
        ok("text/mpa/gpr_test_data_2.txt", &["x"], 3, 5, 15, Some(80)),
        ok(
            "text/mpa/relearn_data.txt",
            &["p", "n"],
            14,
            25,
            350,
            Some(700),
        ),
        ok("text/one_parameter_1.txt", &["x"], 1, 5, 5, Some(30)),
        ok("text/one_parameter_2.txt", &["x"], 15, 5, 75, Some(375)),
        ok("text/one_parameter_3.txt", &["x"], 2, 5, 10, Some(50)),
        ok("text/one_parameter_4.txt", &["x"], 2, 5, 10, Some(50)),
        ok("text/one_parameter_5.txt", &["x"], 4, 5, 20, Some(100)),
        ok("text/one_parameter_6.txt", &["p"], 4, 5, 20, Some(89)),
        ok("text/one_parameter_7.txt", &["p"], 1, 5, 5, Some(25)),
        ok(
            "text/one_parameter_segmented_1.txt",
            &["p"],
            1,
            10,
            10,
            Some(50),
        ),
        ok(
            "text/one_parameter_segmented_2.txt",
            &["p"],
            1,
            10,
            10,
            Some(50),
        ),
        ok(
            "text/one_parameter_segmented_3.txt",
            &["p"],
            1,
            10,
            10,
            Some(50),
        ),
        ok(
            "text/one_parameter_segmented_4.txt",
            &["p"],
            2,
            10,
            20,
            Some(100),
        ),
        ok(
            "text/one_parameter_segmented_5.txt",
            &["p"],
            3,
            9,
            27,
            Some(79),
        ),
        ok(
            "text/one_parameter_segmented_6.txt",
            &["p"],
            2,
            10,
            20,
            Some(52),
        ),
        ok(
            "text/strong_scaling/one_parameter_1.txt",
            &["x"],
            1,
            5,
            5,
            Some(30),
        ),
        ok(
            "text/strong_scaling/one_parameter_2.txt",
            &["x"],
            15,
            5,
            75,
            Some(375),
        ),
        ok(
            "text/strong_scaling/one_parameter_6.txt",
            &["p"],
            4,
            5,
            20,
            Some(89),
        ),
        ok(
            "text/strong_scaling/two_parameter_1.txt",
            &["x", "y"],
            1,
            25,
            25,
            Some(125),
        ),
        ok(
            "text/strong_scaling/two_parameter_2.txt",
            &["x", "y"],
            1,
            25,
            25,
            Some(125),
        ),
        ok(
            "text/strong_scaling/two_parameter_7.txt",
            &["x", "y"],
            1,
            25,
            25,
            Some(125),
        ),
        ok(
            "text/three_parameter_1.txt",
            &["x", "y", "z"],
            1,
            125,
            125,
            Some(625),
        ),
        ok(
            "text/three_parameter_2.txt",
            &["x", "y", "z"],
            1,
            125,
            125,
            Some(625),
        ),
        ok(
            "text/three_parameter_3.txt",
            &["x", "y", "z"],
            2,
            125,
            250,
            Some(1250),
        ),
        ok(
            "text/two_parameter_1.txt",
            &["x", "y"],
            1,
            25,
            25,
            Some(125),
        ),
        ok(
            "text/two_parameter_2.txt",
            &["x", "y"],
            1,
            25,
            25,
            Some(125),
        ),
        ok(
            "text/two_parameter_3.txt",
            &["x", "y"],
            4,
            25,
            100,
            Some(500),
        ),
        ok("text/two_parameter_4.txt", &["p", "q"], 4, 5, 20, Some(89)),
        ok("text/two_parameter_5.txt", &["p", "s"], 1, 25, 25, Some(25)),
        ok("text/two_parameter_6.txt", &["p", "s"], 1, 25, 25, Some(25)),
        ok("text/two_parameter_7.txt", &["p", "s"], 3, 25, 75, Some(75)),
        ok(
            "text/two_parameter_segmented_1.txt",
            &["x", "y"],
            1,
            60,
            60,
            Some(300),
        ),
    ]
}

/// Files under the test data that are not inputs of their own: helpers, and the members
/// of CUBE directories (which are read as a whole).
fn is_input(rel: &str) -> bool {
    !(rel.starts_with("cubeset/") || rel.ends_with(".py") || rel == "mpi_data.csv")
}

fn check(rel: &str, exp: &Experiment, expect: &Expect) -> Result<(), String> {
    let Expect::Ok {
        parameters,
        series,
        coordinates,
        points,
        values,
    } = expect
    else {
        return Err(format!("{rel}: Extra-P rejects this file, we read it"));
    };
    let got = (
        exp.parameters.clone(),
        exp.series.len(),
        exp.coordinates().len(),
        exp.point_count(),
    );
    let want = (
        parameters.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        *series,
        *coordinates,
        *points,
    );
    if got != want {
        return Err(format!("{rel}: got {got:?}, Extra-P reports {want:?}"));
    }
    if let Some(v) = values {
        if exp.value_count() != *v {
            return Err(format!(
                "{rel}: {} repetitions, Extra-P reports {v}",
                exp.value_count()
            ));
        }
    }
    Ok(())
}

#[test]
fn every_file_of_extrap_test_data_reads_as_extrap_reads_it() {
    let root = root();
    let mut failures = Vec::new();
    for (rel, expect) in expectations() {
        let path = root.join(rel);
        match (read_path(&path), &expect) {
            (Ok(exp), _) => {
                if let Err(e) = check(rel, &exp, &expect) {
                    failures.push(e);
                }
            }
            (Err(d), Expect::Rejected) => {
                let shown = d.to_string();
                if !shown.contains(&path.display().to_string()) || d.message.is_empty() {
                    failures.push(format!("{rel}: rejection does not name the file: {shown}"));
                }
            }
            (Err(d), Expect::Ok { .. }) => failures.push(format!("{rel}: {}", d.render())),
        }
    }
    assert!(
        failures.is_empty(),
        "{} problems:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_expectations_cover_every_input_file() {
    let listed: Vec<&str> = expectations().iter().map(|(p, _)| *p).collect();
    let mut missing = Vec::new();
    let mut stack = vec![root()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path
                .strip_prefix(root())
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if is_input(&rel) && !listed.contains(&rel.as_str()) {
                missing.push(rel);
            }
        }
    }
    assert!(
        missing.is_empty(),
        "files without an expectation: {missing:?}"
    );
}

/// Relative tolerance for statistics compared with Extra-P's printout (9 digits).
const STAT_TOL: f64 = 1e-8;

#[test]
fn statistics_match_what_extrap_computes() {
    use perfcompose_core::measure::SeriesKey;
    // (file, callpath, metric, coordinate, mean, median, minimum, maximum), printed by
    // Extra-P 4.2.5 for the same files.
    type Case<'a> = (&'a str, &'a str, &'a str, &'a [f64], [f64; 4]);
    let cases: &[Case] = &[
        (
            "cubeset/simple_threaded",
            "main",
            "time",
            &[1.0],
            [0.7, 0.65, 0.0, 1.5],
        ),
        (
            "cubeset/single_parameter",
            "main",
            "max_time",
            &[1.0],
            [3.8177e-05; 4],
        ),
        (
            "input/experiment_3_mp",
            "main",
            "max_time",
            &[1.0, 1.0, 10.0],
            [2.0669e-05; 4],
        ),
        (
            "experiments/two_parameter3.txt.extra-p",
            "merge",
            "time",
            &[20.0, 2.0],
            [81.0551923, 80.7705583, 79.8489491, 82.3148349],
        ),
    ];
    for (file, callpath, metric, coord, want) in cases {
        let exp = read_path(root().join(file)).unwrap();
        let points = &exp.series[&SeriesKey::new(*callpath, *metric)];
        let p = points.iter().find(|p| p.coordinate == *coord).unwrap();
        let got = [p.mean(), p.median(), p.minimum(), p.maximum()];
        for (g, w) in got.iter().zip(want) {
            assert!(
                (g - w).abs() <= STAT_TOL * w.abs().max(1e-12),
                "{file} {callpath}/{metric} {coord:?}: got {got:?}, Extra-P {want:?}"
            );
        }
    }
}
