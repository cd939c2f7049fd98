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

/// Print an error from a command to stderr.
pub fn print_error(e: &anyhow::Error) {
    if let Some(d) = e.downcast_ref::<Diagnostic>() {
        perfcompose_core::stderr_line!("{}", render(d));
        return;
    }
    if let Some(perfcompose_runtime::Error::Input(d)) =
        e.downcast_ref::<perfcompose_runtime::Error>()
    {
        perfcompose_core::stderr_line!("{}", render(d));
        return;
    }
    let mut msg = format!("error: {e}");
    for cause in e.chain().skip(1) {
        msg.push_str(&format!("\n  caused by: {cause}"));
    }
    perfcompose_core::stderr_line!("{msg}");
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
