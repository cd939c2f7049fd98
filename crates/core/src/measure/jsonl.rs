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
//! `metric` to `<default>`, as in Extra-P. The parameter order is the key order of the
//! first line; every later line must name the same parameters (Extra-P ignores extra
//! ones; we reject them, since they are almost always a mistake). Other keys are ignored.
//!
//! Talpas files have the same records with `parameters` instead of `params`, `;` instead
//! of `,` between fields, and mandatory `callpath` and `metric`.

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

/// Read JSON Lines from memory; `origin` names it in messages.
pub fn read_str(origin: &str, text: &str, opts: &ReadOptions) -> Result<Experiment, Diagnostic> {
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
    read(origin, text, &converted, opts, Dialect::Talpas)
}

fn read(
    origin: &str,
    text: &str,
    parsed: &str,
    opts: &ReadOptions,
    dialect: Dialect,
) -> Result<Experiment, Diagnostic> {
    let mut b = Builder::new(origin, text, opts);
    let params_key = match dialect {
        Dialect::JsonLines => "params",
        Dialect::Talpas => "parameters",
    };
    // Span of the first line's parameters, for messages about later lines.
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
        match first_params {
            None => {
                first_params = Some(pspan);
                b.parameters = map.0.iter().map(|(k, _)| k.clone()).collect();
            }
            Some(first) => {
                let first_line = b.line_of(first);
                for name in &b.parameters {
                    if !map.0.iter().any(|(k, _)| k == name) {
                        return Err(b.err(
                            pspan,
                            format!(
                                "parameter `{name}` is missing (line {first_line} has {})",
                                b.parameters.join(", ")
                            ),
                        ));
                    }
                }
                if let Some((k, v)) = map.0.iter().find(|(k, _)| !b.parameters.contains(k)) {
                    return Err(b.err(
                        raw_span(parsed, v),
                        format!(
                            "unknown parameter `{k}` (line {first_line} has {})",
                            b.parameters.join(", ")
                        ),
                    ));
                }
            }
        }
        let mut coord = Vec::with_capacity(b.parameters.len());
        for name in &b.parameters {
            let Some((_, v)) = map.0.iter().find(|(k, _)| k == name) else {
                return Err(b.err(pspan, format!("parameter `{name}` is missing")));
            };
            let x = number(&b, v, parsed, "a parameter value")?;
            coord.push(b.parameter_value(x, raw_span(parsed, v))?);
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
        let Some(value) = rec.value else {
            return Err(b.err(line_span, "line has no `value`").with_hint(
                "give the measured value: `\"value\": 1.5` or a list `\"value\": [1.5, 1.6]`",
            ));
        };
        let values = values(&b, value, parsed)?;
        let coord_index = b.coordinate(coord, pspan)?;
        b.add(
            SeriesKey::new(callpath, metric),
            coord_index,
            values,
            line_span,
        );
    }
    b.finish()
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
