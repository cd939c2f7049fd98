//! Output and error reporting. Commands write their results through [`stdout`], so a
//! failed write is an error instead of a panic (`println!` panics), and `main` ends
//! quietly with status 0 when [`is_broken_pipe`] says the reader went away (`| head`).
//! Located diagnostics get the offending line with a caret (miette); everything else
//! prints its cause chain. Both exit with status 2.

use std::io;

use perfcompose_core::diag::{clip_line, MAX_LINE_CHARS};
use perfcompose_core::Diagnostic;

/// Standard output, locked, for a command's results: write with `writeln!(out, ...)?`.
/// Line-buffered like `println!`, so lines still interleave with stderr as before.
pub fn stdout() -> io::StdoutLock<'static> {
    io::stdout().lock()
}

/// Whether the error (or one of its causes) is a write to a pipe nobody reads any more.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// An error this process does not print: another MPI rank of the same job (rank 0)
/// reports it, so that a job prints each error once. The command still exits with 2.
#[derive(Debug, thiserror::Error)]
#[error("reported by rank 0")]
pub struct ReportedElsewhere;

/// An error every process of an MPI job hits alike (a flag, a file read before MPI is
/// up): the process the launcher made rank 0 (or one no launcher started) returns it to
/// be printed, the others [`ReportedElsewhere`], so that the job prints it once.
pub fn once_per_job(e: impl Into<anyhow::Error>) -> anyhow::Error {
    match perfcompose_runtime::host::launcher_rank() {
        Some(rank) if rank != 0 => ReportedElsewhere.into(),
        _ => e.into(),
    }
}

/// Whether the error is [`ReportedElsewhere`].
pub fn is_reported_elsewhere(e: &anyhow::Error) -> bool {
    e.downcast_ref::<ReportedElsewhere>().is_some()
}

/// Print an error from a command to stderr ([`error_text`]).
pub fn print_error(e: &anyhow::Error) {
    perfcompose_core::stderr_line!("{}", error_text(e));
}

/// An error as the binary prints it: the message and each cause on a line of its own,
/// then the first hint a cause has; a located [`Diagnostic`] anywhere in the chain is
/// rendered with its line and caret (and its own hint).
pub fn error_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    let mut hint = None;
    for (i, cause) in e.chain().enumerate() {
        if let Some(d) = located(cause) {
            if i > 0 {
                text.push('\n');
            }
            text.push_str(&render(d));
            return text;
        }
        if i == 0 {
            text = format!("error: {cause}");
        } else {
            text.push_str(&format!("\n  caused by: {cause}"));
        }
        hint = hint.or_else(|| hint_of(cause));
    }
    if let Some(h) = hint {
        text.push_str(&format!("\n  hint: {h}"));
    }
    text
}

/// What the libraries suggest for `cause`: how to start a command, which kernels exist.
fn hint_of(cause: &(dyn std::error::Error + 'static)) -> Option<String> {
    use perfcompose_runtime::command::CommandError;
    use perfcompose_runtime::BuildError;
    if let Some(e) = cause.downcast_ref::<CommandError>() {
        return e.hint();
    }
    if let Some(e) = cause.downcast_ref::<BuildError>() {
        return e.hint();
    }
    #[cfg(feature = "mpi")]
    if let Some(perfcompose_mpi::error::DesignError::Build(e)) = cause.downcast_ref() {
        return e.hint();
    }
    match cause.downcast_ref::<perfcompose_runtime::Error>() {
        Some(perfcompose_runtime::Error::Build(e)) => e.hint(),
        _ => None,
    }
}

/// The located diagnostic that `cause` is, or holds as its whole message (the libraries'
/// `Input` variants, and their wrappers that pass an error through unchanged).
fn located<'a>(cause: &'a (dyn std::error::Error + 'static)) -> Option<&'a Diagnostic> {
    use perfcompose_runtime::Error as Runtime;
    if let Some(d) = cause.downcast_ref::<Diagnostic>() {
        return Some(d);
    }
    if let Some(Runtime::Input(d)) = cause.downcast_ref::<Runtime>() {
        return Some(d);
    }
    match cause.downcast_ref::<perfcompose_report::Error>() {
        Some(perfcompose_report::Error::Input(d)) => return Some(d),
        Some(perfcompose_report::Error::Runtime(Runtime::Input(d))) => return Some(d),
        _ => {}
    }
    #[cfg(feature = "mpi")]
    if let Some(perfcompose_mpi::Error::Runtime(Runtime::Input(d))) =
        cause.downcast_ref::<perfcompose_mpi::Error>()
    {
        return Some(d);
    }
    None
}

/// Render a diagnostic with miette: `origin:line:col`, the source line, a caret and the
/// hint. Falls back to the plain rendering for sources without text. Lines longer than
/// [`MAX_LINE_CHARS`] are shown as a window around the problem (see [`Shown`]).
pub fn render(d: &Diagnostic) -> String {
    if d.source.is_empty() {
        return d.render();
    }
    let (line, col) = d.line_col();
    let shown = Shown::new(d);
    let mut diag =
        miette::MietteDiagnostic::new(format!("{} ({}:{}:{})", d.message, d.origin, line, col))
            .with_label(miette::LabeledSpan::at(shown.label.clone(), "here"));
    if let Some(h) = &d.hint {
        diag = diag.with_help(h.clone());
    }
    let report = miette::Report::new(diag).with_source_code(shown);
    format!("{report:?}")
}

/// The source as miette shows it: every line longer than [`MAX_LINE_CHARS`] characters
/// clipped (the diagnostic's line around its span, the others to their start), the span
/// moved into the clipped text, and the header's `origin:line:col` that of the original
/// (line and column in characters, as in the message).
struct Shown {
    name: String,
    text: String,
    /// The span in `text`, never empty (a caret needs a character).
    label: std::ops::Range<usize>,
    /// 0-based line and character column of the span in the original source.
    line: usize,
    column: usize,
}

impl Shown {
    fn new(d: &Diagnostic) -> Shown {
        let own_start = d.line_start();
        let (from, to) = d.span_on_line();
        let mut text = String::with_capacity(d.source.len().min(64 * 1024));
        let mut label = 0..0;
        let mut start = 0;
        for raw in d.source.split_inclusive('\n') {
            let body = raw.trim_end_matches('\n');
            if start == own_start {
                let e = d.excerpt();
                let at = text.len() + e.offset_of(from - own_start);
                let end = text.len() + e.offset_of(to - own_start);
                label = at..end;
                text.push_str(&e.text);
            } else {
                text.push_str(&clip_line(body, 0, 0, MAX_LINE_CHARS).text);
            }
            text.push_str(&raw[body.len()..]);
            start += raw.len();
        }
        if own_start == d.source.len() {
            // The span is past a final newline: an empty last line.
            label = text.len()..text.len();
        }
        // A caret needs a character: widen an empty span to the next one (or stay at the end).
        if label.is_empty() {
            let next = text[label.start..].chars().next().map_or(0, char::len_utf8);
            label.end = label.start + next;
        }
        let (line, col) = d.line_col();
        Shown {
            name: d.origin.clone(),
            text,
            label,
            line: line - 1,
            column: col - 1,
        }
    }
}

impl miette::SourceCode for Shown {
    fn read_span<'a>(
        &'a self,
        span: &miette::SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        let c = self.text.as_str().read_span(span, before, after)?;
        // The header reads the label's own span without context: give it the original
        // place; context reads keep the line numbers of the (line-preserving) clipped text.
        let (line, column) = if before == 0 && span.offset() == self.label.start {
            (self.line, self.column)
        } else {
            (c.line(), c.column())
        };
        Ok(Box::new(miette::MietteSpanContents::new_named(
            self.name.clone(),
            c.data(),
            *c.span(),
            line,
            column,
            c.line_count(),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfcompose_core::Span;
    use perfcompose_runtime::{Error, FileAction};

    #[test]
    fn a_cause_is_printed_on_its_own_line_with_the_reason_of_the_system() {
        let path = std::path::Path::new("/nowhere/run.json");
        let io = io::Error::new(io::ErrorKind::PermissionDenied, "permission denied");
        let e = anyhow::Error::from(Error::file(FileAction::Write, path)(io));
        assert_eq!(
            error_text(&e),
            "error: cannot write /nowhere/run.json\n  caused by: permission denied"
        );
        // The io::Error itself stays reachable, kind and all.
        let source = e.chain().nth(1).and_then(|c| c.downcast_ref::<io::Error>());
        assert_eq!(
            source.map(io::Error::kind),
            Some(io::ErrorKind::PermissionDenied)
        );
    }

    #[test]
    fn a_located_cause_keeps_its_caret_after_the_messages_above_it() {
        let d = Diagnostic::new("<term>", "tpool(n, inc)", Span::new(6, 7), "symbolic");
        let e = anyhow::Error::from(Error::from(d)).context("--overhead: not a design");
        let text = error_text(&e);
        assert!(
            text.starts_with("error: --overhead: not a design\n"),
            "{text}"
        );
        assert!(text.contains("symbolic (<term>:1:7)"), "{text}");
        assert!(text.contains("tpool(n, inc)"), "{text}");
        assert!(text.contains('┬'), "{text}");
    }

    #[test]
    fn a_hint_of_a_cause_follows_the_chain() {
        let e = anyhow::Error::from(Error::from(perfcompose_runtime::BuildError::ZeroThreads {
            pattern: "tpool".into(),
        }));
        assert_eq!(
            error_text(&e),
            "error: tpool needs at least one thread, got 0\n  hint: use a thread count of 1 or more"
        );
    }
}
