//! rustc's `--error-format=short`: one line per diagnostic, `file:line:col: level[code]: message`.

use crate::diagnostics::{Diagnostic, Level};
use crate::report::Report;
use std::io::Write;

/// Writes one line per reported diagnostic.
pub(crate) fn write(report: &Report<'_>, out: &mut dyn Write) -> std::io::Result<()> {
    for d in report.diagnostics() {
        writeln!(out, "{}", line(d))?;
    }
    Ok(())
}

/// The short form of `d` (no newline).
pub(crate) fn line(d: &Diagnostic) -> String {
    let level = match d.level {
        Level::Deny => "error",
        Level::Warn => "warning",
        Level::Allow => "note",
    };
    format!(
        "{}:{}:{}: {level}[{}]: {}",
        d.primary.file.display(),
        d.primary.line_start,
        d.primary.column_start,
        d.code.as_str(),
        d.message
    )
}
