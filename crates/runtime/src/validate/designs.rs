//! Your own program's designs in a suite file (`[[program]]`): each a term over the
//! blocks of a components file and a command that runs the program so designed, at
//! sizes `x`. They are validated as `validate -- CMD` validates one program
//! ([`super::program`]), and measured in the same rounds as each other — every design
//! once a round, in an order that rotates — so that two designs over the same blocks
//! (two thread counts, two structures of one program) are judged as alternatives
//! ([`super::verdict::design_choices`]).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use perfcompose_core::components::{ComponentFitter, Components, LoadOptions};
use perfcompose_core::fit::{modeler, FitOptions};
use perfcompose_core::skeleton::StandardLibrary;
use perfcompose_core::term::parse_term_with;

use super::analyze::INTERVAL_REPLICATES;
use super::options::Options;
use super::program::OwnProgram;
use super::protocol::half;
use super::report::Row;
use super::verdict::Budget;
use crate::bench::{PointStats, Progress, Sampling, Series, PARAMETER};
use crate::command::{CommandLine, Executor, Measurement, TimeFrom};
use crate::error::Error;

/// The group of a program design's row.
pub const DESIGNS_GROUP: &str = "your program's designs";

/// One design of the user's program.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgramDesign {
    /// The design, over the components of `components`.
    pub term: String,
    /// The command that runs the program so designed, through `sh -c`; `{x}` is the
    /// size.
    pub command: String,
    /// The components file (relative paths are the suite file's).
    pub components: PathBuf,
    pub sizes: Vec<u64>,
    /// Take the time the program prints (a regular expression, as `--time-from`).
    pub time_from: Option<String>,
}

impl ProgramDesign {
    /// The design with a relative components path made the suite file's (in `dir`).
    pub fn relative_to(mut self, dir: &Path) -> ProgramDesign {
        if self.components.is_relative() {
            self.components = dir.join(&self.components);
        }
        self
    }
}

/// A design ready to measure.
struct Ready {
    own: OwnProgram,
    measurement: Measurement,
    points: Vec<Vec<(String, f64)>>,
    rounds: Vec<Series>,
    seconds: f64,
}

fn prepare(d: &ProgramDesign, sampling: &Sampling, opts: &Options) -> Result<Ready, Error> {
    let term = parse_term_with("<suite>", &d.term, &StandardLibrary)?;
    let m = modeler(&opts.modeler).ok_or_else(|| Error::UnknownModeler {
        name: opts.modeler.clone(),
    })?;
    let fitter = ComponentFitter {
        modeler: m,
        options: FitOptions {
            measure: Some(opts.measure),
            allow_negative: false,
            breaks: Vec::new(),
        },
        replicates: INTERVAL_REPLICATES,
    };
    let components = Components::load(
        &d.components,
        LoadOptions {
            library: &StandardLibrary,
            fitter: Some(&fitter),
        },
    )?;
    let parameters = [PARAMETER.to_string()];
    let measurement = Measurement {
        command: CommandLine::script(&d.command, &parameters)?,
        prepare: None,
        time_from: d.time_from.as_deref().map(TimeFrom::new).transpose()?,
        sampling: Sampling {
            min_sample: Duration::ZERO,
            ..half(sampling)
        },
    };
    Ok(Ready {
        own: OwnProgram::new(&term, &components, opts)?,
        measurement,
        points: d
            .sizes
            .iter()
            .map(|&x| vec![(PARAMETER.to_string(), x as f64)])
            .collect(),
        rounds: Vec::new(),
        seconds: 0.0,
    })
}

/// Measure `designs` in shared rounds under `budget` (each point sampled with half of
/// `sampling`, as a suite's round), the processes started by `exec`; one row each, in
/// their order.
pub fn run_designs(
    designs: &[ProgramDesign],
    budget: Budget,
    sampling: &Sampling,
    opts: &Options,
    exec: &mut dyn Executor,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Vec<Row>, Error> {
    let mut ready = designs
        .iter()
        .map(|d| prepare(d, sampling, opts))
        .collect::<Result<Vec<_>, Error>>()?;
    let mut r = 0;
    while !ready.is_empty() {
        let open = ready.iter().any(|d| d.own.open(&d.rounds, opts));
        let seconds = ready.iter().map(|d| d.seconds).sum::<f64>() / ready.len() as f64;
        if !budget.another(r, seconds, open) {
            break;
        }
        let n = ready.len();
        for j in 0..n {
            let d = &mut ready[(j + r) % n];
            let start = Instant::now();
            let name = d.own.term.root.to_string();
            let label = format!("{name} (round {})", r + 1);
            let mut stats = Vec::with_capacity(d.points.len());
            for (i, point) in d.points.iter().enumerate() {
                progress(Progress {
                    label: &label,
                    x: point[0].1 as u64,
                    done: i,
                    total: d.points.len(),
                });
                let m = d.measurement.point(exec, point)?;
                stats.push(PointStats::summarise(
                    point[0].1 as u64,
                    m.values,
                    1,
                    m.converged,
                ));
            }
            d.rounds.push(Series::program(name, stats));
            d.seconds += start.elapsed().as_secs_f64();
        }
        r += 1;
    }
    ready
        .iter()
        .map(|d| {
            let mut report = d.own.report(&d.rounds, Some(budget), opts)?;
            let mut row = report.rows.remove(0);
            row.group = DESIGNS_GROUP.to_string();
            Ok(row)
        })
        .collect()
}
