//! Source spans and located diagnostics.
//!
//! Every parser in perfcompose (model expressions, terms, components files, measurement
//! files, platforms, traces) reports malformed input as a [`Diagnostic`]: the name of the
//! input (a file path, `<term>`, `--at`), the whole source text, the byte span of the
//! problem, a lower-case message and an optional hint. The binary renders it with a caret;
//! library users get a plain `origin:line:col: message` through `Display`.

use std::fmt;

/// A half-open byte range `start..end` into a source text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start,
            end: end.max(start),
        }
    }

    /// A span covering one position (rendered as a single caret).
    pub fn at(pos: usize) -> Span {
        Span::new(pos, pos + 1)
    }

    /// The smallest span covering both.
    pub fn join(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }

    /// Shift by `offset` bytes (used when a sub-source is embedded in a larger file).
    pub fn shift(self, offset: usize) -> Span {
        Span::new(self.start + offset, self.end + offset)
    }
}

/// A problem in some input, located precisely enough to show a caret under it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Where the source came from: a path, `<term>`, `--at`, ...
    pub origin: String,
    /// The full source text the span points into.
    pub source: String,
    pub span: Span,
    /// Lower-case, no trailing period.
    pub message: String,
    pub hint: Option<String>,
}

impl Diagnostic {
    pub fn new(
        origin: impl Into<String>,
        source: impl Into<String>,
        span: Span,
        message: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic {
            origin: origin.into(),
            source: source.into(),
            span,
            message: message.into(),
            hint: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Diagnostic {
        self.hint = Some(hint.into());
        self
    }

    /// A diagnostic about a whole input that has no meaningful position (line 1, column 1).
    pub fn whole(origin: impl Into<String>, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(origin, String::new(), Span::new(0, 0), message)
    }

    /// Re-home a diagnostic from an embedded snippet (e.g. a model string inside a TOML
    /// file) into the enclosing source, where the snippet starts at byte `offset`.
    pub fn embed(mut self, origin: &str, source: &str, offset: usize) -> Diagnostic {
        self.origin = origin.to_string();
        self.source = source.to_string();
        self.span = self.span.shift(offset);
        self
    }

    /// 1-based line and column (in characters) of the span start.
    pub fn line_col(&self) -> (usize, usize) {
        line_col(&self.source, self.span.start)
    }

    /// The full text of the line holding the span start.
    pub fn line_text(&self) -> &str {
        let start = floor_char_boundary(&self.source, self.span.start);
        let begin = self.source[..start].rfind('\n').map_or(0, |i| i + 1);
        let end = self.source[start..]
            .find('\n')
            .map_or(self.source.len(), |i| start + i);
        &self.source[begin..end]
    }

    /// A multi-line rendering with the offending line and a caret, independent of any
    /// terminal library (the binary uses miette for colour; tests and library users use this).
    pub fn render(&self) -> String {
        let (line, col) = self.line_col();
        let mut out = format!(
            "error: {}\n  --> {}:{}:{}\n",
            self.message, self.origin, line, col
        );
        if !self.source.is_empty() {
            let text = self.line_text();
            let width = self.span_chars_on_line().max(1);
            let gutter = line.to_string();
            let pad = " ".repeat(gutter.len());
            out.push_str(&format!("{pad} |\n{gutter} | {text}\n"));
            out.push_str(&format!(
                "{pad} | {}{}\n",
                " ".repeat(col - 1),
                "^".repeat(width)
            ));
        }
        if let Some(h) = &self.hint {
            out.push_str(&format!("  = hint: {h}\n"));
        }
        out
    }

    /// Number of characters the span covers on its first line.
    pub fn span_chars_on_line(&self) -> usize {
        let start = floor_char_boundary(&self.source, self.span.start);
        let mut end = self.span.end.clamp(start, self.source.len());
        // A span may end inside a multi-byte character (e.g. `Span::at` on `é`).
        while !self.source.is_char_boundary(end) {
            end += 1;
        }
        let slice = &self.source[start..end];
        slice.split('\n').next().map_or(0, |s| s.chars().count())
    }
}

/// The largest character boundary of `s` at or before byte `pos` (clamped to the end).
fn floor_char_boundary(s: &str, pos: usize) -> usize {
    let mut pos = pos.min(s.len());
    while !s.is_char_boundary(pos) {
        pos -= 1;
    }
    pos
}

/// 1-based (line, column) of byte offset `pos`, columns counted in characters.
pub fn line_col(source: &str, pos: usize) -> (usize, usize) {
    let mut pos = pos.min(source.len());
    while !source.is_char_boundary(pos) {
        pos -= 1;
    }
    let before = &source[..pos];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = source[line_start..pos].chars().count() + 1;
    (line, col)
}

/// Byte offset of the start of 1-based `line` (clamped to the end of the source).
pub fn line_offset(source: &str, line: usize) -> usize {
    if line <= 1 {
        return 0;
    }
    let mut seen = 1;
    for (i, b) in source.bytes().enumerate() {
        if b == b'\n' {
            seen += 1;
            if seen == line {
                return i + 1;
            }
        }
    }
    source.len()
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (line, col) = self.line_col();
        write!(f, "{}:{}:{}: {}", self.origin, line, col, self.message)?;
        if let Some(h) = &self.hint {
            write!(f, " (hint: {h})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostic {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_are_one_based_in_characters() {
        let src = "a = 1\nbé = x +\n";
        assert_eq!(line_col(src, 0), (1, 1));
        assert_eq!(line_col(src, 6), (2, 1));
        // 'é' is two bytes: the '=' after "bé " is character 4.
        assert_eq!(line_col(src, 10), (2, 4));
        assert_eq!(line_offset(src, 2), 6);
    }

    #[test]
    fn render_puts_a_caret_under_the_span() {
        let d = Diagnostic::new(
            "<term>",
            "pipe(qsort, foo)",
            Span::new(12, 15),
            "unknown component `foo`",
        )
        .with_hint("known components: inc, nop, qsort");
        let r = d.render();
        assert!(r.contains("<term>:1:13"), "{r}");
        assert!(r.contains("pipe(qsort, foo)\n"), "{r}");
        assert!(r.contains("|             ^^^"), "{r}");
        assert!(r.contains("hint: known components"), "{r}");
    }
}
