//! The commands with a JSON output, as functions returning that JSON as text: each
//! reads its inputs and calls the library as its subcommand in `crates/cli/src/cmd/`
//! does, and serialises the same value (the Python half documents the arguments).

use std::path::{Path, PathBuf};
use std::time::Instant;

use perfcompose_core::compose::interval::IntervalOptions;
use perfcompose_core::compose::laws::{attach_confidence, check_laws, compare_terms};
use perfcompose_core::compose::predict::{predict_with, PredictOptions, PredictionJson};
use perfcompose_core::compose::ComposeOptions;
use perfcompose_core::fit::output::{fit_experiments, models_json, Plan};
use perfcompose_core::fit::{self as fitting, FitOptions, Measure, DEFAULT_MODELER};
use perfcompose_core::measure::csv::CsvOptions;
use perfcompose_core::measure::{read_experiments_with, read_str_experiments, Format, ReadOptions};
use perfcompose_core::model::Expr;
use perfcompose_core::optimize::{optimize as optimize_design, Request};
use perfcompose_core::skeleton::StandardLibrary;
use perfcompose_core::term::parse_term_with;
use perfcompose_runtime::overhead::{overhead_for, OverheadError};
use perfcompose_sim::platform::{read_hostfile, Platform};
use perfcompose_sim::trace::{LegacyCompute, ReaderOptions, TraceSet, DEFAULT_WINDOW};
use perfcompose_sim::{output, Config, NetworkModel, SimError};
use pyo3::prelude::*;

use crate::{components, grid, run, Failure, PathArg};

/// Pretty JSON, as the command prints it (without its final newline).
fn json_text(v: &impl serde::Serialize) -> Result<String, Failure> {
    serde_json::to_string_pretty(v).map_err(|e| Failure::chain(&e))
}

/// A confidence level strictly between 0 and 1 (the command's `--level`).
fn level(l: Option<f64>) -> Result<f64, Failure> {
    match l {
        None => Ok(IntervalOptions::default().level),
        Some(v) if v > 0.0 && v < 1.0 => Ok(v),
        Some(v) => Err(Failure::Plain(format!(
            "level={v} is not a confidence level: give a number between 0 and 1, e.g. 0.95"
        ))),
    }
}

/// A core count of at least 1.
fn cores_arg(name: &str, c: Option<u64>) -> Result<Option<u64>, Failure> {
    match c {
        Some(0) => Err(Failure::Plain(format!("{name}=0: give at least 1 core"))),
        c => Ok(c),
    }
}

/// `perfcompose predict --json`.
#[pyfunction]
#[pyo3(signature = (term=None, term_file=None, components_path=None, components_table=None, at=Vec::new(), cores=None, level=None, advise=false, overhead=false, calibration=None))]
#[allow(clippy::too_many_arguments)]
pub fn predict(
    py: Python<'_>,
    term: Option<String>,
    term_file: PathArg,
    components_path: PathArg,
    components_table: Option<String>,
    at: Vec<String>,
    cores: Option<u64>,
    level: Option<f64>,
    advise: bool,
    overhead: bool,
    calibration: PathArg,
) -> PyResult<String> {
    run(py, move || {
        let with_components = components_path.is_some() || components_table.is_some();
        let components = components(components_path.as_deref(), components_table.as_deref())?;
        let term = match (term, term_file) {
            (Some(t), None) => parse_term_with("<term>", &t, &StandardLibrary)?,
            (None, Some(f)) => {
                let text = std::fs::read_to_string(&f).map_err(|e| {
                    Failure::Plain(format!("cannot read the term file {}: {e}", f.display()))
                })?;
                parse_term_with(&f.display().to_string(), &text, &StandardLibrary)?
            }
            _ => {
                return Err(Failure::Plain(
                    "give the term as an argument or with term_file, not both".into(),
                ))
            }
        };
        let grid = grid(&at, &components)?;
        let opts = ComposeOptions {
            cores: cores_arg("cores", cores)?,
        };
        let how = PredictOptions {
            intervals: IntervalOptions {
                level: self::level(level)?,
                ..IntervalOptions::default()
            },
            advise,
        };
        let added = if overhead || calibration.is_some() {
            Some(
                overhead_for(&term, with_components, calibration.as_deref())
                    .map_err(|e| overhead_failure(&e))?,
            )
        } else {
            None
        };
        let p = predict_with(
            &term,
            &components,
            opts,
            &grid,
            added.as_ref().map(|a| &a.overhead),
            how,
        )?;
        json_text(&PredictionJson {
            prediction: &p,
            calibration: added.as_ref().map(|a| a.path.as_path()),
        })
    })
}

/// An overhead that cannot be added: a design the runtime does not run is located in the
/// term (the diagnostic), with the reason above it.
fn overhead_failure(e: &OverheadError) -> Failure {
    match e {
        OverheadError::NotADesign(n) => {
            let mut d = n.cause.clone();
            d.message = format!("{e}: {}", d.message);
            Failure::Located(d)
        }
        e => Failure::chain(e),
    }
}

/// `perfcompose check --json`: two designs compared, or (`laws`) the relational laws.
#[pyfunction]
#[pyo3(signature = (first=None, second=None, laws=false, components_path=None, components_table=None, at=Vec::new(), cores=None, level=None))]
#[allow(clippy::too_many_arguments)]
pub fn check(
    py: Python<'_>,
    first: Option<String>,
    second: Option<String>,
    laws: bool,
    components_path: PathArg,
    components_table: Option<String>,
    at: Vec<String>,
    cores: Option<u64>,
    level: Option<f64>,
) -> PyResult<String> {
    run(py, move || {
        let components = components(components_path.as_deref(), components_table.as_deref())?;
        let grid = grid(&at, &components)?;
        let opts = ComposeOptions {
            cores: cores_arg("cores", cores)?,
        };
        let (first, second) = match (laws, first, second) {
            (true, None, None) => return json_text(&check_laws(&components, opts, &grid)),
            (false, Some(a), Some(b)) => (a, b),
            _ => {
                return Err(Failure::Plain(
                    "give two terms to compare, or laws=True (not both)".into(),
                ))
            }
        };
        let first = parse_term_with("<first term>", &first, &StandardLibrary)?;
        let second = parse_term_with("<second term>", &second, &StandardLibrary)?;
        let mut c = compare_terms(&first, &second, &components, opts, &grid)?;
        let how = IntervalOptions {
            level: self::level(level)?,
            ..IntervalOptions::default()
        };
        attach_confidence(&mut c, &first, &second, &components, opts, how)?;
        json_text(&c)
    })
}

/// `perfcompose optimize --json`.
#[pyfunction]
#[pyo3(signature = (design, cores, at, components_path=None, components_table=None, rewrites=false, top=10))]
#[allow(clippy::too_many_arguments)]
pub fn optimize(
    py: Python<'_>,
    design: String,
    cores: u64,
    at: Vec<String>,
    components_path: PathArg,
    components_table: Option<String>,
    rewrites: bool,
    top: usize,
) -> PyResult<String> {
    run(py, move || {
        let components = components(components_path.as_deref(), components_table.as_deref())?;
        let grid = grid(&at, &components)?;
        if !(1..=65536).contains(&cores) {
            return Err(Failure::Plain(format!(
                "cores={cores}: give between 1 and 65536 cores"
            )));
        }
        if top == 0 {
            return Err(Failure::Plain("top=0: give at least 1 design".into()));
        }
        let mut points = grid.points();
        if points.len() != 1 {
            return Err(Failure::Plain(format!(
                "optimize compares designs at one point; give one value per parameter in at (got {} points)",
                points.len()
            )));
        }
        let req = Request {
            design: &design,
            components: &components,
            cores,
            point: points.remove(0),
            rewrites,
        };
        let mut outcome = optimize_design(&req)?;
        outcome.designs.truncate(top);
        json_text(&outcome)
    })
}

/// The modelers' names and descriptions, the default first (`fit --list-modelers`).
#[pyfunction]
pub fn modelers() -> Vec<(String, String)> {
    fitting::modelers()
        .into_iter()
        .map(|m| (m.name().to_string(), m.description().to_string()))
        .collect()
}

/// `perfcompose fit --json` of `files`, or of one text `(origin, format, text)` (the
/// Python half writes dicts as JSON Lines and data frames as CSV).
#[pyfunction]
#[pyo3(signature = (files=Vec::new(), text=None, modeler=None, measure=None, basis=Vec::new(), allow_negative=false, breaks=Vec::new(), format=None, csv_parameters=Vec::new(), csv_values=Vec::new(), csv_callpath=Vec::new(), csv_metric=None))]
#[allow(clippy::too_many_arguments)]
pub fn fit(
    py: Python<'_>,
    files: Vec<PathBuf>,
    text: Option<(String, String, String)>,
    modeler: Option<String>,
    measure: Option<String>,
    basis: Vec<String>,
    allow_negative: bool,
    breaks: Vec<f64>,
    format: Option<String>,
    csv_parameters: Vec<String>,
    csv_values: Vec<String>,
    csv_callpath: Vec<String>,
    csv_metric: Option<String>,
) -> PyResult<String> {
    run(py, move || {
        let name = modeler.as_deref().unwrap_or(DEFAULT_MODELER);
        let modeler = fitting::modeler(name).ok_or_else(|| {
            let names: Vec<&str> = fitting::modelers().iter().map(|m| m.name()).collect();
            Failure::Plain(format!(
                "unknown modeler `{name}` (known: {})",
                names.join(", ")
            ))
        })?;
        let measure = match measure {
            Some(m) => m
                .parse::<Measure>()
                .map_err(|e| Failure::Plain(format!("measure={m:?}: {e}")))?,
            None => modeler.default_measure(),
        };
        let mut based: Vec<(String, Vec<(String, Expr)>)> = Vec::new();
        for b in basis {
            let parsed = fitting::parse_basis(&b)?;
            based.push((b, parsed));
        }
        if let Some(b) = breaks.iter().find(|b| !b.is_finite() || **b < 0.0) {
            return Err(Failure::Plain(format!(
                "breaks: {b} is not a parameter value (finite, non-negative)"
            )));
        }
        let options = FitOptions {
            measure: Some(measure),
            allow_negative,
            breaks,
        };
        let read = ReadOptions {
            format: format
                .as_deref()
                .map(str::parse::<Format>)
                .transpose()
                .map_err(|e| Failure::Plain(format!("format: {e}")))?,
            allow_negative,
            csv: CsvOptions {
                parameters: csv_parameters,
                values: csv_values,
                callpath: csv_callpath,
                metric: csv_metric,
                ..CsvOptions::default()
            },
            ..ReadOptions::default()
        };
        let plan = Plan {
            modeler,
            bases: &based,
            options: &options,
        };
        let mut fitted = vec![false; based.len()];
        let mut rows = Vec::new();
        for path in &files {
            let sets = read_experiments_with(path, &read)?;
            let origin = path.display().to_string();
            rows.extend(fit_experiments(
                &origin,
                &sets,
                &plan,
                &mut fitted,
                &mut || {},
            )?);
        }
        if let Some((origin, format, text)) = text {
            let format = format
                .parse::<Format>()
                .map_err(|e| Failure::Plain(format!("format: {e}")))?;
            let sets = read_str_experiments(format, &origin, &text, &read)?;
            rows.extend(fit_experiments(
                &origin,
                &sets,
                &plan,
                &mut fitted,
                &mut || {},
            )?);
        }
        if let Some(i) = fitted.iter().position(|f| !f) {
            return Err(Failure::Plain(format!(
                "basis `{}`: no series is over the parameters it uses",
                based[i].0
            )));
        }
        json_text(&models_json(&rows, name, measure))
    })
}

/// Write a file through a buffer, naming it in errors.
fn write_file(
    path: &Path,
    f: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), Failure> {
    let written = std::fs::File::create(path).and_then(|file| {
        let mut w = std::io::BufWriter::new(file);
        f(&mut w)?;
        std::io::Write::flush(&mut w)
    });
    written.map_err(|e| Failure::Plain(format!("cannot write {}: {e}", path.display())))
}

fn sim_failure(e: SimError) -> Failure {
    match e {
        SimError::Trace(t) => t.into(),
        e => Failure::chain(&e),
    }
}

/// `perfcompose simulate --json` of a time-independent trace (OTF2 archives are read by
/// the command).
#[pyfunction]
#[pyo3(signature = (platform, trace, hostfile=None, np=None, network="maxmin".to_string(), coll=Vec::new(), eager_threshold=65536.0, speed_scale=1.0, latency_factor=1.0, bandwidth_factor=1.0, tcp_gamma=0.0, legacy_compute="flops".to_string(), window=DEFAULT_WINDOW, measured_time=None, timeline=None, paje=None))]
#[allow(clippy::too_many_arguments)]
pub fn simulate(
    py: Python<'_>,
    platform: PathBuf,
    trace: PathBuf,
    hostfile: PathArg,
    np: Option<u32>,
    network: String,
    coll: Vec<String>,
    eager_threshold: f64,
    speed_scale: f64,
    latency_factor: f64,
    bandwidth_factor: f64,
    tcp_gamma: f64,
    legacy_compute: String,
    window: usize,
    measured_time: Option<f64>,
    timeline: PathArg,
    paje: PathArg,
) -> PyResult<String> {
    run(py, move || {
        let bad = |what: &str| Err(Failure::Plain(what.to_string()));
        let network = match network.as_str() {
            "maxmin" | "max-min" | "cm02" => NetworkModel::MaxMin,
            "latency-bandwidth" | "lb" | "hockney" => NetworkModel::LatencyBandwidth,
            other => {
                return bad(&format!(
                    "unknown network model '{other}'; use maxmin or latency-bandwidth"
                ))
            }
        };
        let legacy_compute = match legacy_compute.as_str() {
            "flops" => LegacyCompute::Flops,
            "ns" => LegacyCompute::Nanoseconds,
            other => return bad(&format!("legacy_compute: '{other}' is not flops or ns")),
        };
        if eager_threshold.is_nan() || eager_threshold < 0.0 {
            return bad("eager_threshold must not be negative");
        }
        if !(latency_factor >= 0.0 && bandwidth_factor > 0.0 && tcp_gamma >= 0.0) {
            return bad("latency_factor must be >= 0, bandwidth_factor > 0, tcp_gamma >= 0");
        }
        if measured_time.is_some_and(|m| !(m.is_finite() && m > 0.0)) {
            return bad("measured_time must be a positive number of seconds");
        }
        if window == 0 {
            return bad("window must be at least 1");
        }
        if !(speed_scale.is_finite() && speed_scale > 0.0) {
            return bad("speed_scale must be a positive number (2: cores twice as fast)");
        }
        let as_read = Platform::from_file(&platform)?;
        let slots = match &hostfile {
            Some(h) => {
                let text = std::fs::read_to_string(h).map_err(|e| {
                    Failure::Plain(format!("cannot read hostfile {}: {e}", h.display()))
                })?;
                read_hostfile(&h.display().to_string(), &text, &as_read)?
            }
            None => as_read.hosts_sorted_by_name(),
        };
        let traces = TraceSet::open(&trace, np)?;
        let scaled = if speed_scale != 1.0 {
            as_read.with_speeds_scaled(speed_scale)
        } else {
            as_read
        };
        let mut config = Config {
            network,
            detached_threshold: eager_threshold,
            latency_factor,
            bandwidth_factor,
            tcp_gamma,
            reader: ReaderOptions {
                window,
                legacy_compute,
            },
            ..Config::default()
        };
        for spec in &coll {
            config.coll.set(spec).map_err(|e| Failure::chain(&e))?;
        }
        let started = Instant::now();
        let (report, spans) = if timeline.is_some() || paje.is_some() {
            perfcompose_sim::simulate_with_timeline(&scaled, &traces, &slots, &config, &mut |_| {})
        } else {
            perfcompose_sim::simulate(&scaled, &traces, &slots, &config, &mut |_| {})
                .map(|r| (r, Vec::new()))
        }
        .map_err(sim_failure)?;
        let wall = started.elapsed().as_secs_f64();
        if let Some(path) = &timeline {
            write_file(path, |w| {
                perfcompose_sim::timeline::chrome::write(w, &spans, &report)
            })?;
        }
        if let Some(path) = &paje {
            write_file(path, |w| {
                perfcompose_sim::timeline::paje::write(w, &spans, &report)
            })?;
        }
        let notes = output::notes(&scaled, speed_scale, Vec::new(), &report);
        let facts = output::Run {
            platform: Path::new(&platform),
            trace: Path::new(&trace),
            wall_s: wall,
            notes: &notes,
            measured_time_s: measured_time,
        };
        json_text(&output::report_json(&report, &facts))
    })
}
