//! Roots, sinks and escapes from nosync's attributes, read through the typed model of
//! `nosync-syntax` that the macros use: the same forms, errors and default reasons.
//!
//! An attribute the macro rejects is a located `invalid-annotation` diagnostic, and the
//! lint still reads what it means where that checks more, never less: a malformed
//! `#[no_sync]` is still a root, a malformed `#[synchronizes]` still a sink; a malformed
//! `#[allow_sync]` is ignored (it would hide waits).

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
            let meaning = malformed_meaning(name, errors, sources);
            diags.extend(
                errors
                    .iter()
                    .map(|(msg, at)| invalid(name, msg, *at, meaning.is_some(), sources)),
            );
            meaning
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

/// What a malformed attribute still means: a `#[no_sync]` a root, a `#[synchronizes]` a
/// sink (a `maybe` one when its arguments start with `maybe`); an `#[allow_sync]` nothing.
fn malformed_meaning(
    name: AttrName,
    errors: &[(String, SpanIr)],
    sources: &SourceMap,
) -> Option<Args<String>> {
    match name {
        AttrName::NoSync => Some(Args::NoSync),
        AttrName::Synchronizes => {
            let says_maybe = errors.first().is_some_and(|(_, at)| {
                let text = &sources.file(at.file).text;
                let before = text.get(..at.lo as usize).unwrap_or("");
                let args = before.rsplit_once('(').map_or("", |(_, a)| a);
                args.trim_start().starts_with("maybe")
            });
            let kind = if says_maybe { Kind::May } else { Kind::Does };
            Some(Args::Synchronizes { kind, reason: None })
        }
        AttrName::AllowSync => None,
    }
}

fn invalid(
    name: AttrName,
    msg: &str,
    at: SpanIr,
    honoured: bool,
    sources: &SourceMap,
) -> Diagnostic {
    let name = name.as_str();
    let note = match honoured {
        true => format!(
            "the lint still reads it as #[{name}], so that a typo turns no check off; the crate does not compile until it is fixed"
        ),
        false => format!(
            "the attribute is ignored: the function is analysed as if it were not #[{name}], so its calls are checked"
        ),
    };
    Diagnostic::new(Code::InvalidAnnotation, msg, sources.span(at))
        .with_label(format!("the #[{name}] macro rejects this"))
        .with_note(note, None)
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
