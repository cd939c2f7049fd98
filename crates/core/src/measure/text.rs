//! Extra-P's text input format: reader and writer.
//!
//! ```text
//! # comment
//! PARAMETER x
//! PARAMETER y            (or several names on one line: PARAMETER x y)
//! POINTS ( 20 1 ) ( 20 2 )
//! POINTS ( 30 1 ) ( 30 2 )      (one parameter: also the flat form POINTS 20 30 40)
//! REGION main->solve     (a callpath; `->` separates nesting levels)
//! METRIC time
//! DATA 1.0 1.1 0.9       (one line per point, in POINTS order; the values are repetitions)
//! ```
//!
//! What Extra-P 4.2.5 does, and so do we: whitespace runs (tabs included) count as one
//! space; blank lines and lines starting with `#` are skipped; `REGION` and `METRIC`
//! each start a new block of `DATA` lines and keep the other one's current value; a
//! block must have exactly one `DATA` line per point (none is allowed: the series then
//! does not exist); the metric is the empty string until a `METRIC` line; at most four
//! parameters. Where Extra-P accepts something it then cannot use, we reject it at the
//! line that causes it: `PARAMETER` after `POINTS`, `POINTS` after `DATA`, flat `POINTS`
//! lists with several parameters, a repeated point, a second block for the same region
//! and metric, `DATA` before any `REGION`, NaN, infinite or (by default) negative values.
//! We also accept leading whitespace before a keyword and `#`, which Extra-P does not.
//!
//! Several parameter sets in one file (our extension; Extra-P reads one): a `PARAMETER`
//! line after `DATA` starts a new section, which is laid out like a whole file of its own
//! (`PARAMETER`, `POINTS`, then `REGION`, `METRIC` and `DATA` lines; the region and the
//! metric start unset again). Each section is one [`Experiment`]: its series are measured
//! at its points, over its parameters. Two sections over the same parameters, and a
//! series (region and metric) in two sections, are errors. A file of one section is
//! exactly Extra-P's format. [`read_str`] wants one section; [`read_all_str`] reads all.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::builder::Builder;
use super::{Experiment, ReadOptions, SeriesKey, WriteError};
use crate::diag::{Diagnostic, Span};

/// The keywords of the format.
pub const KEYWORDS: [&str; 5] = ["PARAMETER", "POINTS", "REGION", "METRIC", "DATA"];

/// Extra-P's text reader supports at most this many parameters.
pub const MAX_PARAMETERS: usize = 4;

/// Read Extra-P text input from memory; `origin` names it in messages. A file with
/// several sections (parameter sets) is an error here: [`read_all_str`] reads those.
pub fn read_str(origin: &str, text: &str, opts: &ReadOptions) -> Result<Experiment, Diagnostic> {
    super::single(origin, read_all_str(origin, text, opts)?)
}

/// Read Extra-P text input with one section or several (see the module's docs): one
/// experiment per section, in the file's order.
pub fn read_all_str(
    origin: &str,
    text: &str,
    opts: &ReadOptions,
) -> Result<Vec<Experiment>, Diagnostic> {
    Reader::new(origin, text, opts).run()
}

/// Whitespace-separated tokens of `s` with their spans (`base` = offset of `s`).
fn tokens(s: &str, base: usize) -> impl Iterator<Item = (&str, Span)> {
    let mut rest = s;
    let mut pos = base;
    std::iter::from_fn(move || {
        let skip = rest.len() - rest.trim_start().len();
        rest = &rest[skip..];
        pos += skip;
        if rest.is_empty() {
            return None;
        }
        let len = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let tok = &rest[..len];
        let span = Span::new(pos, pos + len);
        rest = &rest[len..];
        pos += len;
        Some((tok, span))
    })
}

/// The current block of DATA lines: one series, one line per point.
struct Block {
    key: SeriesKey,
    /// DATA lines so far.
    count: usize,
    last: Span,
}

struct Reader<'a> {
    origin: &'a str,
    opts: &'a ReadOptions,
    /// The current section.
    b: Builder<'a>,
    text: &'a str,
    /// The sections read before the current one.
    done: Vec<Experiment>,
    /// Where each section starts (its first PARAMETER line), the current one last.
    starts: Vec<Span>,
    param_spans: Vec<Span>,
    region: Option<String>,
    metric: String,
    block: Option<Block>,
    /// First DATA line of every series seen and its section, to reject a second block.
    seen: HashMap<SeriesKey, (Span, usize)>,
    /// The current section has DATA.
    any_data: bool,
}

impl<'a> Reader<'a> {
    fn new(origin: &'a str, text: &'a str, opts: &'a ReadOptions) -> Reader<'a> {
        Reader {
            origin,
            opts,
            b: Builder::new(origin, text, opts),
            text,
            done: Vec::new(),
            starts: Vec::new(),
            param_spans: Vec::new(),
            region: None,
            metric: String::new(),
            block: None,
            seen: HashMap::new(),
            any_data: false,
        }
    }

    fn run(mut self) -> Result<Vec<Experiment>, Diagnostic> {
        let mut offset = 0;
        let text = self.text;
        // A byte-order mark is not part of the first keyword.
        if text.starts_with('\u{feff}') {
            offset = '\u{feff}'.len_utf8();
        }
        for raw in text[offset..].split_inclusive('\n') {
            let start = offset;
            offset += raw.len();
            let line = raw.trim_end_matches(['\n', '\r']);
            let mut toks = tokens(line, start);
            let Some((keyword, kspan)) = toks.next() else {
                continue;
            };
            if keyword.starts_with('#') {
                continue;
            }
            let rest_start = kspan.end;
            let rest = &text[rest_start..start + line.len()];
            match keyword {
                "PARAMETER" => {
                    if self.any_data {
                        // PARAMETER after DATA: a section over other parameters.
                        self.end_section()?;
                    }
                    if self.param_spans.is_empty() {
                        self.starts.push(kspan);
                    }
                    self.parameter(rest, rest_start, kspan)?
                }
                "POINTS" => self.points(rest, rest_start, kspan)?,
                "REGION" => {
                    let name = self.name(rest, rest_start, kspan, "REGION", "region")?;
                    self.close_block()?;
                    self.region = Some(name);
                }
                "METRIC" => {
                    let name = self.name(rest, rest_start, kspan, "METRIC", "metric")?;
                    self.close_block()?;
                    self.metric = name;
                }
                "DATA" => self.data(rest, rest_start, kspan)?,
                other => return Err(self.unknown(other, kspan)),
            }
        }
        self.end_section()?;
        Ok(self.done)
    }

    /// Check the current section, add it to `done` and start an empty one.
    fn end_section(&mut self) -> Result<(), Diagnostic> {
        self.close_block()?;
        let first = self.done.is_empty();
        // A later section is pointed at by its first PARAMETER line.
        let (at, what) = match self.starts.get(self.done.len()) {
            Some(s) if !first => (*s, format!("the section of line {}", self.b.line_of(*s))),
            _ => (Span::new(0, 0), "the file".to_string()),
        };
        if self.b.parameters.is_empty() {
            return Err(self
                .b
                .err(at, format!("{what} declares no parameters"))
                .with_hint(
                    "start with `PARAMETER name`, then `POINTS`, `REGION` and `DATA` lines",
                ));
        }
        if self.b.coordinate_count() == 0 {
            return Err(self
                .b
                .err(at, format!("{what} lists no POINTS"))
                .with_hint("after PARAMETER, list the measured points: `POINTS ( 20 ) ( 30 )`"));
        }
        if !self.any_data {
            return Err(self
                .b
                .err(at, format!("{what} holds no DATA lines"))
                .with_hint("after `REGION name`, give one `DATA v1 v2 ...` line per point"));
        }
        if let Some((i, e)) = self
            .done
            .iter()
            .enumerate()
            .find(|(_, e)| super::same_names(&e.parameters, &self.b.parameters))
        {
            return Err(self
                .b
                .err(
                    at,
                    format!(
                        "a second section over ({}) (the first starts on line {})",
                        self.b.parameters.join(", "),
                        self.b.line_of(self.starts[i])
                    ),
                )
                .with_hint(format!(
                    "the series over ({}) share one section: one PARAMETER and POINTS header, then their REGION and DATA lines",
                    e.parameters.join(", ")
                )));
        }
        let fresh = Builder::new(self.origin, self.text, self.opts);
        let section = std::mem::replace(&mut self.b, fresh);
        self.done.push(section.finish()?);
        self.param_spans.clear();
        self.region = None;
        self.metric = String::new();
        self.any_data = false;
        Ok(())
    }

    fn unknown(&self, word: &str, span: Span) -> Diagnostic {
        let upper = word.to_ascii_uppercase();
        let hint = if KEYWORDS.contains(&upper.as_str()) {
            format!("keywords are upper-case: `{upper}`")
        } else if word.starts_with('{') {
            "this looks like JSON; JSON Lines files are read by extension `.jsonl` or `--format jsonl`"
                .to_string()
        } else {
            format!(
                "a line starts with one of {}, or `#` for a comment",
                KEYWORDS.join(", ")
            )
        };
        self.b
            .err(
                span,
                format!("unknown field `{word}` in Extra-P text input"),
            )
            .with_hint(hint)
    }

    /// The name after REGION or METRIC, whitespace runs folded into one space.
    fn name(
        &self,
        rest: &str,
        base: usize,
        kspan: Span,
        keyword: &str,
        what: &str,
    ) -> Result<String, Diagnostic> {
        let words: Vec<&str> = tokens(rest, base).map(|(t, _)| t).collect();
        if words.is_empty() {
            return Err(self.b.err(kspan, format!("{keyword} needs a {what} name")));
        }
        Ok(words.join(" "))
    }

    fn parameter(&mut self, rest: &str, base: usize, kspan: Span) -> Result<(), Diagnostic> {
        if self.b.coordinate_count() > 0 {
            return Err(self
                .b
                .err(kspan, "PARAMETER after POINTS")
                .with_hint("declare every parameter before the first POINTS line (a PARAMETER line after DATA starts a section over other parameters)"));
        }
        let mut any = false;
        for (name, span) in tokens(rest, base) {
            any = true;
            if let Some(i) = self.b.parameters.iter().position(|p| p == name) {
                let line = self.b.line_of(self.param_spans[i]);
                return Err(self.b.err(
                    span,
                    format!("parameter `{name}` is declared twice (first on line {line})"),
                ));
            }
            if self.b.parameters.len() == MAX_PARAMETERS {
                return Err(self
                    .b
                    .err(span, format!("more than {MAX_PARAMETERS} parameters"))
                    .with_hint("Extra-P's text format allows at most 4; use JSON Lines for more"));
            }
            self.b.parameters.push(name.to_string());
            self.param_spans.push(span);
        }
        if !any {
            return Err(self.b.err(kspan, "PARAMETER needs a name"));
        }
        Ok(())
    }

    fn number(&self, tok: &str, span: Span, what: &str) -> Result<f64, Diagnostic> {
        tok.parse::<f64>().map_err(|_| {
            self.b
                .err(span, format!("expected a number as {what}, found `{tok}`"))
        })
    }

    fn points(&mut self, rest: &str, base: usize, kspan: Span) -> Result<(), Diagnostic> {
        if self.b.parameters.is_empty() {
            return Err(self
                .b
                .err(kspan, "POINTS before any PARAMETER")
                .with_hint("declare the parameters first: `PARAMETER x`"));
        }
        if self.any_data {
            return Err(self
                .b
                .err(kspan, "POINTS after DATA")
                .with_hint("list every point before the first DATA line"));
        }
        let n = self.b.parameters.len();
        let mut points: Vec<(Vec<f64>, Span)> = Vec::new();
        if rest.contains('(') || rest.contains(')') {
            // Tuple form: ( v1 v2 ) ( v1 v2 ) ...
            let bytes = rest.as_bytes();
            let mut i = 0;
            while i < bytes.len() {
                if bytes[i].is_ascii_whitespace() {
                    i += 1;
                    continue;
                }
                if bytes[i] != b'(' {
                    let end = rest[i..]
                        .find(|c: char| c.is_whitespace() || c == '(')
                        .map_or(rest.len(), |e| i + e);
                    return Err(self
                        .b
                        .err(
                            Span::new(base + i, base + end),
                            format!("expected `(` to start a point, found `{}`", &rest[i..end]),
                        )
                        .with_hint("write every point in parentheses: POINTS ( 20 1 ) ( 30 1 )"));
                }
                let open = i;
                i += 1;
                let mut coord = Vec::new();
                loop {
                    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                        i += 1;
                    }
                    if i >= bytes.len() {
                        return Err(self
                            .b
                            .err(Span::at(base + open), "this `(` is never closed"));
                    }
                    if bytes[i] == b')' {
                        i += 1;
                        break;
                    }
                    if bytes[i] == b'(' {
                        return Err(self
                            .b
                            .err(Span::at(base + i), "`(` inside a point")
                            .with_hint("close the previous point with `)` first"));
                    }
                    let end = rest[i..]
                        .find(|c: char| c.is_whitespace() || c == '(' || c == ')')
                        .map_or(rest.len(), |e| i + e);
                    let span = Span::new(base + i, base + end);
                    let v = self.number(&rest[i..end], span, "a parameter value")?;
                    coord.push(self.b.parameter_value(v, span)?);
                    i = end;
                }
                let span = Span::new(base + open, base + i);
                if coord.len() != n {
                    return Err(self.b.err(
                        span,
                        format!(
                            "point has {} value(s) but there are {n} parameters ({})",
                            coord.len(),
                            self.b.parameters.join(", ")
                        ),
                    ));
                }
                points.push((coord, span));
            }
        } else {
            // Flat form: one number per point, for one parameter only.
            for (tok, span) in tokens(rest, base) {
                let v = self.number(tok, span, "a point")?;
                if n != 1 {
                    return Err(self
                        .b
                        .err(span, format!("point has 1 value but there are {n} parameters ({})", self.b.parameters.join(", ")))
                        .with_hint("with several parameters, write each point in parentheses: POINTS ( 1000 10 ) ( 2000 10 )"));
                }
                points.push((vec![self.b.parameter_value(v, span)?], span));
            }
        }
        if points.is_empty() {
            return Err(self.b.err(kspan, "POINTS lists no points"));
        }
        for (coord, span) in points {
            self.b.declare(coord, span)?;
        }
        Ok(())
    }

    fn data(&mut self, rest: &str, base: usize, kspan: Span) -> Result<(), Diagnostic> {
        let Some(region) = self.region.clone() else {
            return Err(self
                .b
                .err(kspan, "DATA before any REGION")
                .with_hint("start each series with `REGION name` (and optionally `METRIC name`)"));
        };
        let n = self.b.coordinate_count();
        if n == 0 {
            return Err(self
                .b
                .err(kspan, "DATA before any POINTS")
                .with_hint("list the points first: `POINTS ( 20 ) ( 30 )`"));
        }
        let line_span = Span::new(kspan.start, base + rest.len());
        let key = SeriesKey::new(region, self.metric.clone());
        if self.block.is_none() {
            if let Some(&(first, section)) = self.seen.get(&key) {
                let line = self.b.line_of(first);
                if section < self.done.len() {
                    return Err(self
                        .b
                        .err(
                            kspan,
                            format!(
                                "`{key}` is measured over ({}) here and over ({}) on line {line}",
                                self.b.parameters.join(", "),
                                self.done[section].parameters.join(", ")
                            ),
                        )
                        .with_hint("a series is measured over one set of parameters: give one of them another region or metric name"));
                }
                return Err(self
                    .b
                    .err(
                        kspan,
                        format!(
                            "a second block of DATA for `{key}` (the first starts on line {line})"
                        ),
                    )
                    .with_hint(
                        "give each region and metric one block of DATA lines, one line per point",
                    ));
            }
            self.seen.insert(key.clone(), (kspan, self.done.len()));
            self.b.touch(&key, kspan);
        }
        let block = self.block.get_or_insert_with(|| Block {
            key: key.clone(),
            count: 0,
            last: kspan,
        });
        if block.count == n {
            return Err(self
                .b
                .err(
                    line_span,
                    format!("more DATA lines than POINTS ({n}) for `{key}`"),
                )
                .with_hint(
                    "each DATA line holds the repetitions of one point, in the order of POINTS",
                ));
        }
        let index = block.count;
        block.count += 1;
        block.last = line_span;
        let mut values = Vec::new();
        for (tok, span) in tokens(rest, base) {
            let v = self.number(tok, span, "a measured value")?;
            values.push(self.b.value(v, span)?);
        }
        if values.is_empty() {
            return Err(self.b.err(kspan, "DATA line holds no values"));
        }
        self.any_data = true;
        self.b.add(key, index, values, line_span);
        Ok(())
    }

    /// End the current block: it must have one DATA line per point.
    fn close_block(&mut self) -> Result<(), Diagnostic> {
        if let Some(block) = self.block.take() {
            let n = self.b.coordinate_count();
            if block.count < n {
                let missing = self.b.show(self.b.coordinate_at(block.count));
                return Err(self
                    .b
                    .err(
                        block.last,
                        format!(
                            "`{}` has {} DATA lines but POINTS lists {n} points (none for {missing})",
                            block.key, block.count
                        ),
                    )
                    .with_hint("each DATA line holds the repetitions of one point, in the order of POINTS"));
            }
        }
        Ok(())
    }
}

/// Write several experiments (over different parameters, with different series) as one
/// file, a section each, a blank line between them; one experiment gives what [`write`]
/// gives. Fails as [`write`] does, and for two experiments over the same parameters or
/// sharing a series.
pub fn write_all(exps: &[Experiment]) -> Result<String, WriteError> {
    super::check_sets(exps)?;
    let sections = exps.iter().map(write).collect::<Result<Vec<_>, _>>()?;
    Ok(sections.join("\n"))
}

/// Write `exp` in Extra-P's text format.
///
/// Fails (rather than writing something Extra-P would misread) when the experiment has no
/// parameters or more than four, when its series are not all measured at the same points,
/// when a point holds only statistics, or when a name cannot be written on one line.
pub fn write(exp: &Experiment) -> Result<String, WriteError> {
    let err = |m: String| Err(WriteError(m));
    if exp.parameters.is_empty() || exp.parameters.len() > MAX_PARAMETERS {
        return err(format!(
            "Extra-P's text format needs 1 to {MAX_PARAMETERS} parameters, not {}",
            exp.parameters.len()
        ));
    }
    for p in &exp.parameters {
        if p.is_empty() || p.contains(char::is_whitespace) || p.starts_with('#') {
            return err(format!(
                "parameter name `{p}` cannot be written (empty, whitespace or `#`)"
            ));
        }
    }
    if exp.series.is_empty() {
        return err("the experiment holds no measurements".to_string());
    }
    let coords = exp.coordinates();
    let metrics_blank = exp.series.keys().filter(|k| k.metric.is_empty()).count();
    if metrics_blank > 0 && metrics_blank < exp.series.len() {
        return err(
            "a series with an empty metric name cannot share a text file with named metrics"
                .to_string(),
        );
    }
    let mut out = String::new();
    for p in &exp.parameters {
        let _ = writeln!(out, "PARAMETER {p}");
    }
    for c in &coords {
        let vals: Vec<String> = c.iter().map(|v| format!("{v:?}")).collect();
        let _ = writeln!(out, "POINTS ( {} )", vals.join(" "));
    }
    let mut last_callpath: Option<&str> = None;
    for (key, points) in &exp.series {
        for (what, name) in [("callpath", &key.callpath), ("metric", &key.metric)] {
            let folded = name.split_whitespace().collect::<Vec<_>>().join(" ");
            if folded != *name || (what == "callpath" && name.is_empty()) {
                return err(format!(
                    "{what} name `{name}` cannot be written (empty, line breaks, or whitespace that is not single spaces)"
                ));
            }
        }
        out.push('\n');
        if last_callpath != Some(key.callpath.as_str()) {
            let _ = writeln!(out, "REGION {}", key.callpath);
            last_callpath = Some(&key.callpath);
        }
        if !key.metric.is_empty() {
            let _ = writeln!(out, "METRIC {}", key.metric);
        }
        for c in &coords {
            let Some(p) = points.iter().find(|p| &p.coordinate == c) else {
                return err(format!(
                    "series `{key}` has no point at {}; Extra-P's text format needs every series at every point",
                    super::builder::show_coordinate(&exp.parameters, c)
                ));
            };
            if p.values.is_empty() {
                return err(format!(
                    "series `{key}` holds only statistics at {}, not the repetitions the text format needs",
                    super::builder::show_coordinate(&exp.parameters, c)
                ));
            }
            let vals: Vec<String> = p.values.iter().map(|v| format!("{v:?}")).collect();
            let _ = writeln!(out, "DATA {}", vals.join(" "));
        }
    }
    Ok(out)
}
