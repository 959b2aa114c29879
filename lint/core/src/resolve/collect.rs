//! Building the [`DefMap`] from the parsed item trees.

use super::items::{self, Part, Pending, PendingSupers};
use super::*;
use crate::crate_graph::CrateSpec;
use crate::diagnostics::Diagnostic;
use crate::known::std::DROP;
use crate::parse::Parsed;
use crate::parse::ir::{ImplIr, Item};
use crate::source::SourceMap;
use rayon::prelude::*;
use std::collections::HashSet;

/// Builds the def map of `crates`; `cfgs[i]` is the cfg context index crate `i` was parsed with.
pub fn build<'a>(
    crates: &'a [CrateSpec],
    parsed: &'a Parsed,
    sources: &SourceMap,
) -> (DefMap<'a>, Vec<Diagnostic>) {
    let mut map = DefMap {
        macro_origins: parsed.origins.clone(),
        ..DefMap::default()
    };
    let mut diags = Vec::new();
    let mut impls = Vec::new();
    let mut supers = Vec::new();
    add_builtins(&mut map);
    // Each crate's items are collected on their own, in parallel, then added in crate
    // order, each numbered past the ones before it (see `items`).
    let names = crate::crate_graph::path_names(crates);
    let parts: Vec<Part<'a>> = crates
        .par_iter()
        .zip(&names)
        .enumerate()
        .map(|(i, (spec, name))| items::collect_crate(i, (spec, name), parsed, sources))
        .collect();
    let (modules, fns) = parts.iter().fold((0, 0), |(m, f), p| {
        let (pm, pf) = p.sizes();
        (m + pm, f + pf)
    });
    map.modules.reserve(modules);
    map.fns.reserve(fns);
    for ((spec, part), path_name) in crates.iter().zip(parts).zip(names) {
        map.crates.push(CrateData {
            name: spec.name.clone(),
            path_name,
            root: map.modules.len() as ModId,
            deps: spec.deps.iter().cloned().collect(),
            check_roots: spec.check_roots,
            versions: super::models::CrateVersions::of(spec),
        });
        part.merge_into(&mut map, (&mut impls, &mut supers, &mut diags));
    }
    link(&mut map, &supers, &impls, sources, &mut diags);
    map.reach = super::reach::closure(&map.crates);
    map.dyn_methods = super::dyn_uses::index(&map);
    // Specialised copies are added later, one by one; the spare half of a doubled Vec
    // would outlive the run (the memory of a large workspace).
    map.fns.shrink_to_fit();
    (map, diags)
}

/// Once every crate is collected: supertraits, impls, local fns and attribute marks,
/// each behind the net (a panic loses that trait, that impl, or the marks).
fn link<'a>(
    map: &mut DefMap<'a>,
    supers: &[PendingSupers<'a>],
    impls: &[Pending<'a>],
    sources: &SourceMap,
    diags: &mut Vec<Diagnostic>,
) {
    // Each net's diagnostic is made only when it catches: a span computed for every
    // trait and impl would index every file.
    for p in supers {
        let what = |c: &crate::panics::Caught| {
            let subject = format!("the supertraits of `{}`", p.canon);
            let at = sources.span(p.span);
            c.diagnostic("resolving", &subject, "they are not known", at)
        };
        crate::panics::guard(diags, what, || resolve_supertraits(map, p));
    }
    let heads = heads(map, impls);
    map.fns.reserve(impls.iter().map(|p| p.imp.fns.len()).sum());
    for (p, head) in impls.iter().zip(heads) {
        let what = |c: &crate::panics::Caught| {
            let at = sources.span(p.imp.span);
            let lost = "its methods are not analysed";
            c.diagnostic("resolving", "an `impl` block", lost, at)
        };
        crate::panics::guard(diags, what, || add_impl(map, p.module, p.imp, head));
    }
    let at = sources.first_span();
    let what = |c: &crate::panics::Caught| {
        let lost = "some roots and sinks may be missing";
        c.diagnostic(
            "reading",
            "`#[no_sync]`/`#[synchronizes]` attributes",
            lost,
            at,
        )
    };
    let marked = crate::panics::guard(diags, what, || {
        super::derives::apply(map);
        link_local_fns(map);
        super::marks::mark_all(map, sources)
    });
    diags.extend(marked.into_iter().flatten());
}

fn add_builtins(map: &mut DefMap<'_>) {
    for m in crate::known::sinks::builtins() {
        super::models::add_builtin(map, std::sync::Arc::new(m.clone()));
    }
}

fn resolve_supertraits(map: &mut DefMap<'_>, p: &PendingSupers<'_>) {
    let resolved: Vec<String> = p
        .supers
        .iter()
        .filter_map(|s| match map.resolve_path(p.module, &s.names(), s.global) {
            Some(Def::Trait(t)) => Some(t),
            _ => None,
        })
        .collect();
    if let Some(TypeData {
        kind: TypeKind::Trait { supertraits, .. },
        ..
    }) = map.types.get_mut(&p.canon)
    {
        *supertraits = resolved;
    }
}

fn add_fn<'a>(
    map: &mut DefMap<'a>,
    m: ModId,
    f: &'a FnIr,
    path: String,
    self_ty: Option<(&'a TypeRef, Option<String>)>,
    (impl_generics, trait_): (&'a [GenericParam], Option<String>),
) -> FnId {
    let id = map.fns.len() as FnId;
    let data = items::fn_data(m, f, path, self_ty, impl_generics, trait_);
    map.fns.push(data);
    if f.self_param.is_some() {
        with_slot(&mut map.by_name, &f.name, |ids| ids.push(id));
    }
    id
}

/// Runs `f` on the entry of `key` in `table`, its key copied only when it is new (a method
/// name, a type's methods: most are there already).
pub(super) fn with_slot<V: Default>(table: &mut NameMap<V>, key: &str, f: impl FnOnce(&mut V)) {
    match table.get_mut(key) {
        Some(v) => f(v),
        None => f(table.entry(key.to_owned()).or_default()),
    }
}

/// What an impl's header resolves to: its self type and that type's canonical path, the
/// trait it implements, and the paths its fns are shown by (in the order of its fns).
struct Head {
    self_ty: Ty,
    canon: Option<String>,
    trait_: Option<String>,
    fns: Vec<FnStrings>,
}

/// The strings an impl's fn owns in the map, made with its [`Head`] (in parallel, not
/// while the impls are added): its path, its self type's and its trait's canonical paths,
/// and its key among the trait's implementations.
struct FnStrings {
    path: String,
    self_canon: Option<String>,
    trait_: Option<String>,
    impl_key: Option<(String, String)>,
}

/// The [`Head`] of `imp`, in module `m`.
fn head(map: &DefMap<'_>, m: ModId, imp: &ImplIr) -> Head {
    let self_ty = map.resolve_type(m, &imp.self_ty, &imp.generics, None, 0);
    let canon = self_ty.canon().map(str::to_owned);
    let trait_ =
        imp.trait_
            .as_ref()
            .and_then(|p| match map.resolve_path(m, &p.names(), p.global) {
                Some(Def::Trait(t)) => Some(t),
                Some(Def::External(segs)) => Some(crate::known::canonical_name(&segs)),
                _ => None,
            });
    let owner = canon
        .clone()
        .unwrap_or_else(|| format!("{}::<impl>", map.modules[m as usize].path));
    // Trait impl methods are spelled as rustc does (`<T as Trait>::m`): a type can
    // have an inherent `get` and a trait `get`, and the chain must say which.
    let fns = imp
        .fns
        .iter()
        .map(|f| FnStrings {
            path: match &trait_ {
                Some(t) => {
                    let t = t.strip_prefix("std::").unwrap_or(t);
                    format!("<{owner} as {t}>::{}", f.name)
                }
                None => format!("{owner}::{}", f.name),
            },
            self_canon: canon.clone(),
            trait_: trait_.clone(),
            impl_key: trait_.as_ref().map(|t| (t.clone(), f.name.clone())),
        })
        .collect();
    Head {
        self_ty,
        canon,
        trait_,
        fns,
    }
}

/// The heads of `impls`, resolved in parallel before any impl is added. A head is kept
/// only when resolving it read none of the tables that adding impls fills
/// ([`super::reading_impl_tables`]): it is then what resolving it after the impls
/// before it would give, since the rest of the map does not change meanwhile. The others
/// (and any whose resolution panicked) are `None`, resolved again in turn.
fn heads(map: &DefMap<'_>, impls: &[Pending<'_>]) -> Vec<Option<Head>> {
    impls
        .par_iter()
        .map(|p| {
            let (head, read) = super::reading_impl_tables(|| {
                crate::panics::catch(|| head(map, p.module, p.imp)).ok()
            });
            head.filter(|_| !read)
        })
        .collect()
}

fn add_impl<'a>(map: &mut DefMap<'a>, m: ModId, imp: &'a ImplIr, head: Option<Head>) {
    for f in &imp.fns {
        crate::panics::failpoint("impl", &f.name);
    }
    let generics = &imp.generics;
    let Head {
        self_ty,
        canon,
        trait_,
        fns,
    } = head.unwrap_or_else(|| self::head(map, m, imp));
    if let (Some(c), Some(t)) = (&canon, &trait_) {
        with_slot(&mut map.traits_of, c, |ts| ts.push(t.clone()));
        let assocs = imp.assoc_types.iter().map(|(name, ty)| ImplAssoc {
            module: m,
            trait_: t.clone(),
            name,
            ty,
            self_ty: &imp.self_ty,
            generics,
        });
        with_slot(&mut map.impl_assocs, c, |list| list.extend(assocs));
    }
    let mut blanket = match (&self_ty, &trait_) {
        (Ty::Param(bounds), Some(t)) if !bounds.is_empty() => Some(Blanket {
            bounds: bounds.clone(),
            trait_: t.clone(),
            fns: HashMap::new(),
        }),
        _ => None,
    };
    for (f, owned) in imp.fns.iter().zip(fns) {
        let id = add_fn(
            map,
            m,
            f,
            owned.path,
            Some((&imp.self_ty, owned.self_canon)),
            (generics, owned.trait_),
        );
        let trait_args = imp.trait_.as_ref().and_then(|p| p.segs.last());
        map.fns[id as usize].impl_trait_args = trait_args.map_or(&[], |s| s.args());
        if let Some(b) = &mut blanket {
            b.fns.insert(f.name.clone(), id);
        }
        if let Some(c) = &canon {
            with_slot(&mut map.methods, c, |t| {
                with_slot(t, &f.name, |ids| ids.push(id))
            });
        }
        if let Some(key) = owned.impl_key {
            let is_drop = f.name == "drop" && key.0 == DROP;
            map.trait_impls.entry(key).or_default().push(id);
            if is_drop && let Some(c) = &canon {
                map.drops.insert(c.clone(), id);
            }
        }
    }
    map.blankets.extend(blanket);
}

/// Fns nested in a body are visible there first, and to their siblings.
fn link_local_fns(map: &mut DefMap<'_>) {
    // Only the fns declared in a body are looked up: the table holds those (a few),
    // not every fn.
    let nested: HashSet<*const FnIr> = map
        .fns
        .iter()
        .filter_map(|f| f.ir)
        .flat_map(|ir| ir.nested.iter())
        .filter_map(|item| match item {
            Item::Fn(nf) => Some(&**nf as *const FnIr),
            _ => None,
        })
        .collect();
    if nested.is_empty() {
        return;
    }
    let by_ir: HashMap<*const FnIr, FnId> = map
        .fns
        .iter()
        .enumerate()
        .filter_map(|(i, f)| f.ir.map(|ir| (ir as *const FnIr, i as FnId)))
        .filter(|(ir, _)| nested.contains(ir))
        .collect();
    for id in 0..map.fns.len() {
        let Some(ir) = map.fns[id].ir else { continue };
        let locals: Vec<(String, FnId)> = ir
            .nested
            .iter()
            .filter_map(|item| match item {
                Item::Fn(nf) => by_ir
                    .get(&(&**nf as *const FnIr))
                    .map(|&f| (nf.name.clone(), f)),
                _ => None,
            })
            .collect();
        if locals.is_empty() {
            continue;
        }
        for &(_, f) in &locals {
            map.local_fns
                .entry(f)
                .or_default()
                .extend(locals.iter().cloned());
        }
        map.local_fns.entry(id as FnId).or_default().extend(locals);
    }
}
