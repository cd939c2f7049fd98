//! JSON Lines measurements (Extra-P's `.jsonl` input) and the Talpas variant.
//!
//! One JSON object per line; blank lines are skipped:
//!
//! ```text
//! {"params":{"x":20,"y":1},"callpath":"main->solve","metric":"time","value":82.0}
//! {"params":{"x":20,"y":1},"callpath":"main->solve","metric":"time","value":[81.4,81.9]}
//! ```
//!
//! `value` is one repetition or a list of them; lines with the same callpath, metric and
//! parameter values add repetitions to one point. `callpath` defaults to `<root>` and
//! `metric` to `<default>`, as in Extra-P. Other keys are ignored.
//!
//! Lines that name the same parameters (in any order) make one [`Experiment`], whose
//! parameter order is the key order of its first line. A file whose lines name different
//! parameters holds several experiments, one per set of names, in order of first
//! appearance (our extension: Extra-P takes the first line's parameters for the whole file,
//! fails on a line without one of them and ignores extra ones). A series (callpath and
//! metric) is over one set: a line of it that names other parameters is an error, as a
//! missing or unknown parameter.
//!
//! The series of one experiment may be measured at different points (our extension too:
//! one block's grid grows alone, `perfcompose measure --at x=32000 -o blocks.jsonl`).
//! Extra-P 4.2.5 refuses such a file ("The number of measurements (5) for (Callpath(a),
//! Metric(time)) does not match the number of coordinates (6)"); its series at the same
//! points it reads as we do. The Talpas variant keeps Extra-P's rule.
//!
//! Talpas files have the same records with `parameters` instead of `params`, `;` instead
//! of `,` between fields, and mandatory `callpath` and `metric`; every line names the
//! first line's parameters (one experiment).

use std::collections::HashMap;
use std::fmt::Write as _;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::builder::Builder;
use super::raw_json::{json_error, number, raw_span, string, OrderedMap};
use super::{Experiment, ReadOptions, SeriesKey, WriteError};
use crate::diag::{Diagnostic, Span};

/// Extra-P's callpath when a line has none.
pub const DEFAULT_CALLPATH: &str = "<root>";
/// Extra-P's metric when a line has none.
pub const DEFAULT_METRIC: &str = "<default>";

#[derive(Deserialize)]
struct Record<'a> {
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    parameters: Option<&'a RawValue>,
    #[serde(borrow, default)]
    callpath: Option<&'a RawValue>,
    #[serde(borrow, default)]
    metric: Option<&'a RawValue>,
    #[serde(borrow, default)]
    value: Option<&'a RawValue>,
}

#[derive(Clone, Copy, PartialEq)]
enum Dialect {
    JsonLines,
    Talpas,
}

/// Read JSON Lines from memory; `origin` names it in messages. Lines over several sets
/// of parameters are an error here: [`read_all_str`] reads those.
pub fn read_str(origin: &str, text: &str, opts: &ReadOptions) -> Result<Experiment, Diagnostic> {
    super::single(origin, read_all_str(origin, text, opts)?)
}

/// Read JSON Lines from memory: one experiment per set of parameter names (see the
/// module's docs), in order of first appearance.
pub fn read_all_str(
    origin: &str,
    text: &str,
    opts: &ReadOptions,
) -> Result<Vec<Experiment>, Diagnostic> {
    read(origin, text, text, opts, Dialect::JsonLines)
}

/// Read a Talpas file from memory.
pub fn read_talpas_str(
    origin: &str,
    text: &str,
    opts: &ReadOptions,
) -> Result<Experiment, Diagnostic> {
    // Talpas separates fields with `;`. Replacing it by `,` outside strings keeps every
    // byte offset, so spans into the converted text are spans into the file.
    let mut converted = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            converted.push(c);
        } else {
            match c {
                '"' => {
                    in_string = true;
                    converted.push(c);
                }
                '\n' => {
                    in_string = false;
                    converted.push(c);
                }
                ';' => converted.push(','),
                _ => converted.push(c),
            }
        }
    }
    super::single(
        origin,
        read(origin, text, &converted, opts, Dialect::Talpas)?,
    )
}

/// One experiment being read: the sorted names of its parameters, and its builder.
struct Set<'a> {
    names: Vec<String>,
    b: Builder<'a>,
}

fn read(
    origin: &str,
    text: &str,
    parsed: &str,
    opts: &ReadOptions,
    dialect: Dialect,
) -> Result<Vec<Experiment>, Diagnostic> {
    // Messages before a line's experiment is known.
    let b = Builder::new(origin, text, opts);
    let params_key = match dialect {
        Dialect::JsonLines => "params",
        Dialect::Talpas => "parameters",
    };
    let mut sets: Vec<Set> = Vec::new();
    // The experiment of every series, and the span of its first line's parameters.
    let mut series_set: HashMap<SeriesKey, (usize, Span)> = HashMap::new();
    // Span of the first line's parameters (Talpas: every line has the same).
    let mut first_params: Option<Span> = None;
    let mut offset = 0;
    for raw in parsed.split_inclusive('\n') {
        let start = offset;
        offset += raw.len();
        let line = raw.trim_end_matches(['\n', '\r']);
        if line.trim().is_empty() {
            continue;
        }
        let line_span = Span::new(start, start + line.len());
        let rec: Record = serde_json::from_str(line)
            .map_err(|e| json_error(&b, parsed, line, &e, "a JSON object"))?;
        let (params, wrong) = match dialect {
            Dialect::JsonLines => (rec.params, rec.parameters.map(|_| "parameters")),
            Dialect::Talpas => (rec.parameters, rec.params.map(|_| "params")),
        };
        let Some(params) = params else {
            let mut d = b.err(line_span, format!("line has no `{params_key}`"));
            if let Some(w) = wrong {
                d = d.with_hint(format!(
                    "this format names the parameters `{params_key}`, not `{w}`"
                ));
            } else {
                d = d.with_hint(format!(
                    "each line needs `\"{params_key}\": {{\"x\": 20}}` with the parameter values"
                ));
            }
            return Err(d);
        };
        let pspan = raw_span(parsed, params);
        let map = OrderedMap::parse(&b, params, parsed, "an object of parameter values")?;
        if map.0.is_empty() {
            return Err(b.err(pspan, "no parameter values"));
        }
        let mut names: Vec<String> = map.0.iter().map(|(k, _)| k.clone()).collect();
        names.sort_unstable();
        let first = *first_params.get_or_insert(pspan);
        if dialect == Dialect::Talpas {
            if let Some(set) = sets.first().filter(|s| s.names != names) {
                return Err(mismatch(&b, parsed, &map, &set.b.parameters, first, pspan));
            }
        }
        let name_of = |field: Option<&RawValue>, what: &str, default: &str| match field {
            Some(raw) => string(&b, raw, parsed, what),
            None if dialect == Dialect::Talpas => Err(b
                .err(line_span, format!("line has no `{what}`"))
                .with_hint("Talpas lines need `callpath` and `metric`")),
            None => Ok(default.to_string()),
        };
        let callpath = name_of(rec.callpath, "callpath", DEFAULT_CALLPATH)?;
        let metric = name_of(rec.metric, "metric", DEFAULT_METRIC)?;
        let key = SeriesKey::new(callpath, metric);
        let set = match sets.iter().position(|s| s.names == names) {
            Some(i) => i,
            None => {
                let mut nb = Builder::new(origin, text, opts);
                nb.any_points = dialect == Dialect::JsonLines;
                nb.parameters = map.0.iter().map(|(k, _)| k.clone()).collect();
                sets.push(Set { names, b: nb });
                sets.len() - 1
            }
        };
        match series_set.get(&key) {
            Some(&(s, its_first)) if s != set => {
                return Err(mismatch(
                    &b,
                    parsed,
                    &map,
                    &sets[s].b.parameters,
                    its_first,
                    pspan,
                )
                .with_hint(format!(
                    "series `{key}` is measured over one set of parameters; lines over other parameters belong to other series"
                )));
            }
            Some(_) => {}
            None => {
                series_set.insert(key.clone(), (set, pspan));
            }
        }
        let sb = &sets[set].b;
        let mut coord = Vec::with_capacity(sb.parameters.len());
        for name in &sb.parameters {
            let Some((_, v)) = map.0.iter().find(|(k, _)| k == name) else {
                return Err(sb.err(pspan, format!("parameter `{name}` is missing")));
            };
            let x = number(sb, v, parsed, "a parameter value")?;
            coord.push(sb.parameter_value(x, raw_span(parsed, v))?);
        }
        let Some(value) = rec.value else {
            return Err(b.err(line_span, "line has no `value`").with_hint(
                "give the measured value: `\"value\": 1.5` or a list `\"value\": [1.5, 1.6]`",
            ));
        };
        let values = values(sb, value, parsed)?;
        let sb = &mut sets[set].b;
        let coord_index = sb.coordinate(coord, pspan)?;
        sb.add(key, coord_index, values, line_span);
    }
    if sets.is_empty() {
        // The builder's message for an input without measurements.
        return b.finish().map(|e| vec![e]);
    }
    sets.into_iter().map(|s| s.b.finish()).collect()
}

/// A line whose parameters (`map`, at `pspan`) are not `expected`, the parameters of the
/// line at `first`: the first missing or unknown one.
fn mismatch(
    b: &Builder,
    parsed: &str,
    map: &OrderedMap,
    expected: &[String],
    first: Span,
    pspan: Span,
) -> Diagnostic {
    let first_line = b.line_of(first);
    if let Some(name) = expected
        .iter()
        .find(|n| !map.0.iter().any(|(k, _)| k == *n))
    {
        return b.err(
            pspan,
            format!(
                "parameter `{name}` is missing (line {first_line} has {})",
                expected.join(", ")
            ),
        );
    }
    match map.0.iter().find(|(k, _)| !expected.contains(k)) {
        Some((k, v)) => b.err(
            raw_span(parsed, v),
            format!(
                "unknown parameter `{k}` (line {first_line} has {})",
                expected.join(", ")
            ),
        ),
        None => b.err(pspan, "the parameters differ from the first line's"),
    }
}

/// One number or a non-empty list of numbers.
fn values(b: &Builder, raw: &RawValue, text: &str) -> Result<Vec<f64>, Diagnostic> {
    let span = raw_span(text, raw);
    if raw.get().starts_with('[') {
        let items: Vec<&RawValue> = serde_json::from_str(raw.get())
            .map_err(|e| json_error(b, text, raw.get(), &e, "a list of numbers"))?;
        if items.is_empty() {
            return Err(b.err(span, "empty list of values"));
        }
        items
            .into_iter()
            .map(|item| {
                let v = number(b, item, text, "a measured value")?;
                b.value(v, raw_span(text, item))
            })
            .collect()
    } else {
        let v = number(b, raw, text, "a measured value")?;
        Ok(vec![b.value(v, span)?])
    }
}

/// A number as JSON: integers without a fraction, everything else shortest round-trip.
pub(crate) fn json_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        // `{:?}` is the shortest representation that reads back to the same f64.
        format!("{v:?}")
    }
}

/// Write several experiments (over different parameters, with different series) as one
/// file; one experiment gives what [`write`] gives. Fails as [`write`] does, and for two
/// experiments over the same parameters or sharing a series.
pub fn write_all(exps: &[Experiment]) -> Result<String, WriteError> {
    super::check_sets(exps)?;
    let parts = exps.iter().map(write).collect::<Result<Vec<_>, _>>()?;
    Ok(parts.concat())
}

/// Write `exp` as JSON Lines, one line per repetition.
///
/// Fails for points that hold only statistics and for non-finite numbers (JSON has none).
pub fn write(exp: &Experiment) -> Result<String, WriteError> {
    let mut out = String::new();
    let quote = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string());
    for (key, points) in &exp.series {
        for p in points {
            if p.values.is_empty() {
                return Err(WriteError(format!(
                    "series `{key}` holds only statistics at {}, not repetitions",
                    super::builder::show_coordinate(&exp.parameters, &p.coordinate)
                )));
            }
            let mut params = String::new();
            for (i, (name, v)) in exp.parameters.iter().zip(&p.coordinate).enumerate() {
                if !v.is_finite() {
                    return Err(WriteError(format!(
                        "parameter `{name}` has the non-finite value {v}"
                    )));
                }
                if i > 0 {
                    params.push(',');
                }
                let _ = write!(params, "{}:{}", quote(name), json_number(*v));
            }
            for v in &p.values {
                if !v.is_finite() {
                    return Err(WriteError(format!(
                        "series `{key}` has the non-finite value {v}"
                    )));
                }
                let _ = writeln!(
                    out,
                    "{{\"params\":{{{params}}},\"callpath\":{},\"metric\":{},\"value\":{}}}",
                    quote(&key.callpath),
                    quote(&key.metric),
                    json_number(*v)
                );
            }
        }
    }
    Ok(out)
}
