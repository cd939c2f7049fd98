//! JSON read through `serde_json`'s `RawValue`, so every value keeps its byte span in the
//! file: objects with their members in file order, numbers and strings checked where they
//! stand, and `serde_json` errors located at their line and column. The JSON-based
//! readers (`json`, `jsonl`, `archive`) share these.

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::builder::Builder;
use crate::diag::{line_offset, Diagnostic, Span};

/// Byte offset of `sub` inside `text` (both borrowed from the same buffer); 0 if `sub`
/// lies elsewhere.
pub(crate) fn offset_in(text: &str, sub: &str) -> usize {
    let (t, s) = (text.as_ptr() as usize, sub.as_ptr() as usize);
    if s >= t && s + sub.len() <= t + text.len() {
        s - t
    } else {
        0
    }
}

/// The span of the character at byte `pos` of `text` (snapped back to a boundary).
pub(crate) fn char_span(text: &str, pos: usize) -> Span {
    let mut start = pos.min(text.len());
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let len = text[start..].chars().next().map_or(0, char::len_utf8);
    Span::new(start, start + len)
}

/// The span of a raw JSON value inside `text`.
pub(crate) fn raw_span(text: &str, raw: &RawValue) -> Span {
    let start = offset_in(text, raw.get());
    Span::new(start, start + raw.get().len())
}

/// A `serde_json` error in `sub` (a slice of `text`) as a diagnostic at its position.
pub(crate) fn json_error(
    b: &Builder,
    text: &str,
    sub: &str,
    e: &serde_json::Error,
    what: &str,
) -> Diagnostic {
    let base = offset_in(text, sub);
    let pos = if e.line() == 0 {
        base
    } else {
        (base + line_offset(sub, e.line()) + e.column().saturating_sub(1)).min(text.len())
    };
    let msg = e.to_string();
    let msg = msg.rfind(" at line ").map_or(msg.as_str(), |i| &msg[..i]);
    // Point at the last character rather than past the end.
    let span = char_span(text, pos.min(text.len().saturating_sub(1)));
    b.err(span, format!("invalid JSON: {msg}"))
        .with_hint(format!("expected {what} here"))
}

/// A JSON number (integers included).
pub(crate) fn number(
    b: &Builder,
    raw: &RawValue,
    text: &str,
    what: &str,
) -> Result<f64, Diagnostic> {
    serde_json::from_str::<f64>(raw.get()).map_err(|_| {
        let shown: String = raw.get().chars().take(40).collect();
        b.err(
            raw_span(text, raw),
            format!("expected {what} (a number), found `{shown}`"),
        )
    })
}

/// A JSON string.
pub(crate) fn string(
    b: &Builder,
    raw: &RawValue,
    text: &str,
    what: &str,
) -> Result<String, Diagnostic> {
    serde_json::from_str::<String>(raw.get()).map_err(|_| {
        let shown: String = raw.get().chars().take(40).collect();
        b.err(
            raw_span(text, raw),
            format!("expected the {what} as a string, found `{shown}`"),
        )
    })
}

/// A JSON object's members in file order (serde_json's own map sorts them, and Extra-P
/// takes the parameter order from the key order).
pub(crate) struct OrderedMap<'a>(pub Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for OrderedMap<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = OrderedMap<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> Result<Self::Value, M::Error> {
                let mut out: Vec<(String, &'a RawValue)> = Vec::new();
                while let Some((k, v)) = m.next_entry::<String, &'de RawValue>()? {
                    if out.iter().any(|(seen, _)| *seen == k) {
                        return Err(serde::de::Error::custom(format!("duplicate key `{k}`")));
                    }
                    out.push((k, v));
                }
                Ok(OrderedMap(out))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

impl<'a> OrderedMap<'a> {
    /// Parse `raw` (a slice of `text`) as an object.
    pub(crate) fn parse(
        b: &Builder,
        raw: &'a RawValue,
        text: &str,
        what: &str,
    ) -> Result<OrderedMap<'a>, Diagnostic> {
        serde_json::from_str(raw.get()).map_err(|e| json_error(b, text, raw.get(), &e, what))
    }

    pub(crate) fn get(&self, key: &str) -> Option<&'a RawValue> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }
}

/// Parse `raw` as `T`, reporting errors at their position.
pub(crate) fn parse_as<'a, T: Deserialize<'a>>(
    b: &Builder,
    raw: &'a RawValue,
    text: &str,
    what: &str,
) -> Result<T, Diagnostic> {
    serde_json::from_str(raw.get()).map_err(|e| json_error(b, text, raw.get(), &e, what))
}
