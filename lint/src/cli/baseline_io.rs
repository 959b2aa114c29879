//! Baseline files on disk: `--write-baseline FILE` writes one, `--baseline FILE` reads one
//! (through the source loader, as every file the lint reads) and applies it. The file read
//! joins the analysis's source map, so that stale entries show their snippet. Errors are
//! written to `err` and become exit status 2.

use crate::baseline::{self, Baseline};
use crate::diagnostics::Diagnostic;
use crate::engine::Analysis;
use crate::source::{DiskLoader, Loader};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes the baseline that accepts every reported finding of `diagnostics` to `path`.
pub(super) fn write(
    path: &Path,
    diagnostics: &[Diagnostic],
    err: &mut dyn Write,
) -> Result<(), i32> {
    let text = baseline::write(diagnostics);
    std::fs::write(path, text).map_err(|e| {
        let _ = writeln!(
            err,
            "error: cannot write baseline `{}`: {e}",
            path.display()
        );
        2
    })
}

/// Reads the baseline at `path` and applies it to `diagnostics`: the ones it lists are
/// removed (a note on `err` counts them), one `stale-baseline-entry` is added per entry that
/// matches none. The file is added to `analysis.sources`.
pub(super) fn apply(
    path: &Path,
    analysis: &mut Analysis,
    diagnostics: Vec<Diagnostic>,
    err: &mut dyn Write,
) -> Result<Vec<Diagnostic>, i32> {
    let display = crate::paths::relative(&analysis.root, &absolute(path));
    let read = DiskLoader
        .read(path)
        .map_err(anyhow::Error::from)
        .and_then(|text| Baseline::parse(&display, text));
    let baseline = read.map_err(|e| {
        let _ = writeln!(
            err,
            "error: cannot use baseline `{}`: {e:#}",
            path.display()
        );
        2
    })?;
    let applied = baseline.apply(diagnostics);
    if applied.suppressed > 0 {
        let _ = writeln!(
            err,
            "note: {} finding(s) accepted by the baseline `{}`",
            applied.suppressed,
            path.display()
        );
    }
    analysis
        .sources
        .add(absolute(path), baseline.text().to_owned());
    Ok(applied.diagnostics)
}

/// `path` from the current directory (as the source map holds files: absolute, printed
/// relative to the workspace root when inside it).
fn absolute(path: &Path) -> PathBuf {
    std::env::current_dir().map_or_else(|_| path.to_owned(), |cwd| cwd.join(path))
}
