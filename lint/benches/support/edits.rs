//! The edits of the warm runs of `workspace.rs`, and the file they edit.

use std::path::{Path, PathBuf};

/// The file the warm runs edit: of the workspace's own files (not a dependency outside it),
/// the one with the most diagnostics (so that the edit moves them), else the middle one.
pub(crate) fn edited_file(
    files: &[PathBuf],
    dir: &Path,
    diags: &[nosync_lint_core::diagnostics::Diagnostic],
) -> Result<PathBuf, String> {
    let own: Vec<&PathBuf> = files.iter().filter(|f| f.starts_with(dir)).collect();
    let in_file = |f: &Path| {
        let shown = f.strip_prefix(dir).unwrap_or(f);
        diags.iter().filter(|d| d.primary.file == shown).count()
    };
    let most = own.iter().map(|f| in_file(f)).max().unwrap_or(0);
    let pick = match most {
        0 => own.get(own.len() / 2),
        _ => own.iter().find(|f| in_file(f) == most),
    };
    pick.map(|p| (*p).clone())
        .ok_or_else(|| "no file in the workspace".to_owned())
}

/// Inserts a comment line at the top of `path`: every span after it moves, so its lowered
/// items and every diagnostic in it change (a new line each round).
pub(crate) fn comment(path: &Path, round: usize) -> Result<(), String> {
    rewrite(path, |text| {
        Some(format!(
            "// edited by the workspace bench, round {round}\n{text}"
        ))
    })
}

/// Inserts a statement at the top of the first fn body of `path` whose header is one line
/// (`fn name(..) .. {`): the code a user changes most, inside a body. `Err` when the file
/// has no such line.
pub(crate) fn body(path: &Path, round: usize) -> Result<(), String> {
    rewrite(path, |text| {
        let at = fn_header_end(text)?;
        let stmt = format!("\n    let _nosync_bench_edit = {round};");
        Some(format!("{}{stmt}{}", &text[..at], &text[at..]))
    })
}

/// The end of the first line that opens a fn body: it starts (after indentation and
/// qualifiers) with `fn ` and ends with `{`.
fn fn_header_end(text: &str) -> Option<usize> {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end();
        let mut words = body.trim_start();
        for q in [
            "pub(crate) ",
            "pub(super) ",
            "pub ",
            "const ",
            "async ",
            "unsafe ",
        ] {
            words = words.strip_prefix(q).unwrap_or(words);
        }
        if words.starts_with("fn ") && body.ends_with('{') {
            return Some(at + body.len());
        }
        at += line.len();
    }
    None
}

fn rewrite(path: &Path, f: impl FnOnce(&str) -> Option<String>) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let edited = f(&text).ok_or_else(|| format!("{}: no fn body to edit", path.display()))?;
    std::fs::write(path, edited).map_err(|e| format!("{}: {e}", path.display()))
}
