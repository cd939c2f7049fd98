//! Files that hold several experiments, one per set of parameters: Extra-P text with
//! several sections and JSON Lines whose lines name different parameters. What they
//! read as, the errors (at their line and column), the writers, and the components and
//! fitting that pick a series out of such a file.

use super::*;

fn key(c: &str) -> SeriesKey {
    SeriesKey::new(c, "time")
}

fn sets(format: Format, src: &str) -> Vec<Experiment> {
    match read_str_experiments(format, "in", src, &ReadOptions::default()) {
        Ok(e) => e,
        Err(d) => panic!("unexpected error:\n{}", d.render()),
    }
}

/// The error's (line, column) and message.
fn err(format: Format, src: &str) -> (usize, usize, String) {
    match read_str_experiments(format, "in", src, &ReadOptions::default()) {
        Ok(e) => panic!("expected an error, read {e:?}"),
        Err(d) => {
            let (l, c) = d.line_col();
            (l, c, d.message)
        }
    }
}

/// `sort` over x, then `halo` over p and n: what `measure` writes for the issue's
/// example.
const MIXED: &str = "\
PARAMETER x
POINTS ( 1000.0 )
POINTS ( 2000.0 )

REGION sort
METRIC time
DATA 1.0 1.5
DATA 2.0

PARAMETER p
PARAMETER n
POINTS ( 2.0 1024.0 )
POINTS ( 4.0 1024.0 )

REGION halo
METRIC bytes
DATA 7.0
DATA 9.0

METRIC time
DATA 3.0
DATA 5.0
";

/// Two experiments: `sort` over x, `halo` over (p, n).
fn mixed() -> Vec<Experiment> {
    let mut sort = Experiment::new(vec!["x".into()]);
    sort.push(key("sort"), vec![1000.0], vec![1.0, 1.5]);
    sort.push(key("sort"), vec![2000.0], vec![2.0]);
    let mut halo = Experiment::new(vec!["p".into(), "n".into()]);
    halo.push(key("halo"), vec![2.0, 1024.0], vec![3.0]);
    halo.push(key("halo"), vec![4.0, 1024.0], vec![5.0]);
    halo.push(
        SeriesKey::new("halo", "bytes"),
        vec![2.0, 1024.0],
        vec![7.0],
    );
    halo.push(
        SeriesKey::new("halo", "bytes"),
        vec![4.0, 1024.0],
        vec![9.0],
    );
    vec![sort, halo]
}

fn same(a: &[Experiment], b: &[Experiment]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same_data(y))
}

#[test]
fn text_sections_are_experiments_over_their_own_parameters() {
    let e = sets(Format::Text, MIXED);
    assert!(same(&e, &mixed()), "{e:?}");
    assert_eq!(e[1].series[&key("halo")][1].coordinate, vec![4.0, 1024.0]);
    // Spans point into the whole file: the second section's first DATA line.
    let d = e[1].diagnostic(e[1].span(), "here");
    assert_eq!(d.line_col(), (17, 1));
    // The writer gives the same text back, a blank line between the sections; the
    // first section alone is exactly the one-experiment file.
    assert_eq!(text::write_all(&mixed()).unwrap(), MIXED);
    let first = text::write(&mixed()[0]).unwrap();
    assert!(MIXED.starts_with(&first));
    assert_eq!(text::write_all(&mixed()[..1]).unwrap(), first);
    // The metric starts unset in every section, as at the top of a file.
    let e = sets(
        Format::Text,
        "PARAMETER x\nPOINTS 1\nREGION a\nMETRIC time\nDATA 1\nPARAMETER y\nPOINTS 2\nREGION b\nDATA 2\n",
    );
    assert_eq!(e[1].series.keys().next(), Some(&SeriesKey::new("b", "")));
}

#[test]
fn one_experiment_readers_refuse_a_file_of_several_at_the_second() {
    let d = read_str(Format::Text, "in", MIXED, &ReadOptions::default()).unwrap_err();
    assert_eq!(d.line_col(), (17, 1), "{}", d.message);
    assert!(
        d.message
            .contains("several sets of parameters: (x) and, from here, (p, n)"),
        "{}",
        d.message
    );
    let lines = jsonl::write_all(&mixed()).unwrap();
    let d = read_str(Format::JsonLines, "in", &lines, &ReadOptions::default()).unwrap_err();
    assert_eq!(d.line_col(), (4, 1), "{}", d.message);
}

#[test]
fn text_sections_errors_are_located() {
    let cases: &[(&str, (usize, usize), &str)] = &[
        (
            "PARAMETER x\nPOINTS 1\nREGION a\nDATA 1\nPARAMETER x\nPOINTS 2\nREGION b\nDATA 2\n",
            (5, 1),
            "a second section over (x) (the first starts on line 1)",
        ),
        (
            "PARAMETER x y\nPOINTS (1 2)\nREGION a\nDATA 1\nPARAMETER y\nPARAMETER x\nPOINTS (2 1)\nREGION b\nDATA 2\n",
            (5, 1),
            "a second section over (y, x) (the first starts on line 1)",
        ),
        (
            "PARAMETER x\nPOINTS 1\nREGION a\nDATA 1\nPARAMETER y\nPOINTS 2\nREGION a\nDATA 2\n",
            (8, 1),
            "`a / <empty>` is measured over (y) here and over (x) on line 4",
        ),
        (
            "PARAMETER x\nPOINTS 1\nREGION a\nDATA 1\nPARAMETER y\n",
            (5, 1),
            "the section of line 5 lists no POINTS",
        ),
        (
            "PARAMETER x\nPOINTS 1\nREGION a\nDATA 1\n\nPARAMETER y\nPOINTS 2\nREGION b\n",
            (6, 1),
            "the section of line 6 holds no DATA lines",
        ),
        (
            "PARAMETER x\nPOINTS 1\nREGION a\nDATA 1\nPARAMETER y\nPOINTS 2\nDATA 2\n",
            (7, 1),
            "DATA before any REGION",
        ),
        (
            "PARAMETER x\nPOINTS 1 2\nREGION a\nDATA 1\nPARAMETER y\n",
            (4, 1),
            "`a / <empty>` has 1 DATA lines but POINTS lists 2 points",
        ),
        (
            "PARAMETER x\nPOINTS 1\nREGION a\nDATA 1\nPARAMETER y\nPOINTS 2\nREGION b\nDATA 2\nPARAMETER z\nPOINTS 3\nPARAMETER w\n",
            (11, 1),
            "PARAMETER after POINTS",
        ),
    ];
    for (src, at, msg) in cases {
        let (l, c, m) = err(Format::Text, src);
        assert!(m.contains(msg), "{src:?}: message `{m}` lacks `{msg}`");
        assert_eq!((l, c), *at, "{src:?}: {m}");
    }
}

#[test]
fn json_lines_over_other_parameters_are_other_experiments() {
    let src = r#"{"params":{"x":1000},"callpath":"sort","metric":"time","value":1}
{"params":{"n":1024,"p":2},"callpath":"halo","metric":"time","value":3}
{"params":{"x":1000},"callpath":"sort","metric":"time","value":1.5}
{"params":{"p":4,"n":1024},"callpath":"halo","metric":"time","value":5}
{"params":{"x":2000},"callpath":"sort","metric":"time","value":2}
"#;
    let e = sets(Format::JsonLines, src);
    assert_eq!(e.len(), 2);
    assert_eq!(e[0].series[&key("sort")][0].values, vec![1.0, 1.5]);
    // Each experiment's parameter order is its first line's.
    assert_eq!(e[1].parameters, vec!["n", "p"]);
    assert_eq!(e[1].series[&key("halo")][1].coordinate, vec![1024.0, 4.0]);
    // The writer and the reader agree.
    let out = jsonl::write_all(&mixed()).unwrap();
    assert!(same(&sets(Format::JsonLines, &out), &mixed()), "{out}");
    assert_eq!(
        jsonl::write_all(&mixed()[..1]).unwrap(),
        jsonl::write(&mixed()[0]).unwrap()
    );
    // A series is over one set of parameters: its lines over others are errors.
    let cases: &[(&str, (usize, usize), &str)] = &[
        (
            "{\"params\":{\"x\":1},\"callpath\":\"a\",\"value\":1}\n{\"params\":{\"y\":1},\"callpath\":\"b\",\"value\":1}\n{\"params\":{\"x\":2,\"y\":1},\"callpath\":\"b\",\"value\":1}\n",
            (3, 16),
            "unknown parameter `x` (line 2 has y)",
        ),
        (
            "{\"params\":{\"x\":1,\"y\":1},\"value\":1}\n{\"params\":{\"y\":1},\"value\":1}\n",
            (2, 11),
            "parameter `x` is missing (line 1 has x, y)",
        ),
    ];
    for (src, at, msg) in cases {
        let (l, c, m) = err(Format::JsonLines, src);
        assert!(m.contains(msg), "{src:?}: message `{m}` lacks `{msg}`");
        assert_eq!((l, c), *at, "{src:?}: {m}");
    }
    // Talpas files stay one experiment: a line over other parameters is an error.
    let talpas = "{\"parameters\":{\"x\":1};\"callpath\":\"a\";\"metric\":\"m\";\"value\":1}\n{\"parameters\":{\"y\":1};\"callpath\":\"b\";\"metric\":\"m\";\"value\":1}\n";
    let (l, c, m) = err(Format::Talpas, talpas);
    assert_eq!((l, c), (2, 15), "{m}");
    assert!(m.contains("parameter `x` is missing (line 1 has x)"), "{m}");
}

#[test]
fn writers_refuse_experiments_that_cannot_share_a_file() {
    let mut again = mixed();
    again.push(mixed()[0].clone());
    again[2].parameters = vec!["y".into()];
    for w in [text::write_all, jsonl::write_all] {
        assert!(w(&[]).unwrap_err().0.contains("no measurements"));
        let mut same_params = mixed();
        same_params[1].parameters = vec!["x".into()];
        same_params[1].series.clear();
        same_params[1].push(key("b"), vec![1.0], vec![1.0]);
        let e = w(&same_params).unwrap_err().0;
        assert!(
            e.contains("two experiments over the same parameters (x)"),
            "{e}"
        );
        let e = w(&again).unwrap_err().0;
        assert!(
            e.contains("series `sort / time` is in two experiments, over (x) and over (y)"),
            "{e}"
        );
    }
}

#[test]
fn files_of_several_experiments_read_from_disk() {
    let dir = std::env::temp_dir().join(format!("perfcompose-sets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, text) in [
        ("m.txt", text::write_all(&mixed()).unwrap()),
        ("m.jsonl", jsonl::write_all(&mixed()).unwrap()),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        assert!(same(&read_experiments(&path).unwrap(), &mixed()), "{name}");
        let d = read_path(&path).unwrap_err();
        assert!(d.origin.ends_with(name), "{}", d.origin);
        assert!(d.message.contains("several sets of parameters"), "{name}");
    }
    // Every other format gives one experiment.
    let csv = dir.join("m.csv");
    std::fs::write(&csv, "x,value\n1,2\n").unwrap();
    assert_eq!(read_experiments(&csv).unwrap().len(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn components_and_fits_pick_their_series_out_of_a_file_of_several() {
    use crate::components::DEFAULT_FITTER;
    use crate::components::{Components, LoadOptions};
    use crate::fit::{file::fit_component, modeler, FitOptions};
    let dir = std::env::temp_dir().join(format!("perfcompose-sets-fit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut sort = Experiment::new(vec!["x".into()]);
    for x in [1.0, 2.0, 4.0, 8.0, 16.0] {
        sort.push(key("sort"), vec![x], vec![2.0 + 3.0 * x, 2.0 + 3.0 * x]);
    }
    let mut halo = Experiment::new(vec!["p".into(), "n".into()]);
    for p in [2.0, 4.0, 8.0, 16.0, 32.0] {
        for n in [1.0, 2.0, 4.0, 8.0, 16.0] {
            halo.push(key("halo"), vec![p, n], vec![100.0 + 5.0 * p * n]);
        }
    }
    std::fs::write(
        dir.join("blocks.txt"),
        text::write_all(&[sort, halo]).unwrap(),
    )
    .unwrap();
    let m = modeler("perfcompose").unwrap();
    let path = dir.join("blocks.txt");
    let fit = |c: &str, cp: Option<&str>| fit_component(c, &path, cp, m, &FitOptions::default());
    assert_eq!(fit("sort", None).unwrap().rounded(3), "2 + 3 * x");
    assert_eq!(
        fit("exchange", Some("halo")).unwrap().rounded(3),
        "100 + 5 * n * p"
    );
    let e = fit("merge", None).unwrap_err();
    assert!(
        e.message.contains("none is called `merge`"),
        "{}",
        e.message
    );
    let opts = LoadOptions {
        fitter: Some(&DEFAULT_FITTER),
        ..LoadOptions::default()
    };
    let toml = "[components.sort]\nmeasurements = \"blocks.txt\"\ncallpath = \"sort\"\n\n\
                [components.halo]\nmeasurements = \"blocks.txt\"\ncallpath = \"halo\"\n";
    let c = Components::parse("design.toml", toml, &dir, opts).unwrap();
    assert_eq!(c.get("sort").unwrap().model.rounded(3), "2 + 3 * x");
    assert_eq!(c.get("halo").unwrap().model.rounded(3), "100 + 5 * n * p");
    // A callpath the file has in neither experiment: at the callpath, listing both.
    let toml = "[components.halo]\nmeasurements = \"blocks.txt\"\ncallpath = \"hallo\"\n";
    let e = Components::parse("design.toml", toml, &dir, opts).unwrap_err();
    assert_eq!(e.line_col(), (3, 12), "{}", e.render());
    assert_eq!(e.hint.as_deref(), Some("its callpaths: sort, halo"));
    std::fs::remove_dir_all(&dir).unwrap();
}
