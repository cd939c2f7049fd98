//! The components file (TOML): the models of a design's sequential building blocks.
//!
//! ```toml
//! [components.qsort]
//! model = "1034.17 * x * log2(x)"     # ns per element; x = the component's input size
//! description = "quicksort of the array"
//!
//! [components.shuffle]
//! model = "(m*n - 1) / (m*n) * 12288 * x / 0.125"
//!
//! [components.scan]
//! measurements = "scan.txt"           # fitted on load (`perfcompose predict` plugs in fit::DEFAULT_FITTER)
//!
//! [components.sort]
//! measurements = "blocks.txt"         # a file of several series (`perfcompose measure` appends them)
//! callpath = "sort"                   # the series to fit (default: the file's only one, or the component's name)
//! ```
//!
//! Meaning of the names inside a component model: `x` is the component's own input size
//! (a pattern may substitute it: MapReduce's reduce runs on `d(x)` elements); `m`, `n`
//! and `k` are bound by an enclosing `mapreduce` (nodes, threads per node, keys); every
//! other name stays a free parameter of the composed model and needs a value (`--at`)
//! when the model is evaluated.
//!
//! A `[machine]` table fixes machine parameters for every model of the file (a
//! calibration's `alpha`, `beta`, `T_flops`, ...): each name is replaced by its value as
//! the models are read.
//!
//! ```toml
//! [machine]
//! alpha = 2.6e-6     # s, from a ping-pong
//! beta = 4.8e-11     # s per byte
//!
//! [components.sync]
//! model = "allreduce_ring(p, 8 * x)"
//! ```
//!
//! The table may also come from a file of its own, named at the top of the components
//! file (before any table): `machine_file = "network.toml"` reads that file's `[machine]`
//! table (what `perfcompose calibrate network --machine-out` writes); a value the
//! components file's own `[machine]` table gives as well overrides the file's.
//!
//! Model strings are parsed with a pluggable function library
//! ([`crate::model::Functions`]), and a bad model is reported at its own line and column
//! inside the TOML file. A component given by `measurements = "file"` is handed to a
//! [`Fitter`]; without one, loading fails with a located "not supported yet" error.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::diag::{Diagnostic, Span};
use crate::model::{parse_model_with, Expr, Functions, NoFunctions};
use crate::term::PATTERNS;

/// One building block.
#[derive(Clone, Debug)]
pub struct Component {
    pub name: String,
    pub model: Expr,
    pub description: Option<String>,
    pub source: ComponentSource,
}

/// Where a component's model came from.
#[derive(Clone, Debug, PartialEq)]
pub enum ComponentSource {
    /// A `model = "..."` string, with its position (`file:line:col`).
    Model { text: String, at: String },
    /// Fitted from a measurements file.
    Fitted { path: PathBuf },
    /// Compiled into perfcompose (the seed's Table 1).
    BuiltIn,
}

/// The component models a term is composed from, by name.
#[derive(Clone, Debug, Default)]
pub struct Components {
    /// The file (or `built-in ...`) they came from.
    pub origin: String,
    entries: BTreeMap<String, Component>,
    /// The `[machine]` table: parameters already replaced by these values in every model.
    machine: BTreeMap<String, f64>,
}

/// Fits a model to a measurements file: the hook through which the modeler makes
/// `measurements = "file"` work. Errors are located in the measurements file.
pub trait Fitter {
    /// Fit the series of `component` in `path`: the one `callpath` names when given.
    fn fit(&self, component: &str, path: &Path, callpath: Option<&str>)
        -> Result<Expr, Diagnostic>;
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    components: Option<BTreeMap<String, Spanned<RawComponent>>>,
    machine: Option<BTreeMap<String, Spanned<f64>>>,
    machine_file: Option<Spanned<String>>,
}

/// A file that holds only a `[machine]` table (`calibrate network --machine-out`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMachineFile {
    machine: Option<BTreeMap<String, Spanned<f64>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawComponent {
    model: Option<Spanned<String>>,
    measurements: Option<Spanned<String>>,
    callpath: Option<Spanned<String>>,
    description: Option<String>,
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

    /// Parse the text of a components file.
    pub fn parse(
        origin: &str,
        source: &str,
        base_dir: &Path,
        opts: LoadOptions<'_>,
    ) -> Result<Components, Diagnostic> {
        let raw: RawFile = toml::from_str(source).map_err(|e| {
            let d = toml_error(origin, source, &e);
            if e.message().contains("unknown field") {
                d.with_hint("a component has `model = \"...\"` or `measurements = \"file\"` (with an optional `callpath = \"NAME\"`), and optionally `description`; components live in [components.NAME] tables, machine parameters in a [machine] table or a file named by machine_file = \"FILE\"")
            } else {
                d
            }
        })?;
        let Some(table) = raw.components else {
            return Err(Diagnostic::new(
                origin,
                source,
                Span::new(0, source.len().min(1)),
                "no components defined",
            )
            .with_hint("add e.g.\n[components.qsort]\nmodel = \"1034.17 * x * log2(x)\""));
        };
        let mut machine = BTreeMap::new();
        if let Some(file) = &raw.machine_file {
            let path = base_dir.join(file.get_ref());
            let span = Span::new(file.span().start, file.span().end);
            let text = std::fs::read_to_string(&path).map_err(|e| {
                Diagnostic::new(
                    origin,
                    source,
                    span,
                    format!("cannot read machine file `{}`: {e}", path.display()),
                )
                .with_hint("the path is relative to the components file's directory")
            })?;
            let file_origin = path.display().to_string();
            let parsed: RawMachineFile =
                toml::from_str(&text).map_err(|e| toml_error(&file_origin, &text, &e))?;
            machine = read_machine(&file_origin, &text, parsed.machine.unwrap_or_default())?;
        }
        // The file's own table overrides the machine file's values.
        machine.extend(read_machine(
            origin,
            source,
            raw.machine.unwrap_or_default(),
        )?);
        let mut entries = BTreeMap::new();
        for (key, comp) in table {
            let name = key;
            let key_span = key_span(source, &name, comp.span());
            check_name(&name).map_err(|(msg, hint)| {
                Diagnostic::new(origin, source, key_span, msg).with_hint(hint)
            })?;
            let comp_span = Span::new(comp.span().start, comp.span().end);
            let comp = comp.into_inner();
            if let (Some(cp), None) = (&comp.callpath, &comp.measurements) {
                return Err(Diagnostic::new(
                    origin,
                    source,
                    Span::new(cp.span().start, cp.span().end),
                    format!("component `{name}`: `callpath` picks a series of a measurements file, and there is none"),
                )
                .with_hint("add measurements = \"FILE\", or remove the callpath"));
            }
            let (model, src) = match (comp.model, comp.measurements) {
                (Some(m), None) => {
                    let model = parse_embedded(origin, source, &m, opts.library)?;
                    let (line, col) = crate::diag::line_col(source, m.span().start);
                    let at = format!("{origin}:{line}:{col}");
                    (
                        model,
                        ComponentSource::Model {
                            text: m.into_inner(),
                            at,
                        },
                    )
                }
                (None, Some(file)) => {
                    let span = Span::new(file.span().start, file.span().end);
                    let path = base_dir.join(file.get_ref());
                    let Some(fitter) = opts.fitter else {
                        return Err(Diagnostic::new(
                            origin,
                            source,
                            span,
                            format!(
                                "component `{name}`: fitting measurements is not supported yet"
                            ),
                        )
                        .with_hint("give the component a model instead: model = \"...\""));
                    };
                    let callpath = match &comp.callpath {
                        Some(cp) => {
                            check_callpath(origin, source, &name, cp, &path)?;
                            Some(cp.get_ref().as_str())
                        }
                        None => None,
                    };
                    // A missing file is the components file's mistake: say so there.
                    let model = fitter.fit(&name, &path, callpath).map_err(|d| {
                        if path.exists() {
                            d
                        } else {
                            Diagnostic::new(
                                origin,
                                source,
                                span,
                                format!(
                                    "component `{name}`: measurements file `{}` not found",
                                    path.display()
                                ),
                            )
                            .with_hint("the path is relative to the components file's directory")
                        }
                    })?;
                    (model, ComponentSource::Fitted { path })
                }
                (Some(_), Some(file)) => {
                    return Err(Diagnostic::new(
                        origin,
                        source,
                        Span::new(file.span().start, file.span().end),
                        format!("component `{name}` has both `model` and `measurements`"),
                    )
                    .with_hint("keep one: a model string, or a measurements file to fit"))
                }
                (None, None) => {
                    return Err(Diagnostic::new(
                        origin,
                        source,
                        if comp_span.end > comp_span.start {
                            key_span
                        } else {
                            comp_span
                        },
                        format!("component `{name}` has neither `model` nor `measurements`"),
                    )
                    .with_hint("add model = \"536.185 * x\" (x is the component's input size)"))
                }
            };
            let model = machine
                .iter()
                .fold(model, |m, (p, v)| m.subst(p, &Expr::constant(*v)));
            entries.insert(
                name.clone(),
                Component {
                    name,
                    model,
                    description: comp.description,
                    source: src,
                },
            );
        }
        if entries.is_empty() {
            return Err(Diagnostic::new(
                origin,
                source,
                Span::new(0, source.len().min(1)),
                "no components defined",
            )
            .with_hint("add e.g.\n[components.qsort]\nmodel = \"1034.17 * x * log2(x)\""));
        }
        Ok(Components {
            origin: origin.to_string(),
            entries,
            machine,
        })
    }

    /// The `[machine]` table of the file (its values are already in the models).
    pub fn machine(&self) -> &BTreeMap<String, f64> {
        &self.machine
    }

    /// Components from `(name, model)` pairs (built-in tables, tests).
    pub fn from_models(origin: &str, pairs: &[(&str, &str)]) -> Result<Components, Diagnostic> {
        let mut entries = BTreeMap::new();
        for (name, text) in pairs {
            let o = format!("{origin}: {name}");
            check_name(name).map_err(|(msg, hint)| {
                Diagnostic::new(&o, *name, Span::new(0, name.len()), msg).with_hint(hint)
            })?;
            let model = parse_model_with(&o, text, &NoFunctions)?;
            entries.insert(
                name.to_string(),
                Component {
                    name: name.to_string(),
                    model,
                    description: None,
                    source: ComponentSource::BuiltIn,
                },
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

/// Refuse a `callpath` that names no series of the measurements file `path`, at the
/// callpath in the components file. A file that cannot be read is left to the fitter,
/// which reports it in the file.
fn check_callpath(
    origin: &str,
    source: &str,
    component: &str,
    callpath: &Spanned<String>,
    path: &Path,
) -> Result<(), Diagnostic> {
    let Ok(sets) = crate::measure::read_experiments(path) else {
        return Ok(());
    };
    if crate::fit::file::pick(&sets, component, Some(callpath.get_ref())).is_ok() {
        return Ok(());
    }
    let keys = sets.iter().flat_map(|e| e.series.keys());
    let mut names: Vec<&str> = keys.map(|k| k.callpath.as_str()).collect();
    names.dedup();
    Err(Diagnostic::new(
        origin,
        source,
        Span::new(callpath.span().start, callpath.span().end),
        format!(
            "component `{component}`: `{}` has no series with callpath `{}`",
            path.display(),
            callpath.get_ref()
        ),
    )
    .with_hint(format!("its callpaths: {}", names.join(", "))))
}

/// The component models of seed 000, Table 1 (nanoseconds; `inc` is the block of ten
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

/// The built-in components: seed 000's Table 1.
pub fn seed_table1() -> Components {
    let mut entries = BTreeMap::new();
    for (name, text, what) in SEED000_TABLE1 {
        let model = crate::model::parse_model(text).expect("built-in models parse");
        entries.insert(
            name.to_string(),
            Component {
                name: name.to_string(),
                model,
                description: Some(what.to_string()),
                source: ComponentSource::BuiltIn,
            },
        );
    }
    Components {
        origin: "built-in (seed 000, Table 1)".to_string(),
        entries,
        machine: BTreeMap::new(),
    }
}

/// A TOML syntax or shape error at its line and column.
fn toml_error(origin: &str, source: &str, e: &toml::de::Error) -> Diagnostic {
    let span = e
        .span()
        .map_or(Span::new(0, 0), |r| Span::new(r.start, r.end));
    let mut msg = e.message().trim().replace('\n', "; ");
    if let Some(first) = msg.get(0..1) {
        msg = first.to_lowercase() + &msg[1..];
    }
    Diagnostic::new(origin, source, span, msg)
}

/// The values of a `[machine]` table, each name checked.
fn read_machine(
    origin: &str,
    source: &str,
    table: BTreeMap<String, Spanned<f64>>,
) -> Result<BTreeMap<String, f64>, Diagnostic> {
    let mut machine = BTreeMap::new();
    for (name, value) in table {
        let span = Span::new(value.span().start, value.span().end);
        let key = key_span(source, &name, value.span());
        if let Err((msg, hint)) = check_name(&name) {
            let msg = msg.replace("a component name", "a machine parameter");
            return Err(Diagnostic::new(origin, source, key, msg).with_hint(hint));
        }
        if RESERVED.contains(&name.as_str()) {
            return Err(Diagnostic::new(
                origin,
                source,
                key,
                format!("`{name}` is bound by the patterns and cannot be a machine parameter"),
            )
            .with_hint("x is a component's input size; m, n, k belong to mapreduce"));
        }
        let v = value.into_inner();
        if !v.is_finite() {
            return Err(Diagnostic::new(
                origin,
                source,
                span,
                format!("machine parameter `{name}` must be a finite number"),
            ));
        }
        machine.insert(name, v);
    }
    Ok(machine)
}

/// Where the key naming a component is written. serde gives no spans for map keys, so
/// look for the key text (bare or quoted) standing as a key — after `.`, `{`, `,` or a
/// line start, before `]`, `=` or `.` — nearest to the component's value.
fn key_span(source: &str, name: &str, value: std::ops::Range<usize>) -> Span {
    let b = source.as_bytes();
    let prev = |mut i: usize| {
        while i > 0 && (b[i - 1] == b' ' || b[i - 1] == b'\t') {
            i -= 1;
        }
        if i == 0 {
            b'\n'
        } else {
            b[i - 1]
        }
    };
    let next = |mut i: usize| {
        while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
            i += 1;
        }
        b.get(i).copied().unwrap_or(b'\n')
    };
    let mut best: Option<(usize, Span)> = None;
    for key in [format!("\"{name}\""), format!("'{name}'"), name.to_string()] {
        for (i, _) in source.match_indices(key.as_str()) {
            let j = i + key.len();
            if matches!(prev(i), b'.' | b'{' | b',' | b'\n' | b'[')
                && matches!(next(j), b']' | b'=' | b'.')
            {
                let dist = i.abs_diff(value.start);
                if best.is_none_or(|(d, _)| dist < d) {
                    best = Some((dist, Span::new(i, j)));
                }
            }
        }
    }
    best.map_or(Span::new(value.start, value.end), |(_, s)| s)
}

/// A component name must be usable in a term.
/// Names the patterns bind inside component models (see the module docs).
const RESERVED: &[&str] = &["x", "m", "n", "k"];

fn check_name(name: &str) -> Result<(), (String, String)> {
    let mut chars = name.chars();
    let ok = matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ok {
        return Err((
            format!("`{name}` cannot be used as a component name"),
            "names start with a letter or `_` and contain letters, digits and `_`".to_string(),
        ));
    }
    if PATTERNS.contains(&name) {
        return Err((
            format!("`{name}` is a pattern and cannot name a component"),
            format!("pick another name; {} are patterns", PATTERNS.join(", ")),
        ));
    }
    Ok(())
}

/// Parse a model string found in a TOML file, reporting errors at their position in
/// the file.
fn parse_embedded(
    origin: &str,
    source: &str,
    value: &Spanned<String>,
    library: &dyn Functions,
) -> Result<Expr, Diagnostic> {
    let text = value.get_ref();
    let span = value.span();
    let raw = source.get(span.clone()).unwrap_or("");
    // Where the string's content starts inside its quotes.
    let mut offset = if raw.starts_with("\"\"\"") || raw.starts_with("'''") {
        3
    } else if raw.starts_with('"') || raw.starts_with('\'') {
        1
    } else {
        0
    };
    if offset == 3 {
        // TOML trims a newline right after the opening delimiter.
        if raw[3..].starts_with("\r\n") {
            offset += 2;
        } else if raw[3..].starts_with('\n') {
            offset += 1;
        }
    }
    let start = span.start + offset;
    let verbatim = source.get(start..start + text.len()) == Some(text.as_str());
    parse_model_with(origin, text, library).map_err(|d| {
        if verbatim {
            d.embed(origin, source, start)
        } else {
            // Escapes make positions inside the string unreliable: point at the string.
            let mut d = d.embed(origin, source, 0);
            d.span = Span::new(span.start, span.end);
            d
        }
    })
}

#[cfg(test)]
mod tests {
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
            ) -> Result<Expr, Diagnostic> {
                assert_eq!(callpath, None);
                assert_eq!(component, "scan");
                assert_eq!(path, Path::new("data/scan.txt"));
                Ok(Expr::constant(3.0))
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
        let src = "[machine]\nalpha = 2e-6\nbeta = 1\n\n[components.msg]\nmodel = \"hockney(8 * x) + gamma\"\n";
        let opts = LoadOptions {
            library: &Lib,
            ..LoadOptions::default()
        };
        let c = Components::parse("m.toml", src, Path::new("."), opts).unwrap();
        assert_eq!(
            c.get("msg").unwrap().model.to_string(),
            "2e-6 + gamma + 8 * x"
        );
        assert_eq!(c.machine().get("beta"), Some(&1.0));
        // Pattern-bound names and non-numbers are rejected where they are written.
        let bad = "[machine]\nx = 3\n[components.a]\nmodel = \"x\"\n";
        let d =
            Components::parse("m.toml", bad, Path::new("."), LoadOptions::default()).unwrap_err();
        assert!(d.message.contains("bound by the patterns"), "{}", d.message);
        assert_eq!(crate::diag::line_col(bad, d.span.start), (2, 1));
        let bad = "[machine]\nalpha = \"fast\"\n[components.a]\nmodel = \"x\"\n";
        assert!(Components::parse("m.toml", bad, Path::new("."), LoadOptions::default()).is_err());
    }

    #[test]
    fn a_machine_file_supplies_the_table_and_the_file_overrides_it() {
        let dir = std::env::temp_dir().join(format!("pc-machine-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("net.toml"),
            "# from calibrate network\n[machine]\nalpha = 3e-6  # s\nbeta = 2\n",
        )
        .unwrap();
        let src = "machine_file = \"net.toml\"\n[machine]\nbeta = 5\n[components.a]\nmodel = \"alpha + beta * x\"\n";
        let c = Components::parse("c.toml", src, &dir, LoadOptions::default()).unwrap();
        assert_eq!(c.get("a").unwrap().model.to_string(), "3e-6 + 5 * x");
        assert_eq!(c.machine().get("alpha"), Some(&3e-6));
        // A missing file is reported where it is named; a bad one at its own line.
        let src = "machine_file = \"none.toml\"\n[components.a]\nmodel = \"x\"\n";
        let d = Components::parse("c.toml", src, &dir, LoadOptions::default()).unwrap_err();
        assert!(
            d.message.contains("cannot read machine file"),
            "{}",
            d.message
        );
        assert_eq!(crate::diag::line_col(src, d.span.start), (1, 16));
        std::fs::write(dir.join("bad.toml"), "[machine]\nalpha = 1\nx = 2\n").unwrap();
        let src = "machine_file = \"bad.toml\"\n[components.a]\nmodel = \"x\"\n";
        let d = Components::parse("c.toml", src, &dir, LoadOptions::default()).unwrap_err();
        assert!(d.message.contains("bound by the patterns"), "{}", d.message);
        assert!(d.origin.ends_with("bad.toml"), "{}", d.origin);
        std::fs::write(dir.join("other.toml"), "[components.a]\nmodel = \"x\"\n").unwrap();
        let src = "machine_file = \"other.toml\"\n[components.a]\nmodel = \"x\"\n";
        assert!(Components::parse("c.toml", src, &dir, LoadOptions::default()).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
