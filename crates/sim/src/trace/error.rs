//! A trace problem located in its file, line and column, shown with the line and a caret.

use std::fmt;

use perfcompose_core::diag::{clip_line, MAX_LINE_CHARS};

/// A trace problem located in its file.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceError {
    pub file: String,
    /// 1-based; 0 when the problem is about the whole file.
    pub line: u64,
    /// 1-based column of the offending token (0 when unknown).
    pub col: usize,
    pub rank: Option<u32>,
    pub message: String,
    pub line_text: String,
    pub hint: Option<String>,
}

impl TraceError {
    pub(super) fn whole(file: &str, message: impl Into<String>) -> TraceError {
        TraceError {
            file: file.to_string(),
            line: 0,
            col: 0,
            rank: None,
            message: message.into(),
            line_text: String::new(),
            hint: None,
        }
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.message)?;
        write!(f, "  --> {}", self.file)?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
            if self.col > 0 {
                write!(f, ":{}", self.col)?;
            }
        }
        if let Some(r) = self.rank {
            write!(f, " (rank {r})")?;
        }
        if !self.line_text.is_empty() {
            let g = self.line.to_string();
            let pad = " ".repeat(g.len());
            // `col` counts bytes; a long line is shown as a window around it.
            let at = self.col.saturating_sub(1);
            let shown = clip_line(&self.line_text, at, at + 1, MAX_LINE_CHARS);
            write!(f, "\n{pad} |\n{g} | {}", shown.text)?;
            if self.col > 0 {
                write!(f, "\n{pad} | {}^", " ".repeat(shown.column_of(at)))?;
            }
        }
        if let Some(h) = &self.hint {
            write!(f, "\n  = hint: {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for TraceError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(line_text: String, col: usize) -> TraceError {
        TraceError {
            file: "t.txt".into(),
            line: 7,
            col,
            rank: None,
            message: "unknown action".into(),
            line_text,
            hint: None,
        }
    }

    /// The character above the caret.
    fn under_caret(shown: &str) -> char {
        let lines: Vec<&str> = shown.lines().collect();
        let caret = lines.iter().rposition(|l| l.ends_with('^')).unwrap();
        let at = lines[caret].chars().count() - 1;
        lines[caret - 1].chars().nth(at).unwrap()
    }

    #[test]
    fn a_long_trace_line_is_clipped_around_the_caret() {
        let line = format!(
            "0 compute {} é bogus {}",
            "1".repeat(5000),
            "2 ".repeat(3000)
        );
        let col = line.find("bogus").unwrap() + 1;
        let shown = error(line, col).to_string();
        assert!(shown.len() < 600, "{} bytes:\n{shown}", shown.len());
        assert!(shown.contains("\n7 | …"), "{shown}");
        assert_eq!(under_caret(&shown), 'b');
        // Short lines are shown whole, the caret under the byte column's character.
        let shown = error("0 sénd 1 8".into(), 6).to_string();
        assert!(shown.contains("7 | 0 sénd 1 8\n"), "{shown}");
        assert_eq!(under_caret(&shown), 'n');
    }
}
