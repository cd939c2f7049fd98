//! Extra-P 3's binary experiment files (what the C++ Extra-P saved; Extra-P 4 still reads
//! them with `--extra-p-3`).
//!
//! Layout: a 2-byte endianness mark (`1` in the file's byte order), then length-prefixed
//! strings (`u32` length + UTF-8), `i64` ids and counts and `f64` values, all in that byte
//! order. After the qualifier `EXTRAP_EXPERIMENT` and a version string comes a sequence
//! of records, each introduced by its type name: `Parameter`, `Metric`, `Region`,
//! `Callpath`, `Coordinate`, `ExperimentPoint` (the statistics of one point: count, mean,
//! median, minimum, maximum, standard deviation and confidence intervals), and the saved
//! model generators, models and comments, which we parse only to skip them: we refit.
//!
//! Points carry a [`Summary`], not the repetitions, which the format does not keep.
//! Errors are reported by byte offset (a binary file has no lines).

use std::collections::HashMap;

use super::builder::Builder;
use super::{Experiment, ReadOptions, SeriesKey, Summary};
use crate::diag::{Diagnostic, Span};

const QUALIFIER: &str = "EXTRAP_EXPERIMENT";

/// True when `head` starts like an Extra-P 3 experiment.
pub fn looks_like(head: &[u8]) -> bool {
    head.len() >= 6 + QUALIFIER.len() && &head[6..6 + QUALIFIER.len()] == QUALIFIER.as_bytes()
}

struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    little: bool,
}

type R<T> = Result<T, String>;

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> R<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|e| *e <= self.buf.len())
            .ok_or_else(|| {
                format!(
                    "the file ends inside a record (needed {n} bytes at byte {})",
                    self.pos
                )
            })?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn arr<const N: usize>(&mut self) -> R<[u8; N]> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        if !self.little {
            a.reverse();
        }
        Ok(a)
    }

    fn i64(&mut self) -> R<i64> {
        Ok(i64::from_le_bytes(self.arr()?))
    }

    fn f64(&mut self) -> R<f64> {
        Ok(f64::from_le_bytes(self.arr()?))
    }

    fn count(&mut self) -> R<usize> {
        let at = self.pos;
        let n = self.i64()?;
        // Every counted element takes at least 8 bytes, which bounds sane counts.
        usize::try_from(n)
            .ok()
            .filter(|n| n.saturating_mul(8) <= self.buf.len())
            .ok_or_else(|| format!("impossible count {n} at byte {at}"))
    }

    /// A string; `None` at the end of the file (how the record sequence ends).
    fn string_or_end(&mut self) -> R<Option<String>> {
        if self.pos >= self.buf.len() {
            return Ok(None);
        }
        let at = self.pos;
        let n = u32::from_le_bytes(self.arr()?) as usize;
        let bytes = self.take(n)?;
        String::from_utf8(bytes.to_vec())
            .map(Some)
            .map_err(|_| format!("the string at byte {at} is not UTF-8"))
    }

    fn string(&mut self) -> R<String> {
        let at = self.pos;
        self.string_or_end()?
            .ok_or_else(|| format!("the file ends where a string was expected (byte {at})"))
    }

    fn expect(&mut self, what: &str) -> R<()> {
        let at = self.pos;
        let s = self.string()?;
        if s == what {
            Ok(())
        } else {
            Err(format!(
                "expected a `{what}` record at byte {at}, found `{s}`"
            ))
        }
    }
}

/// Skip a function (a saved model) introduced by `prefix`.
fn skip_function(c: &mut Cursor, prefix: &str) -> R<()> {
    match prefix {
        "SingleParameterFunction" => {
            c.f64()?;
            for _ in 0..c.count()? {
                c.expect("CompoundTerm")?;
                skip_compound(c)?;
            }
        }
        "MultiParameterFunction" => {
            c.f64()?;
            for _ in 0..c.count()? {
                c.f64()?;
                for _ in 0..c.count()? {
                    c.string()?;
                    c.expect("CompoundTerm")?;
                    skip_compound(c)?;
                }
            }
        }
        "SimpleTerm" => {
            c.string()?;
            c.f64()?;
        }
        "CompoundTerm" => skip_compound(c)?,
        "Function" => {}
        other => {
            return Err(format!(
                "unknown function type `{other}` before byte {}",
                c.pos
            ))
        }
    }
    Ok(())
}

fn skip_compound(c: &mut Cursor) -> R<()> {
    c.f64()?;
    for _ in 0..c.count()? {
        c.expect("SimpleTerm")?;
        c.string()?;
        c.f64()?;
    }
    Ok(())
}

/// The optional newer generator options; Extra-P 3 files from before they existed lack
/// them, so a failed attempt rewinds (as Extra-P does). Returns whether they were there,
/// which tells whether models carry an extra error value.
fn generator_options(c: &mut Cursor) -> bool {
    let start = c.pos;
    let attempt = (|| -> R<bool> {
        c.i64()?;
        let single = c.string()?;
        c.i64()?;
        c.i64()?;
        let multi = c.string()?;
        Ok(
            ["FIRST_POINTS_FOUND", "MAX_NUMBER_POINTS", "CHEAPEST_POINTS"]
                .contains(&single.as_str())
                && ["INCREASING_COST", "DECREASING_COST"].contains(&multi.as_str()),
        )
    })();
    match attempt {
        Ok(true) => true,
        _ => {
            c.pos = start;
            false
        }
    }
}

/// Read an Extra-P 3 experiment from its bytes; `origin` names it.
pub fn read_bytes(
    origin: &str,
    bytes: &[u8],
    opts: &ReadOptions,
) -> Result<Experiment, Diagnostic> {
    let fail = |m: String| Diagnostic::whole(origin, m);
    if bytes.len() < 2 {
        return Err(fail(
            "not an Extra-P 3 experiment: the file is too short".into(),
        ));
    }
    let little = i16::from_le_bytes([bytes[0], bytes[1]]) == 1;
    let mut c = Cursor {
        buf: bytes,
        pos: 2,
        little,
    };
    match c.string() {
        Ok(q) if q == QUALIFIER => {}
        _ => {
            return Err(fail(format!(
                "not an Extra-P 3 experiment: no `{QUALIFIER}` qualifier"
            )))
        }
    }
    let mut b = Builder::new(origin, "", opts);
    read_records(&mut c, &mut b).map_err(fail)?;
    b.finish()
        .map_err(|d| fail(d.message.clone()).with_hint(d.hint.unwrap_or_default()))
}

fn read_records(c: &mut Cursor, b: &mut Builder) -> R<()> {
    c.string()?; // version
    let mut metrics: Vec<String> = Vec::new();
    let mut regions: HashMap<i64, String> = HashMap::new();
    let mut region_names: HashMap<String, usize> = HashMap::new();
    let mut callpaths: HashMap<i64, String> = HashMap::new();
    let mut coords: HashMap<i64, usize> = HashMap::new();
    let mut sparse = false;
    while let Some(prefix) = c.string_or_end()? {
        let at = c.pos;
        match prefix.as_str() {
            "" => break,
            "Parameter" => {
                c.i64()?;
                let name = c.string()?;
                if b.parameters.contains(&name) {
                    return Err(format!("parameter `{name}` is declared twice (byte {at})"));
                }
                b.parameters.push(name);
            }
            "Metric" => {
                c.i64()?;
                metrics.push(c.string()?);
                c.string()?; // unit
            }
            "Region" => {
                let id = c.i64()?;
                let mut name = c.string()?;
                c.string()?; // source file
                c.i64()?; // first line
                          // Distinct regions with one name get `#k` suffixes, as in Extra-P.
                if !regions.contains_key(&id) {
                    let seen = region_names.entry(name.clone()).or_insert(0);
                    if *seen > 0 {
                        name = format!("{name} #{seen}");
                    }
                    *seen += 1;
                }
                regions.insert(id, name);
            }
            "Callpath" => {
                let id = c.i64()?;
                let region = c.i64()?;
                let parent = c.i64()?;
                let name = regions.get(&region).ok_or_else(|| {
                    format!("callpath at byte {at} names unknown region {region}")
                })?;
                let full = if parent == -1 {
                    name.clone()
                } else {
                    let p = callpaths.get(&parent).ok_or_else(|| {
                        format!("callpath at byte {at} names unknown parent {parent}")
                    })?;
                    format!("{p}->{name}")
                };
                callpaths.insert(id, full);
            }
            "Coordinate" => {
                let id = c.i64()?;
                let n = c.count()?;
                let mut coord = vec![f64::NAN; b.parameters.len()];
                for _ in 0..n {
                    let name = c.string()?;
                    let v = c.f64()?;
                    let i = b
                        .parameters
                        .iter()
                        .position(|p| *p == name)
                        .ok_or_else(|| {
                            format!("coordinate at byte {at} names unknown parameter `{name}`")
                        })?;
                    coord[i] = v;
                }
                if coord.iter().any(|v| !v.is_finite()) {
                    return Err(format!(
                        "coordinate at byte {at} lacks a value for some parameter"
                    ));
                }
                let i = b
                    .coordinate(coord, Span::new(0, 0))
                    .map_err(|d| d.message)?;
                coords.insert(id, i);
            }
            "ModelComment" => {
                c.i64()?;
                c.string()?;
            }
            "SingleParameterSimpleModelGenerator" | "SingleParameterRefiningModelGenerator" => {
                c.string()?; // user name
                c.string()?; // cross-validation method
                c.f64()?; // eps
                c.string()?; // mean or median
                sparse |= generator_options(c);
                if prefix == "SingleParameterSimpleModelGenerator" {
                    for _ in 0..c.count()? {
                        c.expect("CompoundTerm")?;
                        skip_compound(c)?;
                    }
                    c.i64()?; // maximum term count
                }
            }
            "MultiParameterSimpleModelGenerator" | "MultiParameterSparseModelGenerator" => {
                c.string()?;
                c.string()?;
                sparse |= generator_options(c);
            }
            "ExperimentPoint" => {
                let coord = c.i64()?;
                let count = c.i64()?;
                let mean = c.f64()?;
                c.f64()?;
                c.f64()?;
                let std = c.f64()?;
                let median = c.f64()?;
                c.f64()?;
                c.f64()?;
                let minimum = c.f64()?;
                let maximum = c.f64()?;
                let metric = c.i64()?;
                let callpath = c.i64()?;
                let &ci = coords.get(&coord).ok_or_else(|| {
                    format!("point at byte {at} names unknown coordinate {coord}")
                })?;
                let metric = usize::try_from(metric)
                    .ok()
                    .and_then(|m| metrics.get(m))
                    .ok_or_else(|| format!("point at byte {at} names unknown metric {metric}"))?;
                let callpath = callpaths.get(&callpath).ok_or_else(|| {
                    format!("point at byte {at} names unknown callpath {callpath}")
                })?;
                for v in [mean, median, minimum, maximum] {
                    b.value(v, Span::new(0, 0))
                        .map_err(|d| format!("point at byte {at}: {}", d.message))?;
                }
                let s = Summary {
                    mean,
                    median,
                    minimum,
                    maximum,
                    std: if std.is_finite() { std } else { 0.0 },
                    repetitions: usize::try_from(count).unwrap_or(1).max(1),
                };
                b.add_summary(
                    SeriesKey::new(callpath.clone(), metric.clone()),
                    ci,
                    s,
                    Span::new(0, 0),
                );
            }
            "Model" => {
                c.i64()?;
                c.i64()?;
                c.i64()?;
                let p = c.string()?;
                skip_function(c, &p)?;
                for _ in 0..6 {
                    let p = c.string()?;
                    skip_function(c, &p)?;
                }
                for _ in 0..if sparse { 4 } else { 3 } {
                    c.f64()?;
                }
                for _ in 0..c.count()? {
                    c.i64()?;
                }
                for _ in 0..c.count()? {
                    c.string()?;
                    for _ in 0..c.count()? {
                        c.f64()?;
                        c.f64()?;
                    }
                }
            }
            other => {
                let shown: String = other.chars().take(40).collect();
                return Err(format!(
                    "unknown record `{shown}` at byte {}",
                    at.saturating_sub(other.len() + 4)
                ));
            }
        }
    }
    Ok(())
}
