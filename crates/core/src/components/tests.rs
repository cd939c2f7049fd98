use super::*;

fn parse(src: &str) -> Result<Components, Diagnostic> {
    Components::parse("blocks.toml", src, Path::new("."), LoadOptions::default())
}

#[test]
fn reads_models_and_descriptions() {
    let c = parse(
        "[components.qsort]\nmodel = \"1034.17 * x * log2(x)\"\ndescription = \"sort\"\n\
         [components.inc]\nmodel = '536.185 * x'\n",
    )
    .unwrap();
    assert_eq!(c.len(), 2);
    assert_eq!(
        c.get("qsort").unwrap().model.to_string(),
        "1034.17 * x * log2(x)"
    );
    assert_eq!(c.get("qsort").unwrap().description.as_deref(), Some("sort"));
    assert_eq!(c.names().collect::<Vec<_>>(), ["inc", "qsort"]);
    match &c.get("inc").unwrap().source {
        ComponentSource::Model { at, .. } => assert_eq!(at, "blocks.toml:5:9"),
        s => panic!("{s:?}"),
    }
}

#[test]
fn a_bad_model_is_reported_inside_the_file() {
    let src = "[components.qsort]\nmodel = \"1034.17 * x * log3(x)\"\n";
    let d = parse(src).unwrap_err();
    assert_eq!(d.origin, "blocks.toml");
    assert_eq!(d.line_col(), (2, 24), "{}", d.render());
    assert!(
        d.message.contains("unknown function `log3`"),
        "{}",
        d.message
    );
    assert_eq!(&src[d.span.start..d.span.end], "log3");
}

#[test]
fn multiline_strings_keep_positions() {
    let src = "[components.a]\nmodel = \"\"\"\n1 + * x\"\"\"\n";
    let d = parse(src).unwrap_err();
    assert_eq!(d.line_col(), (3, 5), "{}", d.render());
}

#[test]
fn escaped_strings_point_at_the_string() {
    let src = "[components.a]\nmodel = \"1 + \\u0078 +\"\n";
    let d = parse(src).unwrap_err();
    assert_eq!(d.line_col(), (2, 9), "{}", d.render());
}

#[test]
fn malformed_toml_is_located() {
    let d = parse("[components.a]\nmodel = \"x\n").unwrap_err();
    assert_eq!(d.origin, "blocks.toml");
    assert_eq!(d.line_col().0, 2, "{}", d.render());
    let d = parse("[components.a]\nmodle = \"x\"\n").unwrap_err();
    assert!(d.message.contains("unknown field"), "{}", d.message);
    assert_eq!(d.line_col(), (2, 1), "{}", d.render());
}

#[test]
fn measurements_need_a_fitter() {
    let src = "[components.scan]\nmeasurements = \"scan.txt\"\n";
    let d = parse(src).unwrap_err();
    assert!(d.message.contains("not supported yet"), "{}", d.message);
    assert_eq!(d.line_col(), (2, 16));

    struct Constant;
    impl Fitter for Constant {
        fn fit(
            &self,
            component: &str,
            path: &Path,
            callpath: Option<&str>,
            measure: Option<Measure>,
        ) -> Result<Fitted, Diagnostic> {
            assert_eq!(callpath, None);
            assert_eq!(component, "scan");
            assert_eq!(path, Path::new("data/scan.txt"));
            Ok(Fitted {
                measure: measure.unwrap_or_default(),
                ..Fitted::model(Expr::constant(3.0))
            })
        }
    }
    let c = Components::parse(
        "b.toml",
        src,
        Path::new("data"),
        LoadOptions {
            fitter: Some(&Constant),
            ..LoadOptions::default()
        },
    )
    .unwrap();
    assert_eq!(c.get("scan").unwrap().model, Expr::constant(3.0));

    // `measure` picks the statistic the fitter fits, and the component says which.
    let fitted = |src: &str| {
        Components::parse(
            "b.toml",
            src,
            Path::new("data"),
            LoadOptions {
                fitter: Some(&Constant),
                ..LoadOptions::default()
            },
        )
    };
    let statistic = |c: &Components| match &c.get("scan").unwrap().source {
        ComponentSource::Fitted { measure, .. } => *measure,
        other => panic!("{other:?}"),
    };
    assert_eq!(statistic(&c), Measure::Minimum);
    for m in Measure::ALL {
        let src = format!("{src}measure = \"{m}\"\n");
        assert_eq!(statistic(&fitted(&src).unwrap()), m);
    }
    // An unknown statistic is an error at its value, naming the known ones.
    let d = fitted(&format!("{src}measure = \"average\"\n")).unwrap_err();
    assert!(
        d.message.contains("unknown statistic `average`"),
        "{}",
        d.message
    );
    assert_eq!(d.line_col(), (3, 11), "{}", d.render());
    assert!(d
        .hint
        .as_deref()
        .unwrap()
        .contains("mean, median, minimum, maximum"));
    // A model has no repetitions to reduce.
    let d = fitted("[components.scan]\nmodel = \"x\"\nmeasure = \"median\"\n").unwrap_err();
    assert!(
        d.message.contains("`measure` picks the statistic"),
        "{}",
        d.message
    );
    assert_eq!(d.line_col(), (3, 11));
}

#[test]
fn names_and_shapes_are_checked() {
    let d = parse("[components.pipe]\nmodel = \"x\"\n").unwrap_err();
    assert!(d.message.contains("is a pattern"), "{}", d.message);
    assert_eq!(d.line_col(), (1, 13));
    let d = parse("[components.\"a-b\"]\nmodel = \"x\"\n").unwrap_err();
    assert!(d.message.contains("cannot be used"), "{}", d.message);
    let d = parse("[components.a]\ndescription = \"x\"\n").unwrap_err();
    assert!(d.message.contains("neither"), "{}", d.message);
    let d = parse("[components.a]\nmodel = \"x\"\nmeasurements = \"f\"\n").unwrap_err();
    assert!(d.message.contains("both"), "{}", d.message);
    let d = parse("title = 3\n").unwrap_err();
    assert!(d.message.contains("unknown field"), "{}", d.message);
    let d = parse("").unwrap_err();
    assert!(d.message.contains("no components"), "{}", d.message);
}

#[test]
fn a_function_library_is_used_for_model_strings() {
    struct Lib;
    impl Functions for Lib {
        fn call(&self, name: &str, args: Vec<Expr>) -> Option<Result<Expr, String>> {
            (name == "twice").then(|| Ok(Expr::mul(Expr::constant(2.0), args[0].clone())))
        }
        fn names(&self) -> Vec<String> {
            vec!["twice".into()]
        }
    }
    let c = Components::parse(
        "b.toml",
        "[components.a]\nmodel = \"twice(x)\"\n",
        Path::new("."),
        LoadOptions {
            library: &Lib,
            fitter: None,
        },
    )
    .unwrap();
    assert_eq!(c.get("a").unwrap().model.to_string(), "2 * x");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 256, rng_seed: proptest::test_runner::RngSeed::Fixed(3), ..Default::default() })]

    #[test]
    fn random_files_never_panic(src in "(\\[components\\.[a-z]{0,4}\\]\n|model = \"[x0-9*+/()^ .]{0,12}\"\n|measurements = '[a-z.]{0,5}'\n|[a-z =\"\\[\\]\n.]{0,10}){0,6}") {
        if let Err(d) = parse(&src) {
            proptest::prop_assert!(d.span.start <= src.len());
            let _ = d.render();
        }
    }
}

#[test]
fn the_seed_table_is_built_in() {
    let c = seed_table1();
    assert_eq!(c.len(), SEED000_TABLE1.len());
    assert_eq!(c.get("inc").unwrap().model.to_string(), "536.185 * x");
    assert_eq!(
        c.get("shuffle_hadoop").unwrap().model.to_string(),
        Expr::sub(
            Expr::mul(Expr::constant(98304.0), Expr::param("x")),
            Expr::div(
                Expr::mul(Expr::constant(98304.0), Expr::param("x")),
                Expr::mul(Expr::param("m"), Expr::param("n"))
            )
        )
        .to_string()
    );
}

#[test]
fn a_machine_table_fixes_parameters_in_every_model() {
    struct Lib;
    impl Functions for Lib {
        fn call(&self, name: &str, args: Vec<Expr>) -> Option<Result<Expr, String>> {
            (name == "hockney").then(|| {
                Ok(Expr::add(
                    Expr::param("alpha"),
                    Expr::mul(Expr::param("beta"), args[0].clone()),
                ))
            })
        }
        fn names(&self) -> Vec<String> {
            vec!["hockney".into()]
        }
    }
    let src = "[machine]\nunit = \"ns\"\nalpha = 2e-6\nbeta = 1\n\n[components.msg]\nmodel = \"hockney(8 * x) + gamma\"\n";
    let opts = LoadOptions {
        library: &Lib,
        ..LoadOptions::default()
    };
    let c = Components::parse("m.toml", src, Path::new("."), opts).unwrap();
    assert_eq!(
        c.get("msg").unwrap().model.to_string(),
        "2e-6 + gamma + 8 * x"
    );
    assert_eq!(c.machine()["beta"].ns, 1.0);
    assert_eq!(c.machine()["beta"].at, "m.toml:4:8");
    // Pattern-bound names and non-numbers are rejected where they are written.
    let bad = "[machine]\nunit = \"s\"\nx = 3\n[components.a]\nmodel = \"x\"\n";
    let d = Components::parse("m.toml", bad, Path::new("."), LoadOptions::default()).unwrap_err();
    assert!(d.message.contains("bound by the patterns"), "{}", d.message);
    assert_eq!(crate::diag::line_col(bad, d.span.start), (3, 1));
    let bad = "[machine]\nunit = \"s\"\nalpha = \"fast\"\n[components.a]\nmodel = \"x\"\n";
    let d = Components::parse("m.toml", bad, Path::new("."), LoadOptions::default()).unwrap_err();
    assert_eq!(
        d.message,
        "machine parameter `alpha` must be a number, not a string"
    );
}

#[test]
fn a_machine_file_supplies_the_table_and_the_file_overrides_it() {
    let dir = std::env::temp_dir().join(format!("pc-machine-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("net.toml"),
        "# from calibrate network\nversion = 1\n[machine]\nunit = \"us\"\nalpha = 3  # us\nbeta = 2\n",
    )
    .unwrap();
    let src = "machine_file = \"net.toml\"\n[machine]\nunit = \"ns\"\nbeta = 5\n[components.a]\nmodel = \"alpha + beta * x\"\n";
    let c = Components::parse("c.toml", src, &dir, LoadOptions::default()).unwrap();
    assert_eq!(c.get("a").unwrap().model.to_string(), "3000 + 5 * x");
    assert_eq!(c.machine()["alpha"].ns, 3000.0);
    // Each value names the file and line it came from.
    assert!(
        c.machine()["alpha"].at.ends_with("net.toml:5:9"),
        "{:?}",
        c.machine()["alpha"]
    );
    assert_eq!(c.machine()["beta"].at, "c.toml:4:8");
    // A missing file is reported where it is named; a bad one at its own line.
    let src = "machine_file = \"none.toml\"\n[components.a]\nmodel = \"x\"\n";
    let d = Components::parse("c.toml", src, &dir, LoadOptions::default()).unwrap_err();
    assert!(
        d.message.contains("cannot read machine file"),
        "{}",
        d.message
    );
    assert_eq!(crate::diag::line_col(src, d.span.start), (1, 16));
    std::fs::write(
        dir.join("bad.toml"),
        "[machine]\nunit = \"s\"\nalpha = 1\nx = 2\n",
    )
    .unwrap();
    let src = "machine_file = \"bad.toml\"\n[components.a]\nmodel = \"x\"\n";
    let d = Components::parse("c.toml", src, &dir, LoadOptions::default()).unwrap_err();
    assert!(d.message.contains("bound by the patterns"), "{}", d.message);
    assert!(d.origin.ends_with("bad.toml"), "{}", d.origin);
    std::fs::write(dir.join("other.toml"), "[components.a]\nmodel = \"x\"\n").unwrap();
    let src = "machine_file = \"other.toml\"\n[components.a]\nmodel = \"x\"\n";
    assert!(Components::parse("c.toml", src, &dir, LoadOptions::default()).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_model_may_state_its_uncertainty_and_range() {
    let src = r#"
[components.sort]
model = "12.5 + 1034.17 * x * log2(x)"
stderr = [3.1, 8.2]
measured = { x = [1000, 64000] }

[components.sync]
model = "5000 + 2 * x"
relative_error = 0.05

[components.scan]
model = "200 + 3 * x"
covariance = [[4.0, 0.1], [0.1, 0.01]]
"#;
    let c = parse(src).unwrap();
    let sort = c.get("sort").unwrap();
    assert_eq!(sort.measured["x"], [1000.0, 64000.0]);
    let u = sort.uncertainty.as_ref().unwrap();
    assert_eq!(u.center, vec![12.5, 1034.17]);
    assert_eq!(u.source, crate::uncertainty::Source::Stated);
    let sync = c.get("sync").unwrap();
    assert!(sync.measured.is_empty());
    assert_eq!(sync.uncertainty.as_ref().unwrap().center, vec![1.0]);
    assert!(c.get("scan").unwrap().uncertainty.is_some());
}

#[test]
fn stated_uncertainties_are_checked_where_they_are_written() {
    let cases = [
        // One value per term.
        (
            "[components.a]\nmodel = \"1 + 2 * x\"\nstderr = [0.1]\n",
            (3, 10),
            "stderr has 1 values for the model's 2 terms",
        ),
        // Not a sum of terms.
        (
            "[components.a]\nmodel = \"max(x, 2)\"\nstderr = [0.1]\n",
            (3, 10),
            "needs a model that is a sum of terms",
        ),
        (
            "[components.a]\nmodel = \"x\"\nrelative_error = -1\n",
            (3, 18),
            "relative_error must be a finite number",
        ),
        (
            "[components.a]\nmodel = \"1 + x\"\ncovariance = [[1, 2], [0, 1]]\n",
            (3, 14),
            "symmetric",
        ),
        (
            "[components.a]\nmodel = \"1 + x\"\ncovariance = [[1]]\n",
            (3, 14),
            "covariance must be 2×2",
        ),
        (
            "[components.a]\nmodel = \"x\"\nrelative_error = 0.1\nstderr = [1]\n",
            (4, 10),
            "states its uncertainty twice",
        ),
        (
            "[components.a]\nmodel = \"x\"\nmeasured = { x = [5, 1] }\n",
            (3, 12),
            "measured range of `x`",
        ),
    ];
    for (src, at, msg) in cases {
        let d = parse(src).unwrap_err();
        assert!(d.message.contains(msg), "{src}: {}", d.message);
        assert_eq!(d.line_col(), at, "{src}: {}", d.message);
    }
    // A fitted component's uncertainty and range come from its fit.
    let d = parse("[components.a]\nmeasurements = \"a.txt\"\nrelative_error = 0.1\n").unwrap_err();
    assert!(d.message.contains("comes from the fit"), "{}", d.message);
    assert_eq!(d.line_col(), (3, 18));
}

/// A folder of its own for a test's files.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("pc-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn models_are_converted_to_nanoseconds_from_the_unit_they_state() {
    let src = r#"
unit = "s"

[components.leaf]
model = "2e-9 * x"

[components.scan]
model = "536 * x"
unit = "ns"

[components.step]
model = "1.5"
unit = "us"
"#;
    let c = parse(src).unwrap();
    let at = |name: &str| {
        c.get(name)
            .unwrap()
            .model
            .eval_at(&[("x", 1000.0)])
            .unwrap()
    };
    assert!((at("leaf") - 2000.0).abs() < 1e-9);
    assert_eq!(at("scan"), 536_000.0);
    assert_eq!(at("step"), 1500.0);
    // A unit that is not one is refused where it is written.
    let d = parse("unit = \"sec\"\n[components.a]\nmodel = \"x\"\n").unwrap_err();
    assert_eq!(d.message, "`sec` is not a unit of time (s, ms, us or ns)");
    assert_eq!(
        crate::diag::line_col("unit = \"sec\"", d.span.start),
        (1, 8)
    );
    let d = parse("[components.a]\nmodel = \"x\"\nunit = 1\n").unwrap_err();
    assert_eq!(d.message, "a unit is a string, not a integer");
}

#[test]
fn machine_values_enter_a_model_in_its_own_unit() {
    // Seconds in the table; one model in ns (the default), one in seconds: both come out
    // in ns, with the machine's start-up counted as the same time.
    let src = r#"
[machine]
unit = "s"
alpha = 2e-6

[components.ns]
model = "100 + alpha"

[components.s]
model = "1e-7 + alpha"
unit = "s"
"#;
    let c = parse(src).unwrap();
    let v = |n: &str| c.get(n).unwrap().model.as_constant().unwrap();
    assert!((v("ns") - 2100.0).abs() < 1e-9, "{}", v("ns"));
    assert!((v("s") - 2100.0).abs() < 1e-9, "{}", v("s"));
    assert_eq!(c.machine()["alpha"].ns, 2000.0);
}

#[test]
fn a_machine_table_must_state_its_unit() {
    let src = "[machine]\nalpha = 2.8e-6\nbeta = 4.9e-11\n[components.a]\nmodel = \"alpha\"\n";
    let d = parse(src).unwrap_err();
    assert_eq!(
        d.message,
        "the [machine] table does not say the unit of its times"
    );
    assert!(d.hint.unwrap().contains("unit = \"s\""));
    assert_eq!(crate::diag::line_col(src, d.span.start), (2, 1));
    // An empty table needs none.
    assert!(parse("[machine]\n[components.a]\nmodel = \"x\"\n").is_ok());
}

#[test]
fn negative_or_infinite_machine_values_are_refused_in_the_file_they_come_from() {
    let dir = scratch("machine-negative");
    std::fs::write(
        dir.join("net.toml"),
        "version = 1\n[machine]\nunit = \"s\"\nalpha = -1\n",
    )
    .unwrap();
    let src = "machine_file = \"net.toml\"\n[components.a]\nmodel = \"alpha\"\n";
    let d = Components::parse("comp.toml", src, &dir, LoadOptions::default()).unwrap_err();
    assert!(d.origin.ends_with("net.toml"), "{}", d.origin);
    assert_eq!(
        d.message,
        "machine parameter `alpha` must be a finite time ≥ 0, got -1"
    );
    assert_eq!(d.line_col(), (4, 9));
    let src = "[machine]\nunit = \"s\"\nbeta = inf\n[components.a]\nmodel = \"beta\"\n";
    let d = parse(src).unwrap_err();
    assert!(
        d.message.contains("must be a finite time ≥ 0"),
        "{}",
        d.message
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn machine_files_are_versioned_and_old_calibrations_read_as_seconds() {
    let dir = scratch("machine-versions");
    let comp = "machine_file = \"net.toml\"\n[components.a]\nmodel = \"alpha + beta * x\"\n";
    let load = || Components::parse("comp.toml", comp, &dir, LoadOptions::default());
    // What `calibrate network --machine-out` wrote before its files had a version:
    // seconds, no unit.
    std::fs::write(
        dir.join("net.toml"),
        "# The network of host1 as `perfcompose calibrate network` measured it: 2 processes, Open MPI v4.1.\n[machine]\nalpha = 4.5e-7  # s: start-up\nbeta = 2e-10  # s per byte\n",
    )
    .unwrap();
    let c = load().unwrap();
    let v = c.get("a").unwrap().model.eval_at(&[("x", 1000.0)]).unwrap();
    assert!((v - 650.0).abs() < 1e-9, "{v}");
    // The same values without that first line: the unit is not known.
    std::fs::write(
        dir.join("net.toml"),
        "[machine]\nalpha = 4.5e-7\nbeta = 2e-10\n",
    )
    .unwrap();
    let d = load().unwrap_err();
    assert!(d.message.contains("does not say the unit"), "{}", d.message);
    // Version 1 states its unit; a newer version is refused at its line.
    std::fs::write(
        dir.join("net.toml"),
        "version = 1\n[machine]\nunit = \"ns\"\nalpha = 450\nbeta = 0.2\n",
    )
    .unwrap();
    let v = load()
        .unwrap()
        .get("a")
        .unwrap()
        .model
        .eval_at(&[("x", 1000.0)]);
    assert!((v.unwrap() - 650.0).abs() < 1e-9);
    std::fs::write(
        dir.join("net.toml"),
        "version = 2\n[machine]\nunit = \"ns\"\nalpha = 450\n",
    )
    .unwrap();
    let d = load().unwrap_err();
    assert_eq!(
        d.message,
        "machine file version 2: this perfcompose reads versions 0 to 1"
    );
    assert_eq!(d.line_col(), (1, 11));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_stated_uncertainty_is_converted_with_its_model() {
    let src = "unit = \"us\"\n[components.a]\nmodel = \"2 + 3 * x\"\nstderr = [0.5, 0.1]\n";
    let c = parse(src).unwrap();
    let a = c.get("a").unwrap();
    let u = a.uncertainty.as_ref().unwrap();
    let at = [("x", 10.0)];
    let centre: Vec<(String, f64)> = u
        .coefficients
        .iter()
        .cloned()
        .zip(u.center.iter().copied())
        .chain(at.iter().map(|(k, v)| (k.to_string(), *v)))
        .collect();
    let from_template = u.template.eval(&centre).unwrap();
    let model = a.model.eval_at(&at).unwrap();
    assert!((model - 32_000.0).abs() < 1e-9, "{model}");
    assert!((from_template - model).abs() < 1e-9, "{from_template}");
}
