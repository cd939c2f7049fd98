//! Fitting a component's model from a measurements file (`measurements = "file"` in a
//! components file): read the file, pick the series that belongs to the component, fit
//! it with a modeler.
//!
//! The series is the one whose callpath the component names (`callpath = "sort"`), else
//! the file's only one, else the one whose callpath is the component's name; a callpath
//! also matches one that ends with `->NAME`. Among several metrics of that callpath,
//! `time` is preferred. A file may hold series over different parameters (several
//! experiments, `docs/formats.md`): the series is looked for in all of them.
//! The model keeps the parameter names of the series' experiment, so a component's input
//! size should be called `x` in its measurements, as in a model string.

use std::path::Path;

use super::{Fit, FitOptions, Modeler};
use crate::diag::Diagnostic;
use crate::measure::{read_experiments, Experiment, Point, SeriesKey};
use crate::model::Expr;

/// Which series of the experiments of a file, `sets`, belongs to `component`, or to
/// `callpath` when one is given; with its experiment.
pub fn pick<'a>(
    sets: &'a [Experiment],
    component: &str,
    callpath: Option<&str>,
) -> Result<(&'a Experiment, &'a SeriesKey), String> {
    let keys: Vec<&SeriesKey> = sets.iter().flat_map(|e| e.series.keys()).collect();
    let found = |key: &'a SeriesKey| {
        let exp = sets.iter().find(|e| e.series.contains_key(key));
        (exp.unwrap_or_else(|| &sets[0]), key)
    };
    if keys.len() == 1 && callpath.is_none() {
        return Ok(found(keys[0]));
    }
    let component = callpath.unwrap_or(component);
    let suffix = format!("->{component}");
    let named: Vec<&SeriesKey> = keys
        .iter()
        .copied()
        .filter(|k| k.callpath == component || k.callpath.ends_with(&suffix))
        .collect();
    match named.len() {
        1 => Ok(found(named[0])),
        0 => Err(format!(
            "has {} series and none is called `{component}` (series: {})",
            keys.len(),
            list(&keys)
        )),
        _ => named
            .iter()
            .copied()
            .find(|k| k.metric == "time")
            .map(found)
            .ok_or_else(|| {
                format!(
                    "has several series called `{component}` and none with metric `time` ({})",
                    list(&named)
                )
            }),
    }
}

fn list(keys: &[&SeriesKey]) -> String {
    const SHOWN: usize = 8;
    let mut names: Vec<String> = keys.iter().take(SHOWN).map(|k| k.to_string()).collect();
    if keys.len() > SHOWN {
        names.push(format!("and {} more", keys.len() - SHOWN));
    }
    names.join(", ")
}

/// Read `path` and fit the series of `component` with `modeler`. Errors are located in
/// the measurements file (a bad file at its line and column; a series that cannot be
/// fitted at its first point).
pub fn fit_component(
    component: &str,
    path: &Path,
    callpath: Option<&str>,
    modeler: &dyn Modeler,
    options: &FitOptions,
) -> Result<Expr, Diagnostic> {
    fit_series(component, path, callpath, modeler, options).map(|(fit, _)| fit.model)
}

/// [`fit_component`], with the whole fit and the points it was fitted to.
pub fn fit_series(
    component: &str,
    path: &Path,
    callpath: Option<&str>,
    modeler: &dyn Modeler,
    options: &FitOptions,
) -> Result<(Fit, Vec<Point>), Diagnostic> {
    let sets = read_experiments(path)?;
    let (exp, key) = pick(&sets, component, callpath).map_err(|msg| {
        Diagnostic::whole(
            path.display().to_string(),
            format!("component `{component}`: the measurements file {msg}"),
        )
        .with_hint("give each component its own file, or name the callpath after the component")
    })?;
    let fit = modeler
        .fit(&exp.parameters, &exp.series[key], options)
        .map_err(|e| {
            exp.diagnostic(
                exp.series_span(key),
                format!("component `{component}`: series {key}: {e}"),
            )
        })?;
    let points = exp.series[key].to_vec();
    Ok((fit, points))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fit::modeler;

    /// Writes `text` to `name` in a folder of its own: tests run in parallel, and two of
    /// them writing the same path let one read the file while the other truncates it.
    fn write(name: &str, text: &str) -> std::path::PathBuf {
        static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "perfcompose-fit-file-{}-{call}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn two_regions() -> String {
        let mut s = String::from("PARAMETER x\nPOINTS ( 2 ) ( 4 ) ( 8 ) ( 16 ) ( 32 )\n");
        for (region, k) in [("scan", 3.0), ("main->sort", 0.5)] {
            s.push_str(&format!("REGION {region}\nMETRIC time\n"));
            for x in [2.0f64, 4.0, 8.0, 16.0, 32.0] {
                let v = 1.0 + k * x * x.log2();
                s.push_str(&format!("DATA {} {} {}\n", v * 0.999, v, v * 1.001));
            }
        }
        s
    }

    #[test]
    fn the_component_picks_its_series_by_callpath() {
        let path = write("two.txt", &two_regions());
        let m = modeler("perfcompose").unwrap();
        // Fitted on the minimum of the repetitions (`v·0.999`).
        let scan = fit_component("scan", &path, None, m, &FitOptions::default()).unwrap();
        assert_eq!(scan.rounded(3), "0.999 + 3 * x * log2(x)");
        let sort = fit_component("sort", &path, None, m, &FitOptions::default()).unwrap();
        assert_eq!(sort.rounded(3), "0.999 + 0.5 * x * log2(x)");
        // A callpath picks the series whatever the component is called.
        let s = fit_component("order", &path, Some("sort"), m, &FitOptions::default()).unwrap();
        assert_eq!(s.rounded(3), "0.999 + 0.5 * x * log2(x)");
        let e = fit_component("merge", &path, None, m, &FitOptions::default()).unwrap_err();
        assert!(
            e.message.contains("none is called `merge`"),
            "{}",
            e.message
        );
        assert!(e.origin.ends_with("two.txt"));
    }

    #[test]
    fn components_files_fit_their_measurements_on_load() {
        use crate::components::{Components, LoadOptions, DEFAULT_FITTER};
        let dir = write("two.txt", &two_regions())
            .parent()
            .unwrap()
            .to_path_buf();
        let toml =
            "[components.scan]\nmeasurements = \"two.txt\"\n\n[components.inc]\nmodel = \"2\"\n";
        let opts = LoadOptions {
            fitter: Some(&DEFAULT_FITTER),
            ..LoadOptions::default()
        };
        let c = Components::parse("design.toml", toml, &dir, opts).unwrap();
        // On the minimum of the repetitions (`v·0.999`), unless the file says otherwise.
        assert_eq!(
            c.get("scan").unwrap().model.rounded(3),
            "0.999 + 3 * x * log2(x)"
        );
        let toml = "[components.scan]\nmeasurements = \"two.txt\"\nmeasure = \"mean\"\n";
        let c = Components::parse("design.toml", toml, &dir, opts).unwrap();
        assert_eq!(
            c.get("scan").unwrap().model.rounded(3),
            "1 + 3 * x * log2(x)"
        );
        // `callpath` picks a series of a shared file, whatever the component is called.
        let toml = "[components.order]\nmeasurements = \"two.txt\"\ncallpath = \"sort\"\n";
        let c = Components::parse("design.toml", toml, &dir, opts).unwrap();
        assert_eq!(
            c.get("order").unwrap().model.rounded(3),
            "0.999 + 0.5 * x * log2(x)"
        );
        // An unknown callpath is located at the callpath, in the components file.
        let toml = "[components.order]\nmeasurements = \"two.txt\"\ncallpath = \"merge\"\n";
        let e = Components::parse("design.toml", toml, &dir, opts).unwrap_err();
        assert_eq!(e.origin, "design.toml");
        assert_eq!(e.line_col(), (3, 12), "{}", e.render());
        assert!(
            e.message.contains("no series with callpath `merge`"),
            "{}",
            e.message
        );
        assert!(
            e.hint.as_deref().unwrap().contains("main->sort, scan"),
            "{:?}",
            e.hint
        );
        // A callpath without measurements is refused where it is written.
        let toml = "[components.order]\nmodel = \"x\"\ncallpath = \"sort\"\n";
        let e = Components::parse("design.toml", toml, &dir, opts).unwrap_err();
        assert_eq!(e.line_col(), (3, 12), "{}", e.render());
        // A component whose series is missing is an error located in the measurements file.
        let toml = "[components.merge]\nmeasurements = \"two.txt\"\n";
        let e = Components::parse("design.toml", toml, &dir, opts).unwrap_err();
        assert!(
            e.message.contains("none is called `merge`"),
            "{}",
            e.message
        );
    }

    #[test]
    fn unreadable_or_unfittable_files_are_located_errors() {
        let m = modeler("perfcompose").unwrap();
        let e = fit_component(
            "scan",
            Path::new("/nonexistent/scan.txt"),
            None,
            m,
            &FitOptions::default(),
        )
        .unwrap_err();
        assert!(e.origin.contains("scan.txt"));
        let bad = write(
            "bad.txt",
            "PARAMETER x\nPOINTS ( 1 )\nREGION r\nMETRIC time\nDATA 1 x\n",
        );
        let e = fit_component("r", &bad, None, m, &FitOptions::default()).unwrap_err();
        assert_eq!(e.line_col().0, 5);
    }
}
