//! Output and error reporting. Commands write their results through [`stdout`], so a
//! failed write is an error instead of a panic (`println!` panics), and `main` ends
//! quietly with status 0 when [`is_broken_pipe`] says the reader went away (`| head`).
//! Located diagnostics get the offending line with a caret (miette); everything else
//! prints its cause chain. Both exit with status 2.

use std::io;

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
/// hint. Falls back to the plain rendering for sources without text.
pub fn render(d: &Diagnostic) -> String {
    if d.source.is_empty() {
        return d.render();
    }
    let (line, col) = d.line_col();
    let len = d.span.end.saturating_sub(d.span.start).max(1);
    let start = d.span.start.min(d.source.len().saturating_sub(1));
    let mut diag =
        miette::MietteDiagnostic::new(format!("{} ({}:{}:{})", d.message, d.origin, line, col))
            .with_label(miette::LabeledSpan::at(
                start..start + len.min(d.source.len() - start),
                "here",
            ));
    if let Some(h) = &d.hint {
        diag = diag.with_help(h.clone());
    }
    let report = miette::Report::new(diag)
        .with_source_code(miette::NamedSource::new(d.origin.clone(), d.source.clone()));
    format!("{report:?}")
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
