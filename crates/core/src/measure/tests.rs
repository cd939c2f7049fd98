//! Unit tests of the readers and writers: accepted forms, the exact position and wording
//! of errors on bad input, writer → reader round trips, and property tests that random
//! and mutated inputs never panic.

use proptest::prelude::*;

use super::*;

fn read(format: Format, src: &str) -> Result<Experiment, Diagnostic> {
    read_str(format, "in", src, &ReadOptions::default())
}

fn ok(format: Format, src: &str) -> Experiment {
    match read(format, src) {
        Ok(e) => e,
        Err(d) => panic!("unexpected error:\n{}", d.render()),
    }
}

/// The error's (line, column) and message.
fn err(format: Format, src: &str) -> (usize, usize, String) {
    match read(format, src) {
        Ok(e) => panic!("expected an error, read {e:?}"),
        Err(d) => {
            let (l, c) = d.line_col();
            (l, c, d.message)
        }
    }
}

fn key(c: &str, m: &str) -> SeriesKey {
    SeriesKey::new(c, m)
}

const ONE_PARAM: &str = "\
# a comment
PARAMETER x

POINTS ( 20 ) ( 30 )
POINTS ( 40 )
REGION main->solve
METRIC time
DATA 1 2 3
DATA 4 5
DATA 6
METRIC flops
DATA 10
DATA 20
DATA 30
";

#[test]
fn text_reads_regions_metrics_and_repetitions() {
    let e = ok(Format::Text, ONE_PARAM);
    assert_eq!(e.parameters, vec!["x"]);
    assert_eq!(e.series.len(), 2);
    let time = &e.series[&key("main->solve", "time")];
    assert_eq!(time.len(), 3);
    assert_eq!(time[0].coordinate, vec![20.0]);
    assert_eq!(time[0].values, vec![1.0, 2.0, 3.0]);
    assert_eq!(time[2].coordinate, vec![40.0]);
    assert_eq!(e.series[&key("main->solve", "flops")][1].values, vec![20.0]);
    // Spans point at the DATA lines, for the modelers' messages.
    let d = e.diagnostic(time[1].span, "x");
    assert_eq!(d.line_col(), (9, 1));
    assert_eq!(
        e.series_span(&key("main->solve", "time"))
            .map(|s| line_col(ONE_PARAM, s.start).0),
        Some(8)
    );
}

use crate::diag::line_col;

#[test]
fn text_accepts_flat_points_tabs_several_parameters_per_line_and_a_bom() {
    let e = ok(
        Format::Text,
        "\u{feff}PARAMETER p\nPOINTS 1000 2000\nREGION r\nDATA\t1\t2\nDATA 3\n",
    );
    assert_eq!(e.series[&key("r", "")].len(), 2);
    let e = ok(
        Format::Text,
        "PARAMETER\tp n\nPOINTS\t(\t1\t2\t)\t(1 3)\n  REGION a  b\nDATA 1\nDATA 2\n",
    );
    assert_eq!(e.parameters, vec!["p", "n"]);
    assert_eq!(e.series[&key("a b", "")][1].coordinate, vec![1.0, 3.0]);
}

#[test]
fn text_errors_name_line_and_column() {
    let cases: &[(&str, (usize, usize), &str)] = &[
        ("POINTS 1 2\n", (1, 1), "POINTS before any PARAMETER"),
        (
            "PARAMETER x\nPOINTS 1 2\nREGION r\nDATA 1\n",
            (4, 1),
            "has 1 DATA lines but POINTS lists 2 points",
        ),
        (
            "PARAMETER x\nPOINTS 1\nREGION r\nDATA 1\nDATA 2\n",
            (5, 1),
            "more DATA lines than POINTS (1)",
        ),
        (
            "PARAMETER x\nPOINTS 1 1\n",
            (2, 10),
            "point (x=1) is listed twice (first on line 2)",
        ),
        (
            "PARAMETER x y\nPOINTS (1 2) (3)\n",
            (2, 14),
            "point has 1 value(s) but there are 2 parameters",
        ),
        (
            "PARAMETER x y\nPOINTS 1 2\n",
            (2, 8),
            "point has 1 value but there are 2 parameters",
        ),
        ("PARAMETER x y\nPOINTS (1 2\n", (2, 8), "never closed"),
        ("PARAMETER x\nPOINTS (1) 2\n", (2, 12), "expected `(`"),
        (
            "PARAMETER x\nPOINTS 1\nPARAMETER y\n",
            (3, 1),
            "PARAMETER after POINTS",
        ),
        ("PARAMETER a b c d e\n", (1, 19), "more than 4 parameters"),
        ("PARAMETER x x\n", (1, 13), "declared twice"),
        (
            "PARAMETER x\nPOINTS 1\nDATA 1\n",
            (3, 1),
            "DATA before any REGION",
        ),
        (
            "PARAMETER x\nREGION r\nDATA 1\n",
            (3, 1),
            "DATA before any POINTS",
        ),
        (
            "PARAMETER x\nPOINTS 1\nREGION r\nDATA 1 nan\n",
            (4, 8),
            "not a number (NaN)",
        ),
        (
            "PARAMETER x\nPOINTS 1\nREGION r\nDATA 1 -2\n",
            (4, 8),
            "negative measured value -2",
        ),
        (
            "PARAMETER x\nPOINTS 1\nREGION r\nDATA inf\n",
            (4, 6),
            "infinite",
        ),
        (
            "PARAMETER x\nPOINTS 1\nREGION r\nDATA 1,5\n",
            (4, 6),
            "expected a number as a measured value, found `1,5`",
        ),
        (
            "PARAMETER x\nPOINTS 1\nREGION r\nDATA\n",
            (4, 1),
            "DATA line holds no values",
        ),
        (
            "PARAMETER x\nPOINTS 1\nREGION r\nDATA 1\nREGION s\nDATA 2\nREGION r\nDATA 3\n",
            (8, 1),
            "a second block of DATA for `r / <empty>` (the first starts on line 4)",
        ),
        (
            "PARAMETER x\nPOINTS 1\nREGION r\nDATA 1\nPOINTS 2\n",
            (5, 1),
            "POINTS after DATA",
        ),
        (
            "PARAMETER x\nPOINTS 1\nregion r\n",
            (3, 1),
            "unknown field `region`",
        ),
        (
            "PARAMETER x\nPOINTS 1\nEXPERIMENT e\n",
            (3, 1),
            "unknown field `EXPERIMENT`",
        ),
        (
            "PARAMETER x\nPOINTS 1\nREGION\n",
            (3, 1),
            "REGION needs a region name",
        ),
        ("PARAMETER x\nPOINTS 1\n", (1, 1), "no DATA lines"),
        ("", (1, 1), "declares no parameters"),
        ("# only a comment\n\n", (1, 1), "declares no parameters"),
        (
            "PARAMETER x\nPOINTS 1 2\nREGION r\nDATA 1\nDATA 2\nREGION s\nDATA 1\nREGION t\n",
            (7, 1),
            "`s / <empty>` has 1 DATA lines but POINTS lists 2 points (none for (x=2))",
        ),
    ];
    for (src, at, msg) in cases {
        let (l, c, m) = err(Format::Text, src);
        assert!(m.contains(msg), "{src:?}: message `{m}` lacks `{msg}`");
        assert_eq!((l, c), *at, "{src:?}: {m}");
    }
}

#[test]
fn lower_case_keywords_get_a_hint() {
    let d = read(Format::Text, "parameter x\n").unwrap_err();
    assert_eq!(
        d.hint.as_deref(),
        Some("keywords are upper-case: `PARAMETER`")
    );
}

#[test]
fn negative_values_can_be_allowed() {
    let src = "PARAMETER x\nPOINTS 1\nREGION r\nDATA -1\n";
    let opts = ReadOptions {
        allow_negative: true,
        ..ReadOptions::default()
    };
    let e = read_str(Format::Text, "in", src, &opts).unwrap();
    assert_eq!(e.series[&key("r", "")][0].values, vec![-1.0]);
}

#[test]
fn empty_blocks_declare_no_series() {
    // Extra-P accepts a REGION without DATA; it then has no measurements.
    let e = ok(
        Format::Text,
        "PARAMETER x\nPOINTS 1\nREGION a\nREGION b\nDATA 1\n",
    );
    assert_eq!(e.series.keys().collect::<Vec<_>>(), vec![&key("b", "")]);
}

#[test]
fn zeros_and_equal_values_are_data_not_errors() {
    // The modelers decide what to fit to them (a constant); the readers keep them.
    let e = ok(
        Format::Text,
        "PARAMETER x\nPOINTS 1 2\nREGION r\nDATA 0 0\nDATA 0\n",
    );
    assert_eq!(e.series[&key("r", "")][0].mean(), 0.0);
    assert_eq!(e.series[&key("r", "")][0].cv(), None);
}

#[test]
fn jsonl_defaults_lists_merging_and_parameter_order() {
    let src = r#"{"params":{"y":1,"x":20},"value":1}

{"params":{"x":20,"y":1},"value":[2,3]}
{"params":{"y":1,"x":20},"callpath":"c","metric":"m","value":4,"note":"ignored"}
{"params":{"x":20,"y":1},"callpath":"c","metric":"m","value":5}
"#;
    let e = ok(Format::JsonLines, src);
    assert_eq!(e.parameters, vec!["y", "x"]);
    assert_eq!(
        e.series[&key("<root>", "<default>")][0].values,
        vec![1.0, 2.0, 3.0]
    );
    assert_eq!(e.series[&key("<root>", "<default>")].len(), 1);
    assert_eq!(e.series[&key("c", "m")][0].values, vec![4.0, 5.0]);
    // Two series at different points: each keeps its own (Extra-P's completeness rule
    // holds in every other format; Talpas below).
    let e = ok(
        Format::JsonLines,
        "{\"params\":{\"x\":1},\"value\":1}\n{\"params\":{\"x\":2},\"metric\":\"m\",\"value\":1}\n",
    );
    assert_eq!(e.series[&key("<root>", "<default>")].len(), 1);
    assert_eq!(e.series[&key("<root>", "m")][0].coordinate, vec![2.0]);
    let talpas = "{\"parameters\":{\"x\":1};\"callpath\":\"a\";\"metric\":\"m\";\"value\":1}\n{\"parameters\":{\"x\":2};\"callpath\":\"b\";\"metric\":\"m\";\"value\":1}\n";
    let (l, c, m) = err(Format::Talpas, talpas);
    assert_eq!((l, c), (1, 1), "{m}");
    assert!(m.contains("series `a / m` has 1 of the experiment's 2 points: none at (x=2), which line 2 introduces"), "{m}");
}

#[test]
fn jsonl_errors_name_line_and_column() {
    let cases: &[(&str, (usize, usize), &str)] = &[
        (
            "{\"params\":{\"x\":1},\"value\":1}\n{\"params\":{\"x\":1,\"y\":2},\"value\":1}\n",
            (2, 22),
            "unknown parameter `y` (line 1 has x)",
        ),
        (
            "{\"params\":{\"x\":1,\"y\":2},\"value\":1}\n{\"params\":{\"x\":1},\"value\":1}\n",
            (2, 11),
            "parameter `y` is missing (line 1 has x, y)",
        ),
        (
            "{\"params\":{\"x\":1},\"value\":1}\n{\"params\":{\"x\":1},\"value\":}\n",
            (2, 27),
            "invalid JSON",
        ),
        ("{\"params\":{\"x\":1}}\n", (1, 1), "line has no `value`"),
        ("{\"value\":1}\n", (1, 1), "line has no `params`"),
        (
            "{\"params\":{\"x\":\"a\"},\"value\":1}\n",
            (1, 16),
            "expected a parameter value (a number), found `\"a\"`",
        ),
        (
            "{\"params\":{\"x\":1},\"value\":[1,-2]}\n",
            (1, 30),
            "negative measured value -2",
        ),
        (
            "{\"params\":{\"x\":1},\"value\":[]}\n",
            (1, 27),
            "empty list of values",
        ),
        (
            "{\"params\":{\"x\":1},\"value\":1e999}\n",
            (1, 27),
            "a measured value",
        ),
        (
            "{\"params\":{\"x\":1},\"callpath\":3,\"value\":1}\n",
            (1, 30),
            "expected the callpath as a string",
        ),
        (
            "{\"params\":{},\"value\":1}\n",
            (1, 11),
            "no parameter values",
        ),
        (
            "{\"params\":{\"x\":1,\"x\":2},\"value\":1}\n",
            (1, 23),
            "duplicate key `x`",
        ),
        ("[1,2]\n", (1, 2), "invalid JSON"),
        ("\n\n", (1, 1), "the input holds no measurements"),
    ];
    for (src, at, msg) in cases {
        let (l, c, m) = err(Format::JsonLines, src);
        assert!(m.contains(msg), "{src:?}: message `{m}` lacks `{msg}`");
        assert_eq!((l, c), *at, "{src:?}: {m}");
    }
}

#[test]
fn talpas_semicolons_inside_strings_survive() {
    let src = "{\"parameters\":{\"x\":1};\"metric\":\"a;b\";\"callpath\":\"f;g\";\"value\":2}\n";
    let e = ok(Format::Talpas, src);
    assert!(e.series.contains_key(&key("f;g", "a;b")));
    let (l, c, m) = err(Format::Talpas, "{\"parameters\":{\"x\":1};\"value\":2}\n");
    assert_eq!((l, c), (1, 1));
    assert!(m.contains("no `callpath`"), "{m}");
    let d = read(Format::Talpas, "{\"params\":{\"x\":1};\"value\":2}\n").unwrap_err();
    assert!(d.hint.unwrap().contains("not `params`"));
}

#[test]
fn extrap_json_both_layouts() {
    let id_based = r#"{"parameters":[{"id":2,"name":"y"},{"id":1,"name":"x"}],
 "callpaths":[{"id":1,"name":"c"}], "metrics":[{"id":7,"name":"time"}],
 "coordinates":[{"id":1,"parameter_value_pairs":[{"parameter_id":2,"parameter_value":5},{"parameter_id":1,"parameter_value":4}]}],
 "measurements":[{"callpath_id":1,"coordinate_id":1,"metric_id":7,"value":2.5,"id":1},
                 {"callpath_id":1,"coordinate_id":1,"metric_id":7,"value":3.5,"id":2}]}"#;
    let e = ok(Format::Json, id_based);
    assert_eq!(e.parameters, vec!["x", "y"]);
    let p = &e.series[&key("c", "time")][0];
    assert_eq!(
        (p.coordinate.clone(), p.values.clone()),
        (vec![4.0, 5.0], vec![2.5, 3.5])
    );

    let nested = r#"{"parameters":["x"],"measurements":{"c":{"time":[{"point":[4],"values":[1,2]},{"point":8,"values":[3]}]}}}"#;
    let e = ok(Format::Json, nested);
    assert_eq!(e.series[&key("c", "time")][1].coordinate, vec![8.0]);

    // Lines of objects fall back to JSON Lines, as in Extra-P.
    let e = ok(
        Format::Json,
        "{\"params\":{\"x\":1},\"value\":1}\n{\"params\":{\"x\":2},\"value\":1}\n",
    );
    assert_eq!(e.point_count(), 2);
}

#[test]
fn extrap_json_errors_are_located() {
    let bad_id = r#"{"parameters":[{"id":1,"name":"x"}],"callpaths":[{"id":1,"name":"c"}],"metrics":[{"id":1,"name":"t"}],
"coordinates":[{"id":1,"parameter_value_pairs":[{"parameter_id":1,"parameter_value":4}]}],
"measurements":[
  {"callpath_id":1,"coordinate_id":9,"metric_id":1,"value":2.5}]}"#;
    let (l, c, m) = err(Format::Json, bad_id);
    assert_eq!(
        (l, c, m.as_str()),
        (4, 3, "coordinate id 9 is not declared")
    );
    let missing = bad_id.replace("\"value\":2.5", "\"valu\":2.5");
    let (l, _, m) = err(Format::Json, &missing);
    assert_eq!(l, 4);
    assert!(m.contains("missing field `value`"), "{m}");
    let (l, c, m) = err(Format::Json, "{\"parameters\":[\"x\"]}");
    assert_eq!((l, c), (1, 1));
    assert!(m.contains("no `measurements`"), "{m}");
    let (l, c, m) = err(Format::Json, "{\"parameters\":[\"x\"],\n\"measurements\":{\"c\":{\"t\":[{\"point\":[1,2],\"values\":[1]}]}}}");
    assert_eq!((l, c), (2, 36));
    assert!(
        m.contains("point has 2 value(s) but there are 1 parameters"),
        "{m}"
    );
}

#[test]
fn csv_by_header_convention() {
    let src = "# measured on node 3\ncallpath,metric,p,n,value,value2\nmain,time,16,1000,1.5,1.6\nmain,time,16,1000,1.4,\nmain,time,32,1000,2.5,2.6\n";
    let e = ok(Format::Csv, src);
    assert_eq!(e.parameters, vec!["p", "n"]);
    let pts = &e.series[&key("main", "time")];
    assert_eq!(pts[0].values, vec![1.5, 1.6, 1.4]);
    assert_eq!(pts.len(), 2);
    let e = ok(Format::Csv, "x;value\n1;2\n2;3\n");
    assert_eq!(e.series[&key("<root>", "<default>")].len(), 2);
    let e = ok(Format::Csv, "x\ty\tvalue\n1\t1\t2\n");
    assert_eq!(e.parameters, vec!["x", "y"]);
}

#[test]
fn csv_errors_are_located() {
    let cases: &[(&str, (usize, usize), &str)] = &[
        (
            "x,value\n1,2\nfoo,3\n",
            (3, 1),
            "expected a number for parameter `x`, found `foo`",
        ),
        (
            "x,value\n1,2\n2, -3\n",
            (3, 4),
            "negative measured value -3",
        ),
        (
            "x,value\n1,2\n2\n",
            (3, 1),
            "row has 1 fields but the header has 2",
        ),
        ("x,value\n1,\n", (2, 1), "row has no value"),
        ("x,y\n1,2\n", (1, 1), "no value column"),
        ("value\n1\n", (1, 1), "no parameter column"),
        (
            "mpi,x,value\nIntel,1,2\n",
            (2, 1),
            "expected a number for parameter `mpi`, found `Intel`",
        ),
    ];
    for (src, at, msg) in cases {
        let (l, c, m) = err(Format::Csv, src);
        assert!(m.contains(msg), "{src:?}: message `{m}` lacks `{msg}`");
        assert_eq!((l, c), *at, "{src:?}: {m}");
    }
}

#[test]
fn csv_with_explicit_columns_reads_extrap_mpi_data() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/peers/extrap/mpi_data.csv");
    let opts = ReadOptions {
        format: Some(Format::Csv),
        csv: csv::CsvOptions {
            parameters: vec!["Ranks".into()],
            values: vec!["mean".into()],
            callpath: vec!["mpi".into(), "variable".into()],
            ..Default::default()
        },
        ..Default::default()
    };
    let e = read_path_with(&path, &opts).unwrap();
    assert_eq!(e.parameters, vec!["Ranks"]);
    // 2 MPI libraries × 7 operations, each at 32..512 ranks.
    assert_eq!(e.series.len(), 14);
    let barrier = &e.series[&key("IntelMPI->MPI_Barrier", "<default>")];
    assert_eq!(barrier.len(), 5);
    assert_eq!(barrier[0].coordinate, vec![32.0]);
    assert_eq!(barrier[0].values, vec![13.2596784375]);
    // By convention the text columns are rejected with a hint.
    let d = read_path(&path).unwrap_err();
    assert_eq!(d.message, "no value column in the header");
    assert!(d.hint.unwrap().contains("explicitly"));
}

#[test]
fn formats_are_detected_by_extension_and_content() {
    use std::path::Path;
    let d = |name: &str, head: &str| Format::detect(Path::new(name), head.as_bytes());
    assert_eq!(d("a.txt", "# c\nPARAMETER x\n"), Format::Text);
    assert_eq!(
        d("a.txt", "{\"parameters\":{\"x\":1};\"value\":1}"),
        Format::Talpas
    );
    assert_eq!(
        d("a.txt", "{\"params\":{\"x\":1},\"value\":1}"),
        Format::JsonLines
    );
    assert_eq!(d("a", "x,value\n1,2\n"), Format::Csv);
    assert_eq!(d("a.JSON", "{"), Format::Json);
    assert_eq!(d("a.jsonl", ""), Format::JsonLines);
    assert_eq!(d("a.csv", ""), Format::Csv);
    assert_eq!(d("a.bin", "PK\u{3}\u{4}rest"), Format::ExtraP);
    for f in Format::ALL {
        assert_eq!(f.name().parse::<Format>().unwrap(), f);
    }
    assert!("yaml"
        .parse::<Format>()
        .unwrap_err()
        .contains("known formats"));
}

#[test]
fn missing_files_and_binary_garbage_are_errors() {
    let d = read_path("/nonexistent/file.txt").unwrap_err();
    assert!(d
        .to_string()
        .starts_with("/nonexistent/file.txt:1:1: cannot read the file"));
    let dir = std::env::temp_dir().join(format!("perfcompose-measure-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("x.extra-p");
    std::fs::write(&f, b"PK\x03\x04garbage").unwrap();
    assert!(read_path(&f).unwrap_err().message.contains("zip"));
    let f = dir.join("x.txt");
    std::fs::write(&f, b"PARAMETER x\n\xff\xfe").unwrap();
    let d = read_path(&f).unwrap_err();
    assert_eq!(
        (d.line_col(), d.message.as_str()),
        ((2, 1), "the file is not valid UTF-8 text")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

fn sample() -> Experiment {
    let mut e = Experiment::new(vec!["p".into(), "n".into()]);
    for (c, m) in [
        ("main->solve", "time"),
        ("main", "time"),
        ("main", "bytes sent"),
    ] {
        for p in [1.0, 2.0, 4.0] {
            for n in [10.0, 1e6] {
                e.push(key(c, m), vec![p, n], vec![p * n * 1.5, 0.1 + p, 1e-9 * n]);
            }
        }
    }
    e
}

#[test]
fn text_writer_round_trips() {
    let e = sample();
    let out = text::write(&e).unwrap();
    let back = ok(Format::Text, &out);
    assert!(back.same_data(&e), "{out}");
    assert!(
        out.starts_with("PARAMETER p\nPARAMETER n\nPOINTS ( 1.0 10.0 )\n"),
        "{out}"
    );
}

#[test]
fn jsonl_writer_round_trips() {
    let e = sample();
    let out = jsonl::write(&e).unwrap();
    let back = ok(Format::JsonLines, &out);
    assert!(back.same_data(&e), "{out}");
    assert!(out.lines().next().unwrap().starts_with(
        r#"{"params":{"p":1,"n":10},"callpath":"main","metric":"bytes sent","value":"#
    ));
}

#[test]
fn writers_refuse_what_the_format_cannot_hold() {
    let mut e = Experiment::new(vec![
        "a".into(),
        "b".into(),
        "c".into(),
        "d".into(),
        "e".into(),
    ]);
    e.push(key("r", "m"), vec![1.0; 5], vec![1.0]);
    assert!(text::write(&e).unwrap_err().0.contains("1 to 4 parameters"));
    let mut e = Experiment::new(vec!["x".into()]);
    e.push(key("r", "m"), vec![1.0], vec![1.0]);
    e.push(key("s", "m"), vec![2.0], vec![1.0]);
    assert!(text::write(&e).unwrap_err().0.contains("no point at (x=2)"));
    let mut e = Experiment::new(vec!["x".into()]);
    e.push(key("a\nb", "m"), vec![1.0], vec![1.0]);
    assert!(text::write(&e).unwrap_err().0.contains("cannot be written"));
    let mut e = Experiment::new(vec!["x".into()]);
    e.series.insert(
        key("r", "m"),
        vec![Point::from_summary(vec![1.0], Summary::of(&[1.0]).unwrap())],
    );
    assert!(text::write(&e).unwrap_err().0.contains("only statistics"));
    assert!(jsonl::write(&e).unwrap_err().0.contains("only statistics"));
}

#[test]
fn point_statistics() {
    let p = Point::new(vec![1.0], vec![3.0, 1.0, 2.0, 10.0]);
    assert_eq!(p.mean(), 4.0);
    assert_eq!(p.median(), 2.5);
    assert_eq!(p.minimum(), 1.0);
    assert_eq!(p.maximum(), 10.0);
    assert_eq!(p.repetitions(), 4);
    let s = Summary {
        mean: 2.0,
        median: 1.5,
        minimum: 1.0,
        maximum: 4.0,
        std: 1.0,
        repetitions: 5,
    };
    let q = Point::from_summary(vec![1.0], s);
    assert_eq!(q.reduce(Measure::Median), 1.5);
    assert_eq!(q.repetitions(), 5);
    assert_eq!(q.cv(), Some((5.0f64 / 4.0).sqrt() / 2.0));
}

// ---- property tests: round trips, and no panic on any input ------------------------

/// The number of cases: `default`, or `PROPTEST_CASES` when set (for long local fuzzing
/// runs: `PROPTEST_CASES=100000 cargo test -p perfcompose-core --lib measure::tests`).
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn experiment_strategy() -> impl Strategy<Value = Experiment> {
    let names = prop::sample::subsequence(vec!["x", "y", "p", "n"], 1..=4);
    let callpaths = prop::sample::subsequence(vec!["main", "main->a", "b c", "é->ü"], 1..=3);
    let metrics = prop::sample::subsequence(vec!["time", "visits"], 1..=2);
    (names, callpaths, metrics, 1usize..5, any::<u64>()).prop_map(
        |(names, cps, ms, npoints, seed)| {
            let dims = names.len();
            let mut e = Experiment::new(names.iter().map(|s| s.to_string()).collect());
            let mut state = seed | 1;
            let mut next = || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state
            };
            let coords: Vec<Vec<f64>> = (0..npoints)
                .map(|i| {
                    (0..dims)
                        .map(|d| (i * 7 + d) as f64 + (next() % 1000) as f64 / 8.0)
                        .collect()
                })
                .collect();
            for c in &cps {
                for m in &ms {
                    for coord in &coords {
                        let reps = 1 + (next() % 4) as usize;
                        let vals = (0..reps)
                            .map(|_| f64::from_bits(next() >> 2).abs().min(1e300))
                            .map(|v| if v.is_finite() { v } else { 1.0 })
                            .collect();
                        e.push(key(c, m), coord.clone(), vals);
                    }
                }
            }
            e
        },
    )
}

/// Readers must answer every input with a value or a located error, never a panic, and
/// an error's span must lie inside the source.
fn no_panic(format: Format, src: &str) {
    if let Err(d) = read(format, src) {
        assert!(
            d.span.start <= src.len() && d.span.end <= src.len() + 1,
            "{format}: span {:?} outside {} bytes",
            d.span,
            src.len()
        );
        assert!(!d.message.is_empty());
        let _ = d.render();
    }
}

fn corpus() -> Vec<(Format, String)> {
    let e = sample();
    vec![
        (Format::Text, text::write(&e).unwrap()),
        (Format::Text, ONE_PARAM.to_string()),
        (Format::JsonLines, jsonl::write(&e).unwrap()),
        (Format::Talpas, "{\"parameters\":{\"x\":1};\"metric\":\"a\";\"callpath\":\"f\";\"value\":2}\n".into()),
        (Format::Json, r#"{"parameters":["x"],"measurements":{"c":{"time":[{"point":[4],"values":[1,2]}]}}}"#.into()),
        (Format::Json, r#"{"parameters":[{"id":1,"name":"x"}],"callpaths":[{"id":1,"name":"c"}],"metrics":[{"id":1,"name":"t"}],"coordinates":[{"id":1,"parameter_value_pairs":[{"parameter_id":1,"parameter_value":4}]}],"measurements":[{"callpath_id":1,"coordinate_id":1,"metric_id":1,"value":2.5}]}"#.into()),
        (Format::Csv, "callpath,metric,p,value\nmain,time,1,2\nmain,time,2,3\n".into()),
        // Several parameter sets in one file.
        (Format::Text, "PARAMETER x\nPOINTS ( 1 ) ( 2 )\nREGION a\nMETRIC time\nDATA 1 2\nDATA 3\n\nPARAMETER p n\nPOINTS ( 2 8 ) ( 4 8 )\nREGION b\nDATA 1\nDATA 2\n".into()),
        (Format::JsonLines, "{\"params\":{\"x\":1},\"callpath\":\"a\",\"value\":1}\n{\"params\":{\"p\":2,\"n\":8},\"callpath\":\"b\",\"value\":[1,2]}\n{\"params\":{\"x\":2},\"callpath\":\"a\",\"value\":3}\n".into()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(64), ..ProptestConfig::default() })]

    #[test]
    fn text_round_trip(e in experiment_strategy()) {
        let out = text::write(&e).unwrap();
        let back = read(Format::Text, &out).unwrap();
        prop_assert!(back.same_data(&e), "{}", out);
    }

    #[test]
    fn jsonl_round_trip(e in experiment_strategy()) {
        let out = jsonl::write(&e).unwrap();
        let back = read(Format::JsonLines, &out).unwrap();
        prop_assert!(back.same_data(&e), "{}", out);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(256), ..ProptestConfig::default() })]

    #[test]
    fn random_text_never_panics(src in "(PARAMETER|POINTS|REGION|METRIC|DATA|#|\\(|\\)|[ \t\n]|-?[0-9.e]{1,6}|[a-z>-]{1,4}|nan|inf){0,40}") {
        for f in [Format::Text, Format::JsonLines, Format::Talpas, Format::Json, Format::Csv] {
            no_panic(f, &src);
        }
    }

    #[test]
    fn random_json_never_panics(src in "(\\{|\\}|\\[|\\]|:|,|;|\"|params|parameters|value|callpath|metric|point|values|measurements|id|[ \n]|-?[0-9.e]{1,5}|null|true){0,50}") {
        for f in [Format::JsonLines, Format::Talpas, Format::Json] {
            no_panic(f, &src);
        }
    }

    #[test]
    fn arbitrary_unicode_never_panics(src in "\\PC{0,200}") {
        for f in [Format::Text, Format::JsonLines, Format::Talpas, Format::Json, Format::Csv] {
            no_panic(f, &src);
        }
    }

    #[test]
    fn mutated_valid_inputs_never_panic(which in 0usize..9, edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..3, prop::sample::select(vec!["", "(", ")", " ", "\n", "-", "nan", "1e999", "\"", "{", "}", ",", ";", "é", "DATA 1", "POINTS ( 1 )", "0"])), 1..6)) {
        let (format, mut src) = corpus()[which].clone();
        for (at, op, text) in edits {
            let mut i = at.index(src.len() + 1);
            while !src.is_char_boundary(i) { i -= 1; }
            match op {
                0 => src.insert_str(i, text),
                1 => { let end = (i + 3).min(src.len()); let mut e = end; while !src.is_char_boundary(e) { e += 1; } src.replace_range(i..e, text); }
                _ => { src.truncate(i); }
            }
        }
        no_panic(format, &src);
    }

    #[test]
    fn binary_readers_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300), prefix in any::<bool>()) {
        let mut data = if prefix { b"\x01\x00\x11\x00\x00\x00EXTRAP_EXPERIMENT".to_vec() } else { Vec::new() };
        data.extend_from_slice(&bytes);
        let _ = extrap3::read_bytes("in", &data, &ReadOptions::default());
        let mut zip = b"PK\x03\x04".to_vec();
        zip.extend_from_slice(&bytes);
        let _ = archive::read_bytes("in", &zip, &ReadOptions::default());
    }
}

fn testdata(rel: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/peers/extrap")
        .join(rel);
    std::fs::read(path).unwrap()
}

/// Flip, overwrite or cut bytes of a valid binary file.
fn mutate(mut data: Vec<u8>, edits: &[(prop::sample::Index, u8, u8)]) -> Vec<u8> {
    for (at, op, byte) in edits {
        if data.is_empty() {
            break;
        }
        let i = at.index(data.len());
        match op % 4 {
            0 => data[i] ^= 1 << (byte % 8),
            1 => data[i] = *byte,
            2 => data.truncate(i),
            _ => data.insert(i, *byte),
        }
    }
    data
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(128), ..ProptestConfig::default() })]

    #[test]
    fn mutated_binary_files_never_panic(edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), any::<u8>()), 1..8)) {
        let opts = ReadOptions::default();
        let _ = extrap3::read_bytes("in", &mutate(testdata("input/experiment_3"), &edits), &opts);
        let _ = archive::read_bytes("in", &mutate(testdata("experiments/two_parameter3.txt.extra-p"), &edits), &opts);
        let _ = cube::check_profile(&mutate(testdata("cubeset/simple_threaded/example.f1/cube-example1.cubex"), &edits));
        let _ = cube::check_profile(&mutate(testdata("cubeset/single_parameter/mm.x10y1z1.r1/profile.cubex"), &edits));
    }
}

#[test]
fn unmutated_binary_files_read() {
    assert_eq!(
        cube::check_profile(&testdata(
            "cubeset/simple_threaded/example.f1/cube-example1.cubex"
        ))
        .unwrap(),
        9
    );
    assert!(extrap3::read_bytes(
        "in",
        &testdata("input/experiment_3"),
        &ReadOptions::default()
    )
    .is_ok());
}

#[test]
fn blank_metrics_round_trip_through_text_without_metric_lines() {
    let e = ok(
        Format::Text,
        "PARAMETER x\nPOINTS 1 2\nREGION a->b\nDATA 1\nDATA 2\nREGION c\nDATA 3\nDATA 4\n",
    );
    let out = text::write(&e).unwrap();
    assert!(!out.contains("METRIC"), "{out}");
    assert!(ok(Format::Text, &out).same_data(&e));
    let mut mixed = e.clone();
    mixed.push(key("c", "time"), vec![1.0], vec![1.0]);
    mixed.push(key("c", "time"), vec![2.0], vec![1.0]);
    assert!(text::write(&mixed).unwrap_err().0.contains("empty metric"));
}

#[test]
fn a_directory_is_only_read_as_cube() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/peers/extrap/text");
    let opts = ReadOptions {
        format: Some(Format::Text),
        ..ReadOptions::default()
    };
    let d = read_path_with(&dir, &opts).unwrap_err();
    assert!(
        d.message
            .contains("only the `cube` format reads directories"),
        "{}",
        d.message
    );
}

#[test]
fn write_path_picks_the_writer_by_extension() {
    let dir = std::env::temp_dir().join(format!("perfcompose-write-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let e = sample();
    for name in ["m.txt", "m.jsonl"] {
        let path = dir.join(name);
        write_path(&path, &e).unwrap();
        assert!(read_path(&path).unwrap().same_data(&e), "{name}");
    }
    assert!(std::fs::read_to_string(dir.join("m.jsonl"))
        .unwrap()
        .starts_with('{'));
    let err = write_path(dir.join("no/such/dir/m.txt"), &e).unwrap_err();
    assert!(err.0.starts_with("cannot write"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
