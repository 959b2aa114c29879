//! What is reported, in order: the roots searched by position, and the diagnostics of every
//! stage attached to their crates, sorted and deduplicated.

use crate::crate_graph::CrateSpec;
use crate::diagnostics::{Diagnostic, sort};
use crate::parse::Parsed;
use crate::resolve::{DefMap, FnId};
use crate::source::SourceMap;
use std::collections::HashMap;
use std::path::PathBuf;

/// The roots by position, then crate: of two copies of one root (a file included by two
/// targets), the first crate's is kept, the crate that owns the file's diagnostics.
pub fn sorted_roots(map: &DefMap<'_>, mut roots: Vec<FnId>) -> Vec<FnId> {
    roots.sort_by_key(|&f| {
        let func = map.func(f);
        (func.span, map.modules[func.module as usize].krate)
    });
    roots
}

/// The diagnostics as reported: each attached to the crate that owns its file, sorted,
/// and a file read by two crates reporting its parse errors and missing modules once.
pub fn settle(
    mut diags: Vec<Diagnostic>,
    parsed: &Parsed,
    sources: &SourceMap,
    crates: &[CrateSpec],
) -> Vec<Diagnostic> {
    attach_origins(&mut diags, parsed, sources, crates);
    sort(&mut diags);
    diags.dedup();
    diags
}

/// Each diagnostic belongs to the first crate that reads its file.
fn attach_origins(
    diags: &mut [Diagnostic],
    parsed: &Parsed,
    sources: &SourceMap,
    crates: &[CrateSpec],
) {
    let mut owner: HashMap<PathBuf, usize> = HashMap::new();
    for ((_, krate), f) in &parsed.files {
        let e = owner
            .entry(sources.file(f.file).display.clone())
            .or_insert(*krate);
        *e = (*e).min(*krate);
    }
    for d in diags.iter_mut().filter(|d| d.origin.is_none()) {
        if let Some(&k) = owner.get(&d.primary.file) {
            d.origin = Some(crates[k].origin.clone());
        }
    }
}
