//! A trace problem located in its file, line and column, shown with the line and a caret.

use std::fmt;

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
            write!(f, "\n{pad} |\n{g} | {}", self.line_text)?;
            if self.col > 0 {
                write!(f, "\n{pad} | {}^", " ".repeat(self.col - 1))?;
            }
        }
        if let Some(h) = &self.hint {
            write!(f, "\n  = hint: {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for TraceError {}
