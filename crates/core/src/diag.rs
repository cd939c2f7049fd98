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

    /// Byte offset of the start of the line holding the span start.
    pub fn line_start(&self) -> usize {
        let start = floor_char_boundary(&self.source, self.span.start);
        self.source[..start].rfind('\n').map_or(0, |i| i + 1)
    }

    /// The span's byte range cut to the line of its start (a span may run on past it, or
    /// end inside a multi-byte character).
    pub fn span_on_line(&self) -> (usize, usize) {
        let start = floor_char_boundary(&self.source, self.span.start);
        let line_end = self.line_start() + self.line_text().len();
        let mut end = self.span.end.clamp(start, line_end);
        while !self.source.is_char_boundary(end) {
            end += 1;
        }
        (start, end)
    }

    /// The line of the span as shown: whole up to [`MAX_LINE_CHARS`] characters, else a
    /// window around the span (see [`clip_line`]).
    pub fn excerpt(&self) -> LineExcerpt {
        let line_start = self.line_start();
        let (from, to) = self.span_on_line();
        clip_line(
            self.line_text(),
            from - line_start,
            to - line_start,
            MAX_LINE_CHARS,
        )
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
            let e = self.excerpt();
            let line_start = self.line_start();
            let (from, to) = self.span_on_line();
            let at = e.column_of(from - line_start);
            let width = (e.column_of(to - line_start) - at).max(1);
            let gutter = line.to_string();
            let pad = " ".repeat(gutter.len());
            out.push_str(&format!("{pad} |\n{gutter} | {}\n", e.text));
            out.push_str(&format!(
                "{pad} | {}{}\n",
                " ".repeat(at),
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

/// Longest source line, in characters, shown whole under a diagnostic. A longer line is
/// clipped to a window of this many characters around the problem (a 58 kB term on one
/// line would otherwise be printed whole, twice padded by the caret lines).
pub const MAX_LINE_CHARS: usize = 120;

/// Where a line was clipped: `…` stands for the characters cut off.
pub const ELLIPSIS: char = '…';

/// A source line as a diagnostic shows it: whole, or clipped around the problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineExcerpt {
    /// The text shown, with [`ELLIPSIS`] on each side that was cut.
    pub text: String,
    /// Byte range of the line kept in `text` (after the leading ellipsis, if any).
    pub kept: std::ops::Range<usize>,
    /// Whether the start of the line was cut (`text` then begins with the ellipsis).
    pub cut_left: bool,
}

impl LineExcerpt {
    /// Byte offset in `text` of byte `pos` of the line (clamped to the kept part).
    pub fn offset_of(&self, pos: usize) -> usize {
        let lead = if self.cut_left {
            ELLIPSIS.len_utf8()
        } else {
            0
        };
        lead + pos.clamp(self.kept.start, self.kept.end) - self.kept.start
    }

    /// 0-based column in characters of byte `pos` of the line within `text`.
    pub fn column_of(&self, pos: usize) -> usize {
        self.text[..self.offset_of(pos)].chars().count()
    }
}

/// `line`, or a window of at most `max` characters of it (ellipses included) showing the
/// span `start..end` (bytes of `line`): the span's start always, with as much context on
/// both sides as fits; a span wider than the window is shown from its start.
///
/// ```
/// use perfcompose_core::diag::clip_line;
/// let line = "x".repeat(300) + "BAD" + &"y".repeat(300);
/// let e = clip_line(&line, 300, 303, 21);
/// assert_eq!(e.text, "…xxxxxxxxBADyyyyyyyy…");
/// assert_eq!(e.column_of(300), 9);
/// ```
pub fn clip_line(line: &str, start: usize, end: usize, max: usize) -> LineExcerpt {
    let chars = line.chars().count();
    if chars <= max {
        return LineExcerpt {
            text: line.to_string(),
            kept: 0..line.len(),
            cut_left: false,
        };
    }
    let start = floor_char_boundary(line, start);
    let end = floor_char_boundary(line, end.max(start));
    let span_from = line[..start].chars().count();
    let span_chars = line[start..end].chars().count().max(1);
    // Room for the kept characters, the ellipses aside.
    let room = max.saturating_sub(2).max(1);
    let (from, to) = if span_chars >= room {
        (span_from, span_from + room)
    } else {
        let before = (room - span_chars) / 2;
        let from = span_from.saturating_sub(before);
        let to = (from + room).min(chars);
        (to.saturating_sub(room), to)
    };
    let byte_of = |c: usize| line.char_indices().nth(c).map_or(line.len(), |(i, _)| i);
    let kept = byte_of(from)..byte_of(to);
    let cut_left = from > 0;
    let mut text = String::with_capacity(kept.len() + 2 * ELLIPSIS.len_utf8());
    if cut_left {
        text.push(ELLIPSIS);
    }
    text.push_str(&line[kept.clone()]);
    if to < chars {
        text.push(ELLIPSIS);
    }
    LineExcerpt {
        text,
        kept,
        cut_left,
    }
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

/// The line starts of a source, for many [`line_col`] look-ups in one text: each costs
/// a binary search and the characters of its own line, where [`line_col`] scans the text
/// before the position (a components file of 10,000 models looked up once per model
/// took quadratic time).
#[derive(Clone, Debug)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(source: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(
            source
                .bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        LineIndex { starts }
    }

    /// [`line_col`] of `pos` in `source`, the text this index was built from.
    pub fn line_col(&self, source: &str, pos: usize) -> (usize, usize) {
        let mut pos = pos.min(source.len());
        while !source.is_char_boundary(pos) {
            pos -= 1;
        }
        // The number of line starts at or before `pos` is the 1-based line.
        let line = self.starts.partition_point(|&s| s <= pos);
        let line_start = self.starts[line - 1];
        let col = source[line_start..pos].chars().count() + 1;
        (line, col)
    }
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
    fn line_index_agrees_with_line_col() {
        for src in ["", "a", "a = 1\nbé = x +\n", "\n\nx\r\ny\n", "é\nü"] {
            let index = LineIndex::new(src);
            for pos in 0..=src.len() + 2 {
                assert_eq!(
                    index.line_col(src, pos),
                    line_col(src, pos),
                    "{src:?} at {pos}"
                );
            }
        }
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

    /// The character above the first caret of a rendering, and the caret line's width.
    fn under_caret(r: &str) -> (char, usize) {
        let lines: Vec<&str> = r.lines().collect();
        let caret = lines.iter().position(|l| l.contains('^')).unwrap();
        let at = lines[caret].chars().position(|c| c == '^').unwrap();
        let width = lines[caret].chars().filter(|&c| c == '^').count();
        (lines[caret - 1].chars().nth(at).unwrap(), width)
    }

    #[test]
    fn a_long_line_is_clipped_around_the_caret() {
        // 1,000 nested seq around an unknown name: 10 kB on one line.
        let src = format!("{}bad{}", "seq(inc, ".repeat(1000), ")".repeat(1000));
        let at = src.find("bad").unwrap();
        let d = Diagnostic::new(
            "<term>",
            src.as_str(),
            Span::new(at, at + 3),
            "unknown `bad`",
        );
        let r = d.render();
        assert!(r.len() < 400, "{} bytes:\n{r}", r.len());
        assert!(r.contains("<term>:1:9001"), "{r}");
        let shown = r.lines().nth(3).unwrap();
        assert!(
            shown.starts_with("1 | …") && shown.ends_with('…'),
            "{shown}"
        );
        assert_eq!(shown.chars().count() - 4, MAX_LINE_CHARS, "{shown}");
        assert_eq!(under_caret(&r), ('b', 3));
        // At the ends of the line only one side is cut.
        let d = Diagnostic::new("<term>", src.as_str(), Span::at(0), "here");
        let shown = d.excerpt().text;
        assert!(shown.starts_with("seq(") && shown.ends_with('…'), "{shown}");
        assert_eq!(under_caret(&d.render()), ('s', 1));
        let d = Diagnostic::new("<term>", src.as_str(), Span::at(src.len()), "end");
        let shown = d.excerpt().text;
        assert!(shown.starts_with('…') && shown.ends_with("))"), "{shown}");
        // A short line is shown whole.
        let d = Diagnostic::new("<term>", "pipe(a, b)", Span::at(5), "here");
        assert_eq!(d.excerpt().text, "pipe(a, b)");
    }

    #[test]
    fn clipping_keeps_the_caret_under_its_character_in_multibyte_text() {
        // Two-byte and three-byte characters on both sides of the problem.
        let src = format!("{}→X{}\nnext line", "é€".repeat(200), "ü".repeat(300));
        let at = src.find('X').unwrap();
        let d = Diagnostic::new("f.txt", src.as_str(), Span::at(at), "bad");
        let r = d.render();
        assert_eq!(under_caret(&r), ('X', 1), "{r}");
        assert!(r.contains("f.txt:1:402"), "{r}");
        // A span wider than the window starts at its first character and is cut.
        let d = Diagnostic::new("f.txt", src.as_str(), Span::new(0, at), "wide");
        let e = d.excerpt();
        assert!(!e.cut_left && e.text.ends_with('…'), "{}", e.text);
        assert_eq!(under_caret(&d.render()), ('é', MAX_LINE_CHARS - 2));
        // Spans of any position and width on a long line: never a panic, caret in place.
        let line = "aé€😀".repeat(80);
        let mut ends: Vec<usize> = line.char_indices().map(|(i, _)| i).collect();
        ends.push(line.len());
        for (k, &i) in ends.iter().enumerate().step_by(7) {
            for &j in ends[k..].iter().step_by(13).take(5) {
                let d = Diagnostic::new("f", line.as_str(), Span::new(i, j), "m");
                let r = d.render();
                let want = line[i..].chars().next().unwrap_or('…');
                if i < line.len() {
                    assert_eq!(under_caret(&r).0, want, "{i}..{j}\n{r}");
                }
                assert!(d.excerpt().text.chars().count() <= MAX_LINE_CHARS);
            }
        }
    }
}
