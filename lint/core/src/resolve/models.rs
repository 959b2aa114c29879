//! The library models (`known::models`) in the def map. A model of a function of a crate
//! the lint does not parse (cudarc, std) is a built-in node ([`add_builtin`], at the start
//! of `build`, so built-in ids come first). A model of a function of an analysed crate
//! (candle's `Tensor::to_device`) is applied once every crate is resolved ([`apply`]): the
//! function keeps its body, gets the model in its marks and a node of its own that a call
//! which waits reaches instead of the body (`callgraph::walk::models` decides each call).
//! The configuration's `models` are applied the same way, after the shipped ones, and
//! replace a shipped model of the same function.

use super::*;
use crate::config::ModelEntry;
use crate::crate_graph::CrateSpec;
use crate::diagnostics::Diagnostic;
use crate::known::models::{Matcher, Model, shipped};
use crate::source::SourceMap;
use cargo_metadata::semver::Version;
use std::sync::Arc;

/// A crate's version and its cudarc's, parsed (an unparsable version counts as unknown:
/// every model holds for it).
#[derive(Debug, Clone, Default)]
pub struct CrateVersions {
    pub own: Option<Version>,
    pub cudarc: Option<Version>,
}

impl CrateVersions {
    pub fn of(spec: &CrateSpec) -> Self {
        let parse = |v: &Option<String>| v.as_deref().and_then(|v| Version::parse(v).ok());
        CrateVersions {
            own: parse(&spec.versions.own),
            cudarc: parse(&spec.versions.cudarc),
        }
    }
}

/// A built-in node for model `m` of a function of a crate the lint does not parse: a
/// cudarc method is found from its receiver's type (and by name), a `Drop` where a value
/// is dropped, any function by its path.
pub fn add_builtin(map: &mut DefMap<'_>, m: Arc<Model>) -> FnId {
    let segs: Vec<&str> = m.path.split("::").collect();
    let owner = segs[..segs.len() - 1].join("::");
    let is_method = segs[0] == "cudarc"
        && segs.len() >= 3
        && segs[segs.len() - 2].starts_with(|c: char| c.is_ascii_uppercase());
    let id = map.fns.len() as FnId;
    let name = segs[segs.len() - 1].to_owned();
    map.fns.push(FnData {
        name: name.clone(),
        path: m.path.clone(),
        module: 0,
        span: None,
        ir: None,
        self_ty: None,
        self_canon: (is_method || m.on_drop).then(|| owner.clone()),
        impl_generics: &[],
        impl_trait_args: &[],
        trait_: None,
        is_trait_decl: false,
        marks: marks_of(&m),
        self_override: None,
    });
    note_values(map, &m);
    map.builtin.entry(m.path.clone()).or_default().push(id);
    if m.on_drop {
        map.drops.insert(owner, id);
    } else if is_method {
        map.methods
            .entry(owner)
            .or_default()
            .entry(name.clone())
            .or_default()
            .push(id);
        map.by_name.entry(name).or_default().push(id);
    }
    id
}

/// The marks of a model's node: a sink of its kind and reason, decided by the model.
fn marks_of(m: &Arc<Model>) -> Marks {
    Marks {
        sink: Some(m.reason.clone()),
        sink_kind: m.kind,
        model: Some(m.clone()),
        ..Marks::default()
    }
}

/// Records the names and values the walk needs to decide a call of a conditional model.
fn note_values(map: &mut DefMap<'_>, m: &Model) {
    let Some(when) = &m.when else { return };
    let name = m.path.rsplit("::").next().unwrap_or_default();
    map.modelled_names.insert(name.to_owned(), ());
    for v in when.blocks.iter().chain(&when.never) {
        if let Matcher::Value(path) = v {
            let resolved = resolve_value(map, path).unwrap_or_else(|| path.clone());
            map.model_values.insert(path.clone(), resolved);
        }
    }
}

/// A value path (`candle_core::Device::Cpu`) as its type's canonical path and its last
/// segment (`candle_core::device::Device::Cpu`), the form the walk compares.
fn resolve_value(map: &DefMap<'_>, path: &str) -> Option<String> {
    let segs: Vec<&str> = path.split("::").collect();
    let (last, ty) = segs.split_last()?;
    let krate = map.crates.iter().position(|c| c.name == segs[0])?;
    match map.resolve_path(map.crates[krate].root, ty, false)? {
        Def::Type(c) => Some(format!("{c}::{last}")),
        _ => None,
    }
}

/// Applies the shipped models of analysed crates (for the crate versions they hold for),
/// then the configuration's `models`; a configured model that matches nothing is a
/// `config-error` at its path.
pub fn apply(map: &mut DefMap<'_>, user: &[ModelEntry], sources: &SourceMap) -> Vec<Diagnostic> {
    let shipped = &shipped().0;
    for m in shipped
        .models
        .iter()
        .filter(|m| !crate::known::sinks::is_builtin(m))
    {
        let holding: Vec<usize> = (0..map.crates.len())
            .filter(|&k| map.crates[k].name == m.krate())
            .filter(|&k| m.holds_for(map.crates[k].versions.own.as_ref()))
            .collect();
        for k in holding {
            if let Some(f) = find_fn(map, k, &m.path) {
                attach(map, f, Arc::new(m.clone()));
            }
        }
    }
    let mut diags = Vec::new();
    for e in user {
        let m = Arc::new(e.model.clone());
        if crate::known::sinks::is_builtin(&m) {
            replace_builtin(map, m);
            continue;
        }
        let found: Vec<FnId> = (0..map.crates.len())
            .filter(|&k| map.crates[k].name == m.krate())
            .filter_map(|k| find_fn(map, k, &m.path))
            .collect();
        if found.is_empty() {
            let message = format!(
                "`{}` matches no function of the analysed crates (a model's path starts with a crate name)",
                m.path
            );
            diags.push(crate::config::error(sources, e.span, message));
        }
        for f in found {
            attach(map, f, m.clone());
        }
    }
    diags
}

/// A configured model of a built-in function: it replaces the shipped models of that
/// path (or adds a new built-in node).
fn replace_builtin(map: &mut DefMap<'_>, m: Arc<Model>) {
    match map.builtin.get(&m.path).cloned() {
        Some(ids) => {
            note_values(map, &m);
            for f in ids {
                map.fns[f as usize].marks = marks_of(&m);
            }
        }
        None => {
            add_builtin(map, m);
        }
    }
}

/// The fn `path` names in crate `k` (its first segment is the crate's name).
fn find_fn(map: &DefMap<'_>, k: usize, path: &str) -> Option<FnId> {
    let segs: Vec<&str> = path.split("::").collect();
    match map.resolve_path(map.crates[k].root, &segs, false)? {
        Def::Fn(f) => Some(f),
        _ => None,
    }
}

/// Model `m` on analysed fn `f`: the fn gets the model, and a node of its own is the sink
/// a call that waits reaches (a `detached` model is no sink: the fn keeps its body, and
/// the walk leaves out the closures handed to it; nor is a `follow` one: a call goes on
/// into the body, undecided).
fn attach(map: &mut DefMap<'_>, f: FnId, m: Arc<Model>) {
    if m.detached || m.follow {
        map.fns[f as usize].marks.model = Some(m);
        return;
    }
    note_values(map, &m);
    let node = map.fns.len() as FnId;
    let fd = &map.fns[f as usize];
    let data = FnData {
        name: fd.name.clone(),
        path: fd.path.clone(),
        module: fd.module,
        span: fd.span,
        ir: None,
        self_ty: None,
        self_canon: fd.self_canon.clone(),
        impl_generics: &[],
        impl_trait_args: &[],
        trait_: None,
        is_trait_decl: false,
        marks: marks_of(&m),
        self_override: None,
    };
    map.fns.push(data);
    let marks = &mut map.fns[f as usize].marks;
    marks.model = Some(m);
    marks.model_node = Some(node);
}

/// Records the variant each shipped `[[variant]]` impl method returns
/// ([`DefMap::returned_variants`]), in each crate of its library at a version it holds for.
pub fn apply_variants(map: &mut DefMap<'_>) {
    for v in &shipped().0.variants {
        for k in 0..map.crates.len() {
            let c = &map.crates[k];
            if c.name != v.krate() || !v.holds_for(c.versions.own.as_ref()) {
                continue;
            }
            let Some((fns, returns)) = variant_fns(map, c.root, v) else {
                continue;
            };
            for f in fns {
                if let Some(ir) = map.func(f).ir {
                    map.returned_variants.insert(ir.span, returns.clone());
                }
            }
        }
    }
}

/// The fns of `v`'s impl in the crate rooted at `root`, and its variant's canonical path.
fn variant_fns(
    map: &DefMap<'_>,
    root: ModId,
    v: &crate::known::models::Variant,
) -> Option<(Vec<FnId>, String)> {
    let resolve = |p: &str| {
        let segs: Vec<&str> = p.split("::").collect();
        map.resolve_path(root, &segs, false)
    };
    let (trait_path, method) = v.path.rsplit_once("::")?;
    let (enum_path, variant) = v.returns.rsplit_once("::")?;
    let (Some(Def::Type(t)), Some(Def::Trait(tr)), Some(Def::Type(e))) =
        (resolve(&v.for_ty), resolve(trait_path), resolve(enum_path))
    else {
        return None;
    };
    let for_ref = |f: &FnId| matches!(map.func(*f).self_ty, Some(TypeRef::Ref(_)));
    let mut fns = map.impl_methods(&t, &tr, method);
    fns.retain(|f| for_ref(f) == v.for_ref);
    Some((fns, format!("{e}::{variant}")))
}
