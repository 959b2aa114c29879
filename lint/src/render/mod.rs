//! Renderers: format a [`Report`] onto a writer. Nothing is computed here: the diagnostics,
//! their packages and fingerprints come from the engine and [`crate::report`].

pub(crate) mod grouped;
pub(crate) mod human;
pub(crate) mod json;
pub(crate) mod sarif;
pub(crate) mod short;

use crate::report::Report;
use std::io::Write;

/// How the report is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// rustc-style text with snippets; `summary`: a last line counting errors and warnings;
    /// `full`: every finding with its whole chain (`-v`), rather than the findings of one
    /// call together with the hops inside dependencies folded.
    Human {
        color: bool,
        summary: bool,
        full: bool,
    },
    /// rustc's `--error-format=short`: one line per diagnostic.
    Short,
    /// cargo JSON; `ansi`: the `rendered` field has colours; `short`: it is one line.
    Json { ansi: bool, short: bool },
    /// SARIF 2.1.0.
    Sarif,
}

/// What [`render`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rendered {
    /// `false` when a diagnostic's human rendering panicked and its short form stood in
    /// (the output is not what it should be: the run exits 2).
    pub complete: bool,
}

/// Writes `report` to `out` in `format`.
pub fn render(
    format: Format,
    report: &Report<'_>,
    out: &mut dyn Write,
) -> std::io::Result<Rendered> {
    let complete = match format {
        Format::Human {
            color,
            summary,
            full,
        } => {
            let style = human::Style {
                color,
                summary,
                full,
            };
            human::write(report, style, out)?
        }
        Format::Short => {
            short::write(report, out)?;
            true
        }
        Format::Json { ansi, short } => json::write(report, json::Rendering { ansi, short }, out)?,
        Format::Sarif => {
            out.write_all(sarif::render(report).as_bytes())?;
            true
        }
    };
    Ok(Rendered { complete })
}
