//! The `[machine]` table of a components file, and the machine file it may come from.
//!
//! A machine table holds a calibration's parameters (`alpha`, `beta`, `l`, `g`,
//! `T_flops`, ...): times, or times per byte, word or flop, all in the unit the table
//! states with `unit = "s" | "ms" | "us" | "ns"`. The unit is required: the tables people
//! wrote, and the ones `calibrate network` wrote before its files had a version, hold
//! seconds, while block models hold nanoseconds, and a default would add one to the
//! other silently. Values are converted to nanoseconds ([`TimeUnit::INTERNAL`]) as they
//! are read, and each keeps the place it was written (for messages).
//!
//! A machine file (`machine_file = "net.toml"`, what `perfcompose calibrate network
//! --machine-out` writes) carries `version = 1` ([`MACHINE_FILE_VERSION`]) above its
//! table. A file without a version is version 0: one written by `calibrate network`
//! before the version existed (recognised by its first line) holds seconds and is read
//! as such; any other must state its unit.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use super::file::{check_name, key_span, toml_error, RESERVED};
use crate::diag::{Diagnostic, LineIndex, Span};
use crate::units::TimeUnit;

/// The version of the machine file `calibrate network --machine-out` writes.
pub const MACHINE_FILE_VERSION: i64 = 1;

/// The first line of a version-0 machine file, as `calibrate network` wrote it (before
/// the host name), and what follows the host name.
const LEGACY_HEADER: (&str, &str) = (
    "# The network of ",
    " as `perfcompose calibrate network` measured it",
);

/// One machine parameter: its value in nanoseconds, and where it was written.
#[derive(Clone, Debug, PartialEq)]
pub struct MachineParam {
    /// The value in the internal unit: nanoseconds (per byte, word or flop where the
    /// parameter is a rate).
    pub ns: f64,
    /// `file:line:col` of the value.
    pub at: String,
}

/// A `[machine]` table as TOML gives it: `unit` and the parameters.
pub(super) type RawTable = BTreeMap<String, Spanned<toml::Value>>;

/// A file that holds a machine table (`calibrate network --machine-out`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMachineFile {
    version: Option<Spanned<i64>>,
    machine: Option<RawTable>,
}

/// The table of the machine file `file` (named in `origin`/`source`), relative to
/// `base_dir`.
pub(super) fn read_file(
    origin: &str,
    source: &str,
    base_dir: &Path,
    file: &Spanned<String>,
) -> Result<BTreeMap<String, MachineParam>, Diagnostic> {
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
    let version = match &parsed.version {
        None => 0,
        Some(v) => {
            let n = *v.get_ref();
            if !(0..=MACHINE_FILE_VERSION).contains(&n) {
                return Err(Diagnostic::new(
                    &file_origin,
                    &text,
                    Span::new(v.span().start, v.span().end),
                    format!("machine file version {n}: this perfcompose reads versions 0 to {MACHINE_FILE_VERSION}"),
                )
                .with_hint("write it again with this perfcompose: mpirun -np 2 perfcompose calibrate network --machine-out FILE"));
            }
            n
        }
    };
    let legacy = (version == 0 && is_legacy_calibration(&text)).then_some(TimeUnit::S);
    read_table(
        &file_origin,
        &text,
        parsed.machine.unwrap_or_default(),
        legacy,
    )
}

/// Whether `text` starts as `calibrate network --machine-out` wrote its files before
/// they had a version (their values are seconds).
fn is_legacy_calibration(text: &str) -> bool {
    let first = text.lines().next().unwrap_or("");
    first.starts_with(LEGACY_HEADER.0) && first.contains(LEGACY_HEADER.1)
}

/// The parameters of a `[machine]` table in nanoseconds, each name and value checked.
/// `implied` is the unit of a table that does not state one (a version-0 calibration);
/// `None`: the table must state it.
pub(super) fn read_table(
    origin: &str,
    source: &str,
    mut table: RawTable,
    implied: Option<TimeUnit>,
) -> Result<BTreeMap<String, MachineParam>, Diagnostic> {
    let stated = table.remove("unit");
    let unit = match (&stated, implied) {
        (Some(u), _) => unit_of(origin, source, u)?,
        (None, Some(u)) => u,
        (None, None) if table.is_empty() => TimeUnit::INTERNAL,
        (None, None) => {
            let (first, value) = table.iter().next().expect("the table is not empty");
            let at = key_span(source, first, value.span());
            return Err(Diagnostic::new(
                origin,
                source,
                at,
                "the [machine] table does not say the unit of its times",
            )
            .with_hint("add unit = \"s\" (or \"ms\", \"us\", \"ns\") to the table; a file `perfcompose calibrate network --machine-out` wrote holds seconds, or write it again with this perfcompose"));
        }
    };
    let mut machine = BTreeMap::new();
    let lines = LineIndex::new(source);
    for (name, value) in table {
        let span = Span::new(value.span().start, value.span().end);
        // The key's span is a search of the whole file: only for an error.
        let key = || key_span(source, &name, value.span());
        if let Err((msg, hint)) = check_name(&name) {
            let msg = msg.replace("a component name", "a machine parameter");
            return Err(Diagnostic::new(origin, source, key(), msg).with_hint(hint));
        }
        if RESERVED.contains(&name.as_str()) {
            return Err(Diagnostic::new(
                origin,
                source,
                key(),
                format!("`{name}` is bound by the patterns and cannot be a machine parameter"),
            )
            .with_hint("x is a component's input size; m, n, k belong to mapreduce"));
        }
        let v = match value.get_ref() {
            toml::Value::Float(f) => *f,
            toml::Value::Integer(i) => *i as f64,
            other => {
                return Err(Diagnostic::new(
                    origin,
                    source,
                    span,
                    format!(
                        "machine parameter `{name}` must be a number, not a {}",
                        other.type_str()
                    ),
                )
                .with_hint(format!(
                    "a time in the table's unit ({unit}), e.g. {name} = 2.5"
                )))
            }
        };
        if !(v.is_finite() && v >= 0.0) {
            return Err(Diagnostic::new(
                origin,
                source,
                span,
                format!(
                    "machine parameter `{name}` must be a finite time ≥ 0, got {}",
                    crate::model::format_number(v)
                ),
            )
            .with_hint(format!(
                "machine parameters are times (or times per byte, word or flop) in the table's unit, {unit}"
            )));
        }
        let (line, col) = lines.line_col(source, span.start);
        machine.insert(
            name,
            MachineParam {
                ns: unit.to_internal(v),
                at: format!("{origin}:{line}:{col}"),
            },
        );
    }
    Ok(machine)
}

/// A `unit = "..."` value: one of the units of time.
pub(super) fn unit_of(
    origin: &str,
    source: &str,
    value: &Spanned<toml::Value>,
) -> Result<TimeUnit, Diagnostic> {
    let span = Span::new(value.span().start, value.span().end);
    let bad = |msg: String| {
        Diagnostic::new(origin, source, span, msg)
            .with_hint("unit = \"s\", \"ms\", \"us\" or \"ns\"")
    };
    match value.get_ref() {
        toml::Value::String(s) => s.parse().map_err(|e| bad(format!("{e}"))),
        other => Err(bad(format!(
            "a unit is a string, not a {}",
            other.type_str()
        ))),
    }
}
