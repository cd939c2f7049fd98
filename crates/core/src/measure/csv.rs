//! CSV measurements: one row per measured point (or repetition), with a header row.
//!
//! The header convention (names compared without case):
//!
//! | column | meaning |
//! |---|---|
//! | `callpath` (or `region`) | the callpath; optional, default `<root>` |
//! | `metric` | the metric; optional, default `<default>` |
//! | `value`, `value1`, `value_2`, ... | measured values; several value columns are repetitions, empty cells are skipped |
//! | anything else | a parameter, in column order |
//!
//! ```text
//! callpath,metric,p,n,value
//! main,time,16,1000,1.52
//! main,time,16,1000,1.49
//! ```
//!
//! Rows with the same callpath, metric and parameter values add repetitions. The
//! delimiter is `,`, `;` or tab, whichever the header line has most of. Lines starting
//! with `#` are comments. [`CsvOptions`] picks the columns explicitly for files that do
//! not follow the convention (e.g. `--csv-parameters Ranks --csv-value mean`); columns
//! it does not name are then ignored.

use super::builder::Builder;
use super::{jsonl, Experiment, ReadOptions, SeriesKey};
use crate::diag::{Diagnostic, Span};

/// Column choices for CSV input; every field empty means "by the header convention".
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CsvOptions {
    /// Parameter columns, in order.
    pub parameters: Vec<String>,
    /// Value columns (repetitions).
    pub values: Vec<String>,
    /// Callpath columns, joined with `->` (e.g. `["mpi", "variable"]`).
    pub callpath: Vec<String>,
    /// The metric column.
    pub metric: Option<String>,
    /// The delimiter; `None` detects it.
    pub delimiter: Option<u8>,
}

fn is_value_column(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    let Some(rest) = n.strip_prefix("value") else {
        return false;
    };
    let rest = rest.strip_prefix('_').unwrap_or(rest);
    rest.is_empty() || rest.bytes().all(|c| c.is_ascii_digit())
}

/// Column roles, as indices into the header.
struct Layout {
    parameters: Vec<usize>,
    values: Vec<usize>,
    callpath: Vec<usize>,
    metric: Option<usize>,
}

/// Read CSV from memory; `origin` names it in messages.
pub fn read_str(origin: &str, text: &str, opts: &ReadOptions) -> Result<Experiment, Diagnostic> {
    let mut b = Builder::new(origin, text, opts);
    let copts = &opts.csv;
    let body_start = text.len() - text.trim_start_matches('\u{feff}').len();
    let header_line = text[body_start..]
        .lines()
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .unwrap_or("");
    let delimiter = copts.delimiter.unwrap_or_else(|| {
        let counts =
            [b',', b';', b'\t'].map(|d| (header_line.bytes().filter(|c| *c == d).count(), d));
        counts
            .iter()
            .max_by_key(|(n, _)| *n)
            .map_or(b',', |(_, d)| *d)
    });
    let mut reader = ::csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .comment(Some(b'#'))
        .trim(::csv::Trim::All)
        .has_headers(true)
        .from_reader(&text.as_bytes()[body_start..]);
    let csv_err = |b: &Builder, e: ::csv::Error| -> Diagnostic {
        let at = e.position().map_or(0, |p| body_start + p.byte() as usize);
        let msg = match e.kind() {
            ::csv::ErrorKind::UnequalLengths {
                expected_len, len, ..
            } => {
                format!("row has {len} fields but the header has {expected_len}")
            }
            ::csv::ErrorKind::Utf8 { .. } => "row is not valid UTF-8".to_string(),
            _ => format!("invalid CSV: {e}"),
        };
        b.err(line_span(text, at), msg)
    };
    let headers = reader.headers().map_err(|e| csv_err(&b, e))?.clone();
    let header_at = body_start + offset_of_line(&text[body_start..], header_line);
    let header_span = Span::new(header_at, header_at + header_line.len());
    if headers.is_empty() || (headers.len() == 1 && headers[0].is_empty()) {
        return Err(b
            .err(header_span, "the CSV file has no header row")
            .with_hint(HINT));
    }
    let find = |name: &str| -> Result<usize, Diagnostic> {
        headers
            .iter()
            .position(|h| h.eq_ignore_ascii_case(name))
            .ok_or_else(|| {
                b.err(header_span, format!("no column `{name}` in the header"))
                    .with_hint(format!(
                        "the columns are: {}",
                        headers.iter().collect::<Vec<_>>().join(", ")
                    ))
            })
    };
    let explicit = !copts.parameters.is_empty()
        || !copts.values.is_empty()
        || !copts.callpath.is_empty()
        || copts.metric.is_some();
    let layout = if explicit {
        let values = if copts.values.is_empty() {
            vec![find("value")?]
        } else {
            copts
                .values
                .iter()
                .map(|n| find(n))
                .collect::<Result<_, _>>()?
        };
        let callpath = copts
            .callpath
            .iter()
            .map(|n| find(n))
            .collect::<Result<Vec<_>, _>>()?;
        let metric = copts.metric.as_deref().map(find).transpose()?;
        let parameters = if copts.parameters.is_empty() {
            // Everything not otherwise used.
            (0..headers.len())
                .filter(|i| !values.contains(i) && !callpath.contains(i) && metric != Some(*i))
                .collect()
        } else {
            copts
                .parameters
                .iter()
                .map(|n| find(n))
                .collect::<Result<_, _>>()?
        };
        Layout {
            parameters,
            values,
            callpath,
            metric,
        }
    } else {
        let mut l = Layout {
            parameters: vec![],
            values: vec![],
            callpath: vec![],
            metric: None,
        };
        for (i, h) in headers.iter().enumerate() {
            let lower = h.to_ascii_lowercase();
            if lower == "callpath" || lower == "region" {
                l.callpath.push(i);
            } else if lower == "metric" {
                l.metric = Some(i);
            } else if is_value_column(h) {
                l.values.push(i);
            } else {
                l.parameters.push(i);
            }
        }
        l
    };
    if layout.values.is_empty() {
        return Err(b
            .err(header_span, "no value column in the header")
            .with_hint(HINT));
    }
    if layout.parameters.is_empty() {
        return Err(b
            .err(header_span, "no parameter column in the header")
            .with_hint(HINT));
    }
    for &i in &layout.parameters {
        let name = headers[i].to_string();
        if name.is_empty() {
            return Err(b.err(header_span, format!("column {} has no name", i + 1)));
        }
        if b.parameters.contains(&name) {
            return Err(b.err(header_span, format!("two columns are named `{name}`")));
        }
        b.parameters.push(name);
    }
    let mut record = ::csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => return Err(csv_err(&b, e)),
        }
        let row_at = record
            .position()
            .map_or(0, |p| body_start + p.byte() as usize);
        let row_span = line_span(text, row_at);
        let field_span = |i: usize| field_span(text, row_span, delimiter, i);
        let mut coord = Vec::with_capacity(layout.parameters.len());
        for &i in &layout.parameters {
            let cell = &record[i];
            let v: f64 = cell.parse().map_err(|_| {
                let span = field_span(i);
                let mut d = b.err(span, format!("expected a number for parameter `{}`, found `{cell}`", &headers[i]));
                if !explicit {
                    d = d.with_hint("name text columns `callpath` or `metric`, or choose the columns explicitly (the `--csv-*` options)");
                }
                d
            })?;
            // Spans cost a scan of the row: compute them only for errors.
            coord.push(if v.is_finite() {
                v
            } else {
                b.parameter_value(v, field_span(i))?
            });
        }
        let mut values = Vec::new();
        for &i in &layout.values {
            let cell = &record[i];
            if cell.is_empty() {
                continue;
            }
            let v: f64 = cell.parse().map_err(|_| {
                b.err(
                    field_span(i),
                    format!(
                        "expected a number in column `{}`, found `{cell}`",
                        &headers[i]
                    ),
                )
            })?;
            values.push(if v.is_finite() && (v >= 0.0 || opts.allow_negative) {
                v
            } else {
                b.value(v, field_span(i))?
            });
        }
        if values.is_empty() {
            return Err(b.err(row_span, "row has no value"));
        }
        let callpath = if layout.callpath.is_empty() {
            jsonl::DEFAULT_CALLPATH.to_string()
        } else {
            layout
                .callpath
                .iter()
                .map(|&i| &record[i])
                .collect::<Vec<_>>()
                .join("->")
        };
        let metric = layout
            .metric
            .map_or(jsonl::DEFAULT_METRIC.to_string(), |i| record[i].to_string());
        let ci = b.coordinate(coord, row_span)?;
        b.add(SeriesKey::new(callpath, metric), ci, values, row_span);
    }
    b.finish()
}

const HINT: &str = "the header names one column per parameter, a `value` column, and optionally `callpath` and `metric` columns; or choose the columns explicitly (the `--csv-*` options)";

/// Byte offset of `line` (a slice of `text`) in `text`.
fn offset_of_line(text: &str, line: &str) -> usize {
    super::raw_json::offset_in(text, line)
}

/// The span of the line starting at `at`.
fn line_span(text: &str, at: usize) -> Span {
    let at = at.min(text.len());
    let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let end = if end > at && text.as_bytes()[end - 1] == b'\r' {
        end - 1
    } else {
        end
    };
    Span::new(at, end)
}

/// The span of field `i` of the row at `row`: exact when the row has no quotes, else the
/// whole row.
fn field_span(text: &str, row: Span, delimiter: u8, i: usize) -> Span {
    let line = &text[row.start..row.end];
    if line.contains('"') {
        return row;
    }
    let mut start = row.start;
    for (k, field) in line.split(delimiter as char).enumerate() {
        if k == i {
            let lead = field.len() - field.trim_start().len();
            return Span::new(start + lead, start + field.trim_end().len().max(lead));
        }
        start += field.len() + 1;
    }
    row
}
