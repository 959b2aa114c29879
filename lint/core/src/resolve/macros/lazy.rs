//! Lazy fn bodies that invoke, by name, a `macro_rules!` whose expansion may declare items
//! are lowered before expansion: a statement macro may generate items (see
//! [`crate::parse::lazy`]), and expansion must see the invocations an eager lowering gives
//! it. (A macro that cannot generate items, as candle's `bail!`, generates nothing in body
//! position: its invocation needs no expansion.)

use crate::diagnostics::Diagnostic;
use crate::parse::ir::{Body, FnIr, Item, ModKind};
use crate::parse::lazy::lower_body;
use crate::source::{Key, SharedCache, SourceMap};
use std::collections::HashSet;

/// Lowers in place the lazy bodies among `items` (in modules, impls and traits) that invoke
/// a macro by a name of `generating`: the definitions that may generate items
/// ([`super::scope::Defs::item_names`]). A body that does not parse stays lazy (a root
/// that reaches it reports it). No span is freed here: the definitions hold token trees.
/// The text of each body lowered (its hash) is folded into `digest` (the file's, see
/// [`crate::parse::cache::digest`], which counts a body by being there): what
/// it declares is part of the items the later stages see. `ctx`: the sources, and the
/// cache of lazy bodies.
pub(super) fn lower_invoking(
    items: &mut [Item],
    generating: &HashSet<String>,
    ctx: (&SourceMap, Option<&SharedCache>),
    (digest, diags): (&mut Key, &mut Vec<Diagnostic>),
) {
    let mut stack: Vec<&mut [Item]> = vec![items];
    while let Some(items) = stack.pop() {
        for item in items {
            match item {
                Item::Fn(f) => lower_fn(f, generating, ctx, (digest, diags)),
                Item::Impl(imp) => imp
                    .fns
                    .iter_mut()
                    .for_each(|f| lower_fn(f, generating, ctx, (digest, diags))),
                Item::Trait { fns, .. } => fns
                    .iter_mut()
                    .for_each(|f| lower_fn(f, generating, ctx, (digest, diags))),
                Item::Mod {
                    kind: ModKind::Inline(inner),
                    ..
                } => stack.push(inner),
                _ => {}
            }
        }
    }
}

fn lower_fn(
    f: &mut FnIr,
    generating: &HashSet<String>,
    (sources, cache): (&SourceMap, Option<&SharedCache>),
    (digest, diags): (&mut Key, &mut Vec<Diagnostic>),
) {
    let Some(Body::Lazy(lazy)) = &f.body else {
        return;
    };
    if !lazy.macros.iter().any(|m| generating.contains(m)) {
        return;
    }
    if let Ok(lowered) = lower_body(lazy, sources, cache) {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        h.update(&digest.to_le_bytes());
        h.update(&lazy.text.to_le_bytes());
        *digest = h.digest128();
        diags.extend(lowered.diags);
        f.body = Some(Body::Lowered(lowered.block));
        f.nested = lowered.nested;
    }
}
