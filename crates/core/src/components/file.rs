//! Reading a components file: the TOML tables, the unit of the models, and each
//! component's model, measurements or stated uncertainty, with every error located in
//! the file (the `[machine]` table and its file: [`super::machine`]).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use super::machine;
use super::stated::RawStated;
use super::{Component, ComponentSource, Components, LoadOptions};
use crate::diag::{Diagnostic, LineIndex, Span};
use crate::measure::Measure;
use crate::model::{parse_model_with, Expr, Functions};
use crate::term::PATTERNS;
use crate::units::TimeUnit;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    /// The unit of every model's times (default: ns).
    unit: Option<Spanned<toml::Value>>,
    components: Option<BTreeMap<String, Spanned<RawComponent>>>,
    machine: Option<machine::RawTable>,
    machine_file: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawComponent {
    model: Option<Spanned<String>>,
    /// The unit of this model's times (default: the file's).
    unit: Option<Spanned<toml::Value>>,
    measurements: Option<Spanned<String>>,
    callpath: Option<Spanned<String>>,
    measure: Option<Spanned<String>>,
    description: Option<String>,
    relative_error: Option<Spanned<f64>>,
    stderr: Option<Spanned<Vec<f64>>>,
    covariance: Option<Spanned<Vec<Vec<f64>>>>,
    measured: Option<Spanned<BTreeMap<String, Vec<f64>>>>,
}

impl Components {
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
                d.with_hint("a component has `model = \"...\"` or `measurements = \"file\"` (with an optional `callpath = \"NAME\"` and `measure = \"minimum\"`), and optionally `description` and `unit`; a model may state `relative_error`, `stderr` or `covariance`, and `measured`; components live in [components.NAME] tables, machine parameters in a [machine] table or a file named by machine_file = \"FILE\"; the file's top may state unit = \"s\" (or ms, us, ns)")
            } else {
                d
            }
        })?;
        let Some(table) = raw.components else {
            return Err(no_components(origin, source));
        };
        let file_unit = match &raw.unit {
            Some(u) => machine::unit_of(origin, source, u)?,
            None => TimeUnit::INTERNAL,
        };
        let mut machine = match &raw.machine_file {
            Some(file) => machine::read_file(origin, source, base_dir, file)?,
            None => BTreeMap::new(),
        };
        // The file's own table overrides the machine file's values.
        machine.extend(machine::read_table(
            origin,
            source,
            raw.machine.unwrap_or_default(),
            None,
        )?);
        let mut entries = BTreeMap::new();
        // Both are looked up once per component: the line index makes each look-up cost
        // its own line, and the key's span (a search of the whole file) is found only for
        // an error.
        let lines = LineIndex::new(source);
        for (key, comp) in table {
            let name = key;
            let value_span = comp.span();
            let key_span = || key_span(source, &name, value_span.clone());
            check_name(&name).map_err(|(msg, hint)| {
                Diagnostic::new(origin, source, key_span(), msg).with_hint(hint)
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
            if let (Some(m), None) = (&comp.measure, &comp.measurements) {
                return Err(Diagnostic::new(
                    origin,
                    source,
                    Span::new(m.span().start, m.span().end),
                    format!("component `{name}`: `measure` picks the statistic of a measurements file's repetitions, and there is none"),
                )
                .with_hint("add measurements = \"FILE\", or remove the measure"));
            }
            let measure = comp
                .measure
                .as_ref()
                .map(|m| read_measure(origin, source, &name, m))
                .transpose()?;
            let stated = RawStated {
                relative_error: comp.relative_error,
                stderr: comp.stderr,
                covariance: comp.covariance,
                measured: comp.measured,
            };
            stated.check_keys(origin, source, &name, comp.measurements.is_some())?;
            let (model, src, fitted) = match (comp.model, comp.measurements) {
                (Some(m), None) => {
                    let model = parse_embedded(origin, source, &m, opts.library)?;
                    let (line, col) = lines.line_col(source, m.span().start);
                    let at = format!("{origin}:{line}:{col}");
                    (
                        model,
                        ComponentSource::Model {
                            text: m.into_inner(),
                            at,
                        },
                        None,
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
                    let fitted = fitter.fit(&name, &path, callpath, measure).map_err(|d| {
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
                    (
                        fitted.model.clone(),
                        ComponentSource::Fitted {
                            path,
                            measure: fitted.measure,
                        },
                        Some(fitted),
                    )
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
                            key_span()
                        } else {
                            comp_span
                        },
                        format!("component `{name}` has neither `model` nor `measurements`"),
                    )
                    .with_hint("add model = \"536.185 * x\" (x is the component's input size)"))
                }
            };
            let unit = match &comp.unit {
                Some(u) => machine::unit_of(origin, source, u)?,
                None => file_unit,
            };
            // The model is written in `unit`, its machine parameters too; the whole is
            // then converted to nanoseconds (a model is a time: scaling every time in
            // it scales its value).
            let model = machine.iter().fold(model, |m, (p, v)| {
                m.subst(p, &Expr::constant(unit.from_internal(v.ns)))
            });
            let (measured, uncertainty) = match fitted {
                Some(f) => (f.measured, f.uncertainty),
                None => stated.read(origin, source, &name, &model)?,
            };
            let (model, uncertainty) = if unit == TimeUnit::INTERNAL {
                (model, uncertainty)
            } else {
                let f = unit.nanoseconds();
                (
                    Expr::mul(Expr::constant(f), model),
                    uncertainty.map(|u| u.scaled(f)),
                )
            };
            entries.insert(
                name.clone(),
                Component {
                    name,
                    model,
                    description: comp.description,
                    source: src,
                    measured,
                    uncertainty,
                },
            );
        }
        if entries.is_empty() {
            return Err(no_components(origin, source));
        }
        Ok(Components {
            origin: origin.to_string(),
            entries,
            machine,
        })
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

/// The statistic a component's `measure = "..."` names, or an error at the value.
fn read_measure(
    origin: &str,
    source: &str,
    component: &str,
    value: &Spanned<String>,
) -> Result<Measure, Diagnostic> {
    let text = value.get_ref();
    Measure::ALL
        .into_iter()
        .find(|m| m.name() == text)
        .ok_or_else(|| {
            let names: Vec<&str> = Measure::ALL.iter().map(|m| m.name()).collect();
            Diagnostic::new(
                origin,
                source,
                Span::new(value.span().start, value.span().end),
                format!("component `{component}`: unknown statistic `{text}`"),
            )
            .with_hint(format!(
                "measure is one of {} (default: {})",
                names.join(", "),
                Measure::default()
            ))
        })
}

/// A file without a component, at its start.
fn no_components(origin: &str, source: &str) -> Diagnostic {
    Diagnostic::new(
        origin,
        source,
        Span::new(0, source.len().min(1)),
        "no components defined",
    )
    .with_hint("add e.g.\n[components.qsort]\nmodel = \"1034.17 * x * log2(x)\"")
}

/// A TOML syntax or shape error at its line and column.
pub(super) fn toml_error(origin: &str, source: &str, e: &toml::de::Error) -> Diagnostic {
    let span = e
        .span()
        .map_or(Span::new(0, 0), |r| Span::new(r.start, r.end));
    let mut msg = e.message().trim().replace('\n', "; ");
    if let Some(first) = msg.get(0..1) {
        msg = first.to_lowercase() + &msg[1..];
    }
    Diagnostic::new(origin, source, span, msg)
}

/// Where the key naming a component is written. serde gives no spans for map keys, so
/// look for the key text (bare or quoted) standing as a key — after `.`, `{`, `,` or a
/// line start, before `]`, `=` or `.` — nearest to the component's value.
pub(super) fn key_span(source: &str, name: &str, value: std::ops::Range<usize>) -> Span {
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
pub(super) const RESERVED: &[&str] = &["x", "m", "n", "k"];

pub(super) fn check_name(name: &str) -> Result<(), (String, String)> {
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
