//! Roots, sinks and escapes from nosync's attributes, read through the typed model of
//! `nosync-syntax` that the macros use: the same forms, errors and default reasons.
//!
//! An attribute the macro rejects is a located `invalid-annotation` diagnostic and is
//! otherwise ignored, as the macro ignores it (it emits the item unmarked next to its
//! `compile_error!`).

use super::*;
use crate::diagnostics::{Code, Diagnostic};
use crate::parse::ir::{Args, AttrIr, AttrName, Kind};
use crate::source::SourceMap;

/// Marks roots, sinks and `#[allow_sync]` fns from their attributes; impls of a
/// `#[synchronizes]` trait method are sinks too.
pub(super) fn mark_all(map: &mut DefMap<'_>, sources: &SourceMap) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    for id in 0..map.fns.len() {
        let Some(ir) = map.fns[id].ir else { continue };
        let m = map.fns[id].module;
        let check_roots = map.crates[map.modules[m as usize].krate].check_roots;
        for attr in &ir.attrs {
            let Some(args) = nosync_args(map, m, attr, sources, &mut diags) else {
                continue;
            };
            let marks = &mut map.fns[id].marks;
            match args {
                Args::NoSync | Args::NoSyncCaptureSafe => marks.root |= check_roots,
                Args::Synchronizes { kind, .. } => {
                    marks.sink = args.sync_reason().map(str::to_owned);
                    marks.sink_kind = match kind {
                        Kind::Does => SinkKind::Blocks,
                        Kind::May => SinkKind::May,
                    };
                }
                Args::AllowSync { .. } => marks.allow = true,
            }
        }
    }
    inherit_sinks(map);
    diags
}

/// The arguments of `attr` if it is one of nosync's attributes and is well-formed; a
/// malformed one adds its errors to `diags`.
fn nosync_args(
    map: &DefMap<'_>,
    m: ModId,
    attr: &AttrIr,
    sources: &SourceMap,
    diags: &mut Vec<Diagnostic>,
) -> Option<Args<String>> {
    let name = AttrName::from_name(&map.attr_kind(m, &attr.path)?)?;
    match &attr.nosync {
        Some((read_as, Ok(args))) if *read_as == name => Some(args.clone()),
        Some((read_as, Err(errors))) if *read_as == name => {
            diags.extend(
                errors
                    .iter()
                    .map(|(msg, at)| invalid(name, msg, *at, sources)),
            );
            None
        }
        // Named through a re-exported rename the lowering could not see, so its arguments
        // were not read as this attribute: the attribute's meaning without them.
        _ => Some(match name {
            AttrName::NoSync => Args::NoSync,
            AttrName::Synchronizes => Args::Synchronizes {
                kind: Kind::Does,
                reason: None,
            },
            AttrName::AllowSync => Args::AllowSync {
                reason: String::new(),
            },
        }),
    }
}

fn invalid(name: AttrName, msg: &str, at: SpanIr, sources: &SourceMap) -> Diagnostic {
    Diagnostic::new(Code::InvalidAnnotation, msg, sources.span(at))
        .with_label(format!("the #[{}] macro rejects this", name.as_str()))
        .with_note(
            format!(
                "the attribute is ignored, as the macro ignores it: the function is analysed as if it were not #[{}]",
                name.as_str()
            ),
            None,
        )
}

/// Impls of a required (bodiless) `#[synchronizes]` trait method are sinks too: the
/// attribute is then a contract on every implementation. On a provided method it
/// describes the default body only, and an override is judged by its own body.
pub(super) fn inherit_sinks(map: &mut DefMap<'_>) {
    let mut inherited = Vec::new();
    for f in map
        .fns
        .iter()
        .filter(|f| f.is_trait_decl && f.ir.is_some_and(|ir| ir.body.is_none()))
    {
        if let (Some(reason), Some(tr)) = (&f.marks.sink, &f.trait_) {
            for &imp in map
                .trait_impls
                .get(&(tr.clone(), f.name.clone()))
                .into_iter()
                .flatten()
            {
                inherited.push((
                    imp,
                    format!(
                        "implements `{}`, which is #[synchronizes]: {reason}",
                        f.path
                    ),
                    f.marks.sink_kind,
                ));
            }
        }
    }
    for (imp, reason, kind) in inherited {
        let marks = &mut map.fns[imp as usize].marks;
        if marks.sink.is_none() {
            marks.sink = Some(reason);
            marks.sink_kind = kind;
        }
    }
}
