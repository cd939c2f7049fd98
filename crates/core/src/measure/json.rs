//! Extra-P's JSON input, in both layouts Extra-P reads.
//!
//! The id-based layout (Extra-P's `json/input_*.JSON`):
//!
//! ```text
//! {"parameters":  [{"id": 1, "name": "x"}],
//!  "callpaths":   [{"id": 1, "name": "sweep"}],
//!  "metrics":     [{"id": 1, "name": "time"}],
//!  "coordinates": [{"id": 1, "parameter_value_pairs": [{"parameter_id": 1, "parameter_value": 4}]}],
//!  "measurements": [{"callpath_id": 1, "coordinate_id": 1, "metric_id": 1, "value": 25.5}]}
//! ```
//!
//! One measurement entry is one repetition. Every declared coordinate must be measured in
//! every series (Extra-P rejects its `input_11.JSON` for that).
//!
//! The nested layout (Extra-P's `json/new/*.json`):
//!
//! ```text
//! {"parameters": ["x", "y"],
//!  "measurements": {"sweep": {"time": [{"point": [4, 10], "values": [3.5, 3.6]}]}}}
//! ```
//!
//! A file that is not one JSON document but lines of JSON objects is read as JSON Lines,
//! as Extra-P does.
//!
//! Every value keeps its byte span (read through `raw_json`), so a problem deep in a large
//! file is reported at its line and column.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::builder::Builder;
use super::raw_json::{
    char_span, json_error, number, offset_in, parse_as, raw_span, string, OrderedMap,
};
use super::{jsonl, Experiment, ReadOptions, SeriesKey, Summary};
use crate::diag::{Diagnostic, Span};

/// Read Extra-P JSON (either layout), or JSON Lines if the text is lines of objects.
pub fn read_str(origin: &str, text: &str, opts: &ReadOptions) -> Result<Experiment, Diagnostic> {
    let b = Builder::new(origin, text, opts);
    let top: OrderedMap = match serde_json::from_str(text) {
        Ok(top) => top,
        Err(e) => {
            // Extra-P's fallback: several lines that each start with `{` are JSON Lines.
            let lines: Vec<&str> = text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            if lines.len() > 1 && lines.iter().all(|l| l.starts_with('{')) {
                return jsonl::read_str(origin, text, opts);
            }
            return Err(json_error(&b, text, text, &e, "an Extra-P JSON object"));
        }
    };
    if top.get("callpaths").is_some() {
        read_id_based(b, &top, text)
    } else {
        read_nested(b, &top, text, Nested::Input)
    }
}

fn require<'a>(
    b: &Builder,
    top: &OrderedMap<'a>,
    key: &str,
    text: &str,
) -> Result<&'a RawValue, Diagnostic> {
    top.get(key).ok_or_else(|| {
        b.err(char_span(text, offset_in(text, text.trim_start())), format!("the JSON object has no `{key}`"))
            .with_hint("Extra-P JSON has `parameters` and `measurements` (and, in the id-based layout, `callpaths`, `metrics`, `coordinates`)")
    })
}

#[derive(Deserialize)]
struct Named {
    id: i64,
    name: String,
}

#[derive(Deserialize)]
struct Pair {
    parameter_id: i64,
    parameter_value: f64,
}

#[derive(Deserialize)]
struct Coord {
    id: i64,
    parameter_value_pairs: Vec<Pair>,
}

#[derive(Deserialize)]
struct Measurement {
    callpath_id: i64,
    coordinate_id: i64,
    metric_id: i64,
    value: f64,
}

/// `[{"id":..,"name":..}]` sorted by id, with each entry's span; ids must be unique.
fn named_list(
    b: &Builder,
    raw: &RawValue,
    text: &str,
    what: &str,
) -> Result<Vec<(i64, String, Span)>, Diagnostic> {
    let items: Vec<&RawValue> = parse_as(b, raw, text, &format!("a list of {what}s"))?;
    let mut out: Vec<(i64, String, Span)> = Vec::new();
    for item in items {
        let n: Named = parse_as(
            b,
            item,
            text,
            &format!("a {what} `{{\"id\": 1, \"name\": \"...\"}}`"),
        )?;
        let span = raw_span(text, item);
        if out.iter().any(|(id, _, _)| *id == n.id) {
            return Err(b.err(span, format!("{what} id {} is used twice", n.id)));
        }
        out.push((n.id, n.name, span));
    }
    out.sort_by_key(|(id, _, _)| *id);
    Ok(out)
}

fn read_id_based(mut b: Builder, top: &OrderedMap, text: &str) -> Result<Experiment, Diagnostic> {
    let params = named_list(&b, require(&b, top, "parameters", text)?, text, "parameter")?;
    let callpaths = named_list(&b, require(&b, top, "callpaths", text)?, text, "callpath")?;
    let metrics = named_list(&b, require(&b, top, "metrics", text)?, text, "metric")?;
    for (_, name, span) in &params {
        if b.parameters.contains(name) {
            return Err(b.err(*span, format!("parameter `{name}` is declared twice")));
        }
        b.parameters.push(name.clone());
    }
    let craw = require(&b, top, "coordinates", text)?;
    let citems: Vec<&RawValue> = parse_as(&b, craw, text, "a list of coordinates")?;
    let mut coords: Vec<(i64, Vec<f64>, Span)> = Vec::new();
    for item in citems {
        let c: Coord = parse_as(
            &b,
            item,
            text,
            "a coordinate `{\"id\": 1, \"parameter_value_pairs\": [...]}`",
        )?;
        let span = raw_span(text, item);
        if coords.iter().any(|(id, _, _)| *id == c.id) {
            return Err(b.err(span, format!("coordinate id {} is used twice", c.id)));
        }
        let mut values = Vec::with_capacity(params.len());
        for (pid, name, _) in &params {
            let mut hits = c
                .parameter_value_pairs
                .iter()
                .filter(|p| p.parameter_id == *pid);
            let (Some(pair), None) = (hits.next(), hits.next()) else {
                return Err(b.err(
                    span,
                    format!(
                        "coordinate {} needs exactly one value for parameter `{name}` (id {pid})",
                        c.id
                    ),
                ));
            };
            values.push(b.parameter_value(pair.parameter_value, span)?);
        }
        if let Some(p) = c
            .parameter_value_pairs
            .iter()
            .find(|p| !params.iter().any(|(id, _, _)| *id == p.parameter_id))
        {
            return Err(b.err(
                span,
                format!(
                    "coordinate {} names parameter id {}, which is not declared",
                    c.id, p.parameter_id
                ),
            ));
        }
        coords.push((c.id, values, span));
    }
    coords.sort_by_key(|(id, _, _)| *id);
    let mut coord_index: HashMap<i64, usize> = HashMap::new();
    for (id, values, span) in coords {
        let i = b.declare(values, span)?;
        coord_index.insert(id, i);
    }
    let lookup = |list: &[(i64, String, Span)], id: i64| {
        list.iter()
            .find(|(i, _, _)| *i == id)
            .map(|(_, n, _)| n.clone())
    };
    let mraw = require(&b, top, "measurements", text)?;
    let mitems: Vec<&RawValue> = parse_as(&b, mraw, text, "a list of measurements")?;
    for item in mitems {
        let m: Measurement = parse_as(
            &b,
            item,
            text,
            "a measurement `{\"callpath_id\", \"coordinate_id\", \"metric_id\", \"value\"}`",
        )?;
        let span = raw_span(text, item);
        let callpath = lookup(&callpaths, m.callpath_id).ok_or_else(|| {
            b.err(
                span,
                format!("callpath id {} is not declared", m.callpath_id),
            )
        })?;
        let metric = lookup(&metrics, m.metric_id)
            .ok_or_else(|| b.err(span, format!("metric id {} is not declared", m.metric_id)))?;
        let &ci = coord_index.get(&m.coordinate_id).ok_or_else(|| {
            b.err(
                span,
                format!("coordinate id {} is not declared", m.coordinate_id),
            )
        })?;
        let v = b.value(m.value, span)?;
        b.add(SeriesKey::new(callpath, metric), ci, vec![v], span);
    }
    b.finish()
}

/// Which nested layout: Extra-P's input (`point`, `values`) or the measurements of a saved
/// experiment (`coordinate`, statistics, optional `values`).
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Nested {
    Input,
    Saved,
}

/// A measurement of a saved experiment: statistics, and the repetitions when kept.
#[derive(Deserialize)]
struct SavedMeasurement<'a> {
    #[serde(borrow)]
    coordinate: &'a RawValue,
    mean: f64,
    median: f64,
    minimum: f64,
    maximum: f64,
    #[serde(default)]
    std: f64,
    #[serde(default)]
    repetitions: Option<usize>,
    #[serde(borrow, default)]
    values: Option<&'a RawValue>,
}

/// How a saved experiment refers to repetitions stored beside `experiment.json`.
pub(crate) type ValueLookup<'l> = dyn Fn(u64, u64) -> Result<Vec<f64>, String> + 'l;

pub(crate) fn read_nested(
    b: Builder,
    top: &OrderedMap,
    text: &str,
    layout: Nested,
) -> Result<Experiment, Diagnostic> {
    read_nested_with(b, top, text, layout, &|_, _| {
        Err("this file has no stored values".to_string())
    })
}

pub(crate) fn read_nested_with(
    mut b: Builder,
    top: &OrderedMap,
    text: &str,
    layout: Nested,
    lookup: &ValueLookup,
) -> Result<Experiment, Diagnostic> {
    let praw = require(&b, top, "parameters", text)?;
    let names: Vec<&RawValue> = parse_as(&b, praw, text, "a list of parameter names")?;
    for raw in names {
        let name = string(&b, raw, text, "parameter name")?;
        if b.parameters.contains(&name) {
            return Err(b.err(
                raw_span(text, raw),
                format!("parameter `{name}` is declared twice"),
            ));
        }
        b.parameters.push(name);
    }
    let mraw = require(&b, top, "measurements", text)?;
    let by_callpath = OrderedMap::parse(&b, mraw, text, "an object `{callpath: {metric: [...]}}`")?;
    for (callpath, craw) in &by_callpath.0 {
        let by_metric = OrderedMap::parse(&b, craw, text, "an object `{metric: [...]}`")?;
        for (metric, list) in &by_metric.0 {
            let key = SeriesKey::new(callpath.clone(), metric.clone());
            let items: Vec<&RawValue> = parse_as(&b, list, text, "a list of measurements")?;
            for item in items {
                let span = raw_span(text, item);
                match layout {
                    Nested::Input => {
                        let obj = OrderedMap::parse(
                            &b,
                            item,
                            text,
                            "a measurement `{\"point\": [...], \"values\": [...]}`",
                        )?;
                        let point = obj
                            .get("point")
                            .ok_or_else(|| b.err(span, "measurement has no `point`"))?;
                        let vals = obj
                            .get("values")
                            .ok_or_else(|| b.err(span, "measurement has no `values`"))?;
                        let coord = coordinate(&b, point, text)?;
                        let values = value_list(&b, vals, text)?;
                        let ci = b.coordinate(coord, raw_span(text, point))?;
                        b.add(key.clone(), ci, values, span);
                    }
                    Nested::Saved => {
                        let m: SavedMeasurement = parse_as(&b, item, text, "a measurement with `coordinate`, `mean`, `median`, `minimum`, `maximum`")?;
                        let coord = coordinate(&b, m.coordinate, text)?;
                        let ci = b.coordinate(coord, raw_span(text, m.coordinate))?;
                        let stored = match m.values {
                            None => None,
                            Some(v) if v.get() == "null" => None,
                            Some(v) => Some(stored_values(&b, v, text, lookup)?),
                        };
                        match stored {
                            Some(values) => b.add(key.clone(), ci, values, span),
                            None => {
                                for v in [m.mean, m.median, m.minimum, m.maximum] {
                                    b.value(v, span)?;
                                }
                                let s = Summary {
                                    mean: m.mean,
                                    median: m.median,
                                    minimum: m.minimum,
                                    maximum: m.maximum,
                                    std: m.std,
                                    // Extra-P before 4.1 did not store the count.
                                    repetitions: m.repetitions.unwrap_or(1).max(1),
                                };
                                b.add_summary(key.clone(), ci, s, span);
                            }
                        }
                    }
                }
            }
        }
    }
    b.finish()
}

/// `[4, 10]`, or a bare number for one parameter.
fn coordinate(b: &Builder, raw: &RawValue, text: &str) -> Result<Vec<f64>, Diagnostic> {
    let span = raw_span(text, raw);
    let items: Vec<&RawValue> = if raw.get().starts_with('[') {
        parse_as(b, raw, text, "a list of parameter values")?
    } else {
        vec![raw]
    };
    items
        .into_iter()
        .map(|v| {
            let x = number(b, v, text, "a parameter value")?;
            b.parameter_value(x, span)
        })
        .collect()
}

fn value_list(b: &Builder, raw: &RawValue, text: &str) -> Result<Vec<f64>, Diagnostic> {
    let span = raw_span(text, raw);
    let items: Vec<&RawValue> = if raw.get().starts_with('[') {
        parse_as(b, raw, text, "a list of measured values")?
    } else {
        vec![raw]
    };
    if items.is_empty() {
        return Err(b.err(span, "empty list of values"));
    }
    items
        .into_iter()
        .map(|v| {
            let x = number(b, v, text, "a measured value")?;
            b.value(x, raw_span(text, v))
        })
        .collect()
}

/// The `values` of a saved measurement: a list of numbers, or `[chunk, index]` into the
/// value files stored beside `experiment.json`.
fn stored_values(
    b: &Builder,
    raw: &RawValue,
    text: &str,
    lookup: &ValueLookup,
) -> Result<Vec<f64>, Diagnostic> {
    let span = raw_span(text, raw);
    if let Ok([chunk, index]) = serde_json::from_str::<[u64; 2]>(raw.get()) {
        let values = lookup(chunk, index)
            .map_err(|e| b.err(span, format!("cannot read the stored values: {e}")))?;
        if values.is_empty() {
            return Err(b.err(span, "the stored values are empty"));
        }
        return values.into_iter().map(|v| b.value(v, span)).collect();
    }
    value_list(b, raw, text)
}
