//! A run that found no root checked nothing: it says so (`no-roots`, exit status 2)
//! rather than report a bare "no findings" that a CI gate would take for a pass.

use crate::diagnostics::{Code, Diagnostic};
use crate::source::SourceMap;
use std::path::Path;

/// The `no-roots` error of a run over the workspace at `root`, at its manifest's
/// `[package]` (else `[workspace]`) header (the manifest is read here when the
/// configuration did not read it).
pub(super) fn no_roots(root: &Path, sources: &mut SourceMap) -> Diagnostic {
    let manifest = root.join("Cargo.toml");
    let id = match sources.id(&manifest) {
        Some(id) => id,
        None => {
            let text = std::fs::read_to_string(&manifest).unwrap_or_default();
            sources.add(manifest, text)
        }
    };
    let text = &sources.file(id).text;
    let header = ["[package]", "[workspace]"].iter().find_map(|h| {
        let at = text
            .match_indices(h)
            .find(|&(i, _)| i == 0 || text[..i].ends_with('\n'));
        at.map(|(i, _)| (i, i + h.len()))
    });
    let (lo, hi) = header.unwrap_or((0, 0));
    Diagnostic::new(
        Code::NoRoots,
        "no `#[no_sync]` function and no configured root: nothing was checked",
        sources.span_of(id, lo, hi),
    )
    .with_label("no member of this workspace has a root")
    .with_note(
        "roots are the functions marked `#[nosync::no_sync]` in the members analysed (all, or those `-p` names) and the paths in the configuration's `roots`",
        None,
    )
    .with_help(
        "mark a hot path `#[nosync::no_sync]`; if this workspace has no root on purpose, set `levels = { \"no-roots\" = \"allow\" }` in `[workspace.metadata.nosync-lint]` (or `[package.metadata.nosync-lint]`)",
    )
}
