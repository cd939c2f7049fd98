//! The components file (TOML): the models of a design's sequential building blocks.
//!
//! ```toml
//! [components.qsort]
//! model = "1034.17 * x * log2(x)"     # ns per element (the default unit); x = the component's input size
//! description = "quicksort of the array"
//!
//! [components.shuffle]
//! model = "(m*n - 1) / (m*n) * 12288 * x / 0.125"
//!
//! [components.scan]
//! measurements = "scan.txt"           # fitted on load (`perfcompose predict` plugs in components::DEFAULT_FITTER)
//!
//! [components.sort]
//! measurements = "blocks.txt"         # a file of several series (`perfcompose measure` appends them)
//! callpath = "sort"                   # the series to fit (default: the file's only one, or the component's name)
//! measure = "median"                  # the statistic of the repetitions fitted (default: the minimum)
//! ```
//!
//! Meaning of the names inside a component model: `x` is the component's own input size
//! (a pattern may substitute it: MapReduce's reduce runs on `d(x)` elements); `m`, `n`
//! and `k` are bound by an enclosing `mapreduce` (nodes, threads per node, keys); every
//! other name stays a free parameter of the composed model and needs a value (`--at`)
//! when the model is evaluated.
//!
//! Units: every model of a components file is a time in nanoseconds unless the file
//! says otherwise, at its top (`unit = "s"`, for every model) or per component (`unit =
//! "us"` in its table); `s`, `ms`, `us` (`µs`) and `ns` are understood. Models are
//! converted to nanoseconds as they are read ([`crate::units`]), so that the models
//! composed together are always in one unit.
//!
//! ```toml
//! unit = "s"                          # every model below is in seconds ...
//!
//! [components.leaf]
//! model = "8.3e-8 * N + 2.56e-7 * x"
//!
//! [components.scan]
//! model = "536.185 * x"
//! unit = "ns"                         # ... except this one
//! ```
//!
//! A `[machine]` table fixes machine parameters for every model of the file (a
//! calibration's `alpha`, `beta`, `T_flops`, ...): each name is replaced by its value as
//! the models are read, in the unit of the model that uses it. The table must state the
//! unit of its values, which are times (or times per byte, word or flop):
//!
//! ```toml
//! [machine]
//! unit = "s"
//! alpha = 2.6e-6     # s, from a ping-pong
//! beta = 4.8e-11     # s per byte
//!
//! [components.sync]
//! model = "allreduce_ring(p, 8 * x)"
//! ```
//!
//! The table may also come from a file of its own, named at the top of the components
//! file (before any table): `machine_file = "network.toml"` reads that file's `[machine]`
//! table (what `perfcompose calibrate network --machine-out` writes; versioned, see
//! [`machine`]); a value the components file's own `[machine]` table gives as well
//! overrides the file's.
//!
//! Model strings are parsed with a pluggable function library
//! ([`crate::model::Functions`]), and a bad model is reported at its own line and column
//! inside the TOML file. A component given by `measurements = "file"` is handed to a
//! [`Fitter`]; without one, loading fails with a located "not supported yet" error.

mod file;
mod fitted;
pub mod machine;
mod stated;
#[cfg(test)]
mod tests;

pub use fitted::{measured_ranges, ComponentFitter, DEFAULT_FITTER};
pub use machine::{MachineParam, MACHINE_FILE_VERSION};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::diag::{Diagnostic, Span};
use crate::measure::Measure;
use crate::model::{parse_model_with, Expr, Functions, NoFunctions};
use crate::uncertainty::Uncertainty;

/// One building block.
#[derive(Clone, Debug)]
pub struct Component {
    pub name: String,
    pub model: Expr,
    pub description: Option<String>,
    pub source: ComponentSource,
    /// The range of each parameter the model was measured over (from its measurements,
    /// or `measured = { x = [lo, hi] }`); empty when unknown.
    pub measured: BTreeMap<String, [f64; 2]>,
    /// The model's uncertainty; `None`: the model is taken as exact.
    pub uncertainty: Option<Uncertainty>,
}

impl Component {
    /// A component given by its model alone (no known range, no uncertainty).
    pub fn exact(name: &str, model: Expr, source: ComponentSource) -> Component {
        Component {
            name: name.to_string(),
            model,
            description: None,
            source,
            measured: BTreeMap::new(),
            uncertainty: None,
        }
    }
}

/// Where a component's model came from.
#[derive(Clone, Debug, PartialEq)]
pub enum ComponentSource {
    /// A `model = "..."` string, with its position (`file:line:col`).
    Model { text: String, at: String },
    /// Fitted from a measurements file, on a statistic of each point's repetitions.
    Fitted { path: PathBuf, measure: Measure },
    /// Compiled into perfcompose (the paper's Table 1).
    BuiltIn,
}

/// The component models a term is composed from, by name.
#[derive(Clone, Debug, Default)]
pub struct Components {
    /// The file (or `built-in ...`) they came from.
    pub origin: String,
    entries: BTreeMap<String, Component>,
    /// The `[machine]` table: parameters already replaced by these values in every model.
    machine: BTreeMap<String, MachineParam>,
}

/// What fitting a component's measurements gives.
#[derive(Clone, Debug)]
pub struct Fitted {
    pub model: Expr,
    /// The smallest and largest measured value of each parameter.
    pub measured: BTreeMap<String, [f64; 2]>,
    pub uncertainty: Option<Uncertainty>,
    /// The statistic of the repetitions the model was fitted to.
    pub measure: Measure,
}

impl Fitted {
    /// A model alone (no range, no uncertainty), fitted to the default statistic.
    pub fn model(model: Expr) -> Fitted {
        Fitted {
            model,
            measured: BTreeMap::new(),
            uncertainty: None,
            measure: Measure::default(),
        }
    }
}

/// Fits a model to a measurements file: the hook through which the modeler makes
/// `measurements = "file"` work. Errors are located in the measurements file.
pub trait Fitter {
    /// Fit the series of `component` in `path`: the one `callpath` names when given, on
    /// the statistic `measure` of each point's repetitions when given (the component's
    /// `measure = "..."`), else on the fitter's own.
    fn fit(
        &self,
        component: &str,
        path: &Path,
        callpath: Option<&str>,
        measure: Option<Measure>,
    ) -> Result<Fitted, Diagnostic>;
}

/// How to read a components file.
#[derive(Clone, Copy)]
pub struct LoadOptions<'a> {
    /// Functions model strings may call (e.g. the communication library's collectives).
    pub library: &'a dyn Functions,
    /// Fits `measurements = "file"` components; `None`: such components are an error.
    pub fitter: Option<&'a dyn Fitter>,
}

impl Default for LoadOptions<'_> {
    fn default() -> Self {
        LoadOptions {
            library: &NoFunctions,
            fitter: None,
        }
    }
}

impl LoadOptions<'static> {
    /// How the commands (and the Python package) read components files: every function
    /// of the model language ([`crate::skeleton::StandardLibrary`]) and measurements
    /// fitted by [`DEFAULT_FITTER`].
    pub fn standard() -> LoadOptions<'static> {
        LoadOptions {
            library: &crate::skeleton::StandardLibrary,
            fitter: Some(&DEFAULT_FITTER),
        }
    }
}

/// A grid value for a parameter that the components file's `[machine]` table fixes: it
/// would be silently ignored ([`Components::check_grid`]).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("`{name}` is fixed to {} ns by the [machine] table at {at}; remove it there to vary it with --at", crate::model::format_significant(*ns, 6))]
pub struct FixedByMachine {
    pub name: String,
    /// The fixed value (ns) and where the table gives it.
    pub ns: f64,
    pub at: String,
}

impl Components {
    /// Read and parse a components file; relative measurement paths are resolved
    /// against the file's directory.
    pub fn load(path: &Path, opts: LoadOptions<'_>) -> Result<Components, Diagnostic> {
        let origin = path.display().to_string();
        let source = std::fs::read_to_string(path).map_err(|e| {
            Diagnostic::whole(&origin, format!("cannot read the components file: {e}"))
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        Components::parse(&origin, &source, base, opts)
    }

    /// Refuse grid values for `names` (`--at NAME=...`) that the `[machine]` table fixes.
    pub fn check_grid<'a>(
        &self,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Result<(), FixedByMachine> {
        match names
            .into_iter()
            .find_map(|n| self.machine.get_key_value(n))
        {
            Some((name, p)) => Err(FixedByMachine {
                name: name.clone(),
                ns: p.ns,
                at: p.at.clone(),
            }),
            None => Ok(()),
        }
    }

    /// The `[machine]` table of the file, in nanoseconds, with where each value was
    /// written (its values are already in the models).
    pub fn machine(&self) -> &BTreeMap<String, MachineParam> {
        &self.machine
    }

    /// Components from `(name, model)` pairs (built-in tables, tests).
    pub fn from_models(origin: &str, pairs: &[(&str, &str)]) -> Result<Components, Diagnostic> {
        let mut entries = BTreeMap::new();
        for (name, text) in pairs {
            let o = format!("{origin}: {name}");
            file::check_name(name).map_err(|(msg, hint)| {
                Diagnostic::new(&o, *name, Span::new(0, name.len()), msg).with_hint(hint)
            })?;
            let model = parse_model_with(&o, text, &NoFunctions)?;
            entries.insert(
                name.to_string(),
                Component::exact(name, model, ComponentSource::BuiltIn),
            );
        }
        Ok(Components {
            origin: origin.to_string(),
            entries,
            machine: BTreeMap::new(),
        })
    }

    /// Add or replace a component (returns a new set; sets are values).
    pub fn with(mut self, c: Component) -> Components {
        self.entries.insert(c.name.clone(), c);
        self
    }

    pub fn get(&self, name: &str) -> Option<&Component> {
        self.entries.get(name)
    }

    /// Component names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Component> {
        self.entries.values()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The component models of the pattern-composition paper, Table 1 (nanoseconds; `inc` is the block of ten
/// increments used in every configuration of the paper), plus the Hadoop shuffle of its
/// eq. 7 over the 1 Gb/s link (0.125 bytes/ns).
pub const SEED000_TABLE1: &[(&str, &str, &str)] = &[
    ("nop", "5422.97", "no operation (row 1)"),
    (
        "inc",
        "536.185 * x",
        "ten increments of every element (row 2)",
    ),
    ("qsort", "1034.17 * x * log2(x)", "quicksort (row 3)"),
    (
        "map_own_small",
        "197598",
        "histogram map, small picture (row 4)",
    ),
    (
        "map_own_medium",
        "1274060",
        "histogram map, medium picture (row 5)",
    ),
    (
        "map_own_large",
        "11410300",
        "histogram map, large picture (row 6)",
    ),
    (
        "reduce_p",
        "38316",
        "pairwise reduce of two histograms (row 7)",
    ),
    (
        "reduce_v",
        "0.353395 * x",
        "per-key reduce of x values (row 8)",
    ),
    ("map_grppi", "1.241e7", "GrPPI map (row 9)"),
    ("reduce_grppi", "9.449e6", "GrPPI reduce (row 10)"),
    ("map_hadoop", "3.529e7", "Hadoop map (row 11)"),
    ("reduce_hadoop", "9376 * x", "Hadoop reduce (row 12)"),
    (
        "transfer",
        "0.125 * x",
        "the link, as Table 1 lists it (row 13)",
    ),
    (
        "shuffle_hadoop",
        "(m*n - 1) / (m*n) * 12288 * x / 0.125",
        "Hadoop shuffle: (mn-1)/(mn) of 12288-byte histograms over 0.125 bytes/ns (eq. 7)",
    ),
];

/// The built-in components: the pattern-composition paper's Table 1.
pub fn seed_table1() -> Components {
    let mut entries = BTreeMap::new();
    for (name, text, what) in SEED000_TABLE1 {
        let model = crate::model::parse_model(text).expect("built-in models parse");
        entries.insert(
            name.to_string(),
            Component {
                description: Some(what.to_string()),
                ..Component::exact(name, model, ComponentSource::BuiltIn)
            },
        );
    }
    Components {
        origin: "built-in (the pattern-composition paper's Table 1 blocks)".to_string(),
        entries,
        machine: BTreeMap::new(),
    }
}
