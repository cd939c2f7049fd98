//! Error reporting: located diagnostics get the offending line with a caret (miette);
//! everything else prints its cause chain. Both exit with status 2.

use perfcompose_core::Diagnostic;

/// Print an error from a command to stderr.
pub fn print_error(e: &anyhow::Error) {
    if let Some(d) = e.downcast_ref::<Diagnostic>() {
        eprintln!("{}", render(d));
        return;
    }
    let mut msg = format!("error: {e}");
    for cause in e.chain().skip(1) {
        msg.push_str(&format!("\n  caused by: {cause}"));
    }
    eprintln!("{msg}");
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
