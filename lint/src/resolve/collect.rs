//! Building the [`DefMap`] from the parsed item trees.

use super::modfiles::{self, ModuleFiles};
use super::*;
use crate::diagnostics::{Code, Diagnostic};
use crate::known::sinks::{BuiltinSink, CUDARC_DROPS, CUDARC_SINKS};
use crate::known::std::DROP;
use crate::parse::Parsed;
use crate::parse::ir::{ImplIr, Item, ModKind};
use crate::source::SourceMap;
use crate::workspace::CrateSpec;
use rayon::prelude::*;

struct Pending<'a> {
    module: ModId,
    imp: &'a ImplIr,
}

/// A trait's supertrait bounds, resolved once every crate's modules are known (a bound
/// can name a trait of a crate collected later).
struct PendingSupers<'a> {
    module: ModId,
    span: SpanIr,
    canon: String,
    supers: &'a [crate::parse::ir::PathIr],
}

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
    for (i, spec) in crates.iter().enumerate() {
        let root = new_module(&mut map, i, None, spec.name.clone());
        map.crates.push(CrateData {
            name: spec.name.clone(),
            root,
            deps: spec.deps.iter().cloned().collect(),
            check_roots: spec.check_roots,
        });
        let Some(file) = parsed.get(&spec.root, i) else {
            continue;
        };
        let mut crate_diags = Vec::new();
        let mut cx = (
            &mut Vec::new(),
            &mut impls,
            &mut supers,
            &mut crate_diags,
            &mut ModuleFiles::new(root, spec.root.clone()),
        );
        cx.0.push((root, &file.items[..]));
        let collected = crate::net::catch(|| {
            while let Some((m, items)) = cx.0.pop() {
                collect_items(&mut map, m, items, parsed, i, &mut cx, sources);
            }
        });
        diags.append(&mut crate_diags);
        if let Err(caught) = collected {
            let subject = format!("crate `{}`", spec.name);
            let at = sources.span_of(file.file, 0, 0);
            let lost = "the items not collected yet are not analysed";
            diags.push(caught.diagnostic("collecting the items of", &subject, lost, at));
        }
    }
    link(&mut map, &supers, &impls, sources, &mut diags);
    map.reach = super::reach::closure(&map.crates);
    // Specialised copies are added later, one by one; the spare half of a doubled Vec
    // would outlive the run (issue 10's memory goal).
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
        let what = |c: &crate::net::Caught| {
            let subject = format!("the supertraits of `{}`", p.canon);
            let at = sources.span(p.span);
            c.diagnostic("resolving", &subject, "they are not known", at)
        };
        crate::net::guard(diags, what, || resolve_supertraits(map, p));
    }
    let heads = heads(map, impls);
    for (p, head) in impls.iter().zip(heads) {
        let what = |c: &crate::net::Caught| {
            let at = sources.span(p.imp.span);
            let lost = "its methods are not analysed";
            c.diagnostic("resolving", "an `impl` block", lost, at)
        };
        crate::net::guard(diags, what, || add_impl(map, p.module, p.imp, head));
    }
    let at = sources.first_span();
    let what = |c: &crate::net::Caught| {
        let lost = "some roots and sinks may be missing";
        c.diagnostic(
            "reading",
            "`#[no_sync]`/`#[synchronizes]` attributes",
            lost,
            at,
        )
    };
    let marked = crate::net::guard(diags, what, || {
        link_local_fns(map);
        super::marks::mark_all(map, sources)
    });
    diags.extend(marked.into_iter().flatten());
}

fn add_builtins(map: &mut DefMap<'_>) {
    for s in CUDARC_SINKS {
        let segs: Vec<&str> = s.path.split("::").collect();
        let ty = segs[..segs.len() - 1].join("::");
        let is_method = segs.len() == 4 && crate::known::cudarc::is_cudarc_type(segs[2]);
        let id = add_builtin(map, s, is_method.then(|| ty.clone()));
        if is_method {
            let name = map.fns[id as usize].name.clone();
            map.methods
                .entry(ty)
                .or_default()
                .entry(name.clone())
                .or_default()
                .push(id);
            map.by_name.entry(name).or_default().push(id);
        }
    }
    // Blocking `Drop`s: reached where a value of the type is dropped, never called by name.
    for s in CUDARC_DROPS {
        let ty = s.path.rsplit_once("::").map_or(s.path, |(ty, _)| ty);
        let id = add_builtin(map, s, Some(ty.to_owned()));
        map.drops.insert(ty.to_owned(), id);
    }
}

/// A built-in sink's node (no body, no span), known by its path.
fn add_builtin(map: &mut DefMap<'_>, s: &BuiltinSink, self_canon: Option<String>) -> FnId {
    let id = map.fns.len() as FnId;
    map.fns.push(FnData {
        name: s.path.rsplit("::").next().unwrap_or_default().to_owned(),
        path: s.path.to_owned(),
        module: 0,
        span: None,
        ir: None,
        self_ty: None,
        self_canon,
        impl_generics: &[],
        trait_: None,
        is_trait_decl: false,
        marks: Marks {
            sink: Some(s.reason.to_owned()),
            sink_kind: s.kind,
            condition: Some(s.condition),
            ..Marks::default()
        },
        self_override: None,
    });
    map.builtin.insert(s.path.to_owned(), id);
    id
}

fn new_module(map: &mut DefMap<'_>, krate: usize, parent: Option<ModId>, path: String) -> ModId {
    map.modules.push(ModuleData {
        krate,
        parent,
        path,
        items: NameMap::default(),
        uses: HashMap::default(),
        globs: Vec::new(),
    });
    (map.modules.len() - 1) as ModId
}

/// A `use` of module `md`: a glob, or a name it brings in.
fn add_use<'a>(md: &mut ModuleData<'a>, u: &'a UseIr) {
    match u.alias.as_deref() {
        None => md.globs.push(u),
        Some(name) => md.uses.entry(name).or_default().push(u),
    }
}

fn define(map: &mut DefMap<'_>, m: ModId, name: &str, def: Def) {
    map.modules[m as usize]
        .items
        .entry(name.to_owned())
        .or_default()
        .push(def);
}

/// The collector's work list, pending impls and supertraits, diagnostics and loaded
/// module files.
type Cx<'c, 'a> = (
    &'c mut Vec<(ModId, &'a [Item])>,
    &'c mut Vec<Pending<'a>>,
    &'c mut Vec<PendingSupers<'a>>,
    &'c mut Vec<Diagnostic>,
    &'c mut ModuleFiles,
);

fn collect_items<'a>(
    map: &mut DefMap<'a>,
    m: ModId,
    items: &'a [Item],
    parsed: &'a Parsed,
    krate: usize,
    cx: &mut Cx<'_, 'a>,
    sources: &SourceMap,
) {
    let (work, impls, pending_supers, diags, loaded) = cx;
    let mpath = map.modules[m as usize].path.clone();
    for item in items {
        match item {
            Item::Fn(f) => {
                crate::net::failpoint("collect", &f.name);
                let id = add_fn(map, m, f, format!("{mpath}::{}", f.name), None, &[], None);
                define(map, m, &f.name, Def::Fn(id));
                work.push((m, &f.nested));
            }
            Item::Use(u) => add_use(&mut map.modules[m as usize], u),
            Item::Struct {
                name,
                fields,
                generics,
                ..
            } => add_type(map, m, name, TypeKind::Struct(fields, generics)),
            Item::Enum { name, variants, .. } => add_type(map, m, name, TypeKind::Enum(variants)),
            Item::TypeAlias {
                name, ty, params, ..
            } => add_type(map, m, name, TypeKind::Alias(ty, params)),
            Item::Trait {
                name,
                fns,
                supertraits,
                span,
                assoc_types,
                assoc_consts,
                ..
            } => {
                let canon = add_trait(map, m, name, fns, (assoc_types, assoc_consts));
                pending_supers.push(PendingSupers {
                    module: m,
                    span: *span,
                    canon,
                    supers: supertraits,
                });
            }
            Item::Impl(imp) => {
                impls.push(Pending { module: m, imp });
                for f in &imp.fns {
                    work.push((m, &f.nested));
                }
            }
            Item::Mod {
                name, kind, span, ..
            } => {
                let child = new_module(map, krate, Some(m), format!("{mpath}::{name}"));
                define(map, m, name, Def::Mod(child));
                match kind {
                    ModKind::Inline(inner) => work.push((child, inner)),
                    ModKind::File { path, .. } => {
                        match loaded.enter(&map.modules, m, child, path) {
                            Ok(()) => {
                                if let Some(f) = parsed.get(path, krate) {
                                    work.push((child, &f.items));
                                }
                            }
                            Err(why) => {
                                diags.push(modfiles::refused(why, name, path, *span, sources))
                            }
                        }
                    }
                    // `Declared` never outlives parsing, which looks every one up.
                    ModKind::Missing(tried)
                    | ModKind::Declared {
                        candidates: tried, ..
                    } => diags.push(missing_module(name, tried, *span, sources)),
                }
            }
            Item::ExternCrate { name, alias, .. } => {
                if name != "self" {
                    let shown = alias.as_deref().unwrap_or(name);
                    let target = map.crates[krate].deps.get(name).cloned();
                    let def = match target {
                        Some(DepTarget::Analysed(c)) => Def::Crate(c),
                        Some(DepTarget::External(real)) => Def::External(vec![real]),
                        None => Def::External(vec![name.clone()]),
                    };
                    define(map, m, shown, def);
                }
            }
            Item::Value { name, ty } => {
                let canon = format!("{mpath}::{name}");
                map.values.insert(canon.clone(), (m, ty));
                define(map, m, name, Def::Value(canon));
            }
            Item::MacroRules(_) | Item::MacroCall(_) => {}
        }
    }
}

fn missing_module(
    name: &str,
    tried: &[std::path::PathBuf],
    span: SpanIr,
    sources: &SourceMap,
) -> Diagnostic {
    let shown: Vec<String> = tried
        .iter()
        .map(|p| format!("`{}`", sources.display(p).display()))
        .collect();
    Diagnostic::new(
        Code::MissingModule,
        format!("file not found for module `{name}`"),
        sources.span(span),
    )
    .with_label("declared here")
    .with_note(format!("looked for {}", shown.join(" and ")), None)
    .with_note("the module's items are not analysed", None)
}

fn add_type<'a>(map: &mut DefMap<'a>, m: ModId, name: &str, kind: TypeKind<'a>) {
    let canon = format!("{}::{name}", map.modules[m as usize].path);
    map.types
        .insert(canon.clone(), TypeData { module: m, kind });
    define(map, m, name, Def::Type(canon));
}

/// Adds trait `name` of module `m` with its fns; returns its canonical path. Its
/// supertraits are filled in by [`resolve_supertraits`] once every crate is collected.
fn add_trait<'a>(
    map: &mut DefMap<'a>,
    m: ModId,
    name: &str,
    fns: &'a [FnIr],
    (assoc, consts): (&'a [AssocTypeDecl], &'a [AssocConstDecl]),
) -> String {
    let canon = format!("{}::{name}", map.modules[m as usize].path);
    let mut table = HashMap::new();
    for f in fns {
        let id = add_fn(
            map,
            m,
            f,
            format!("{canon}::{}", f.name),
            None,
            &[],
            Some(canon.clone()),
        );
        map.fns[id as usize].is_trait_decl = true;
        table.insert(f.name.clone(), id);
    }
    map.types.insert(
        canon.clone(),
        TypeData {
            module: m,
            kind: TypeKind::Trait {
                fns: table,
                supertraits: Vec::new(),
                assoc,
                consts,
            },
        },
    );
    define(map, m, name, Def::Trait(canon.clone()));
    canon
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

#[allow(clippy::too_many_arguments)]
fn add_fn<'a>(
    map: &mut DefMap<'a>,
    m: ModId,
    f: &'a FnIr,
    path: String,
    self_ty: Option<(&'a TypeRef, Option<String>)>,
    impl_generics: &'a [GenericParam],
    trait_: Option<String>,
) -> FnId {
    let id = map.fns.len() as FnId;
    let (self_ty, self_canon) = match self_ty {
        Some((t, c)) => (Some(t), c),
        None => (None, None),
    };
    map.fns.push(FnData {
        name: f.name.clone(),
        path,
        module: m,
        span: Some(f.span),
        ir: Some(f),
        self_ty,
        self_canon,
        impl_generics,
        trait_,
        is_trait_decl: false,
        marks: Marks::default(),
        self_override: None,
    });
    if f.self_param.is_some() {
        with_slot(&mut map.by_name, &f.name, |ids| ids.push(id));
    }
    id
}

/// Runs `f` on the entry of `key` in `table`, its key copied only when it is new (a method
/// name, a type's methods: most are there already).
fn with_slot<V: Default>(table: &mut NameMap<V>, key: &str, f: impl FnOnce(&mut V)) {
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
    paths: Vec<String>,
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
    let paths = imp
        .fns
        .iter()
        .map(|f| match &trait_ {
            Some(t) => {
                let t = t.strip_prefix("std::").unwrap_or(t);
                format!("<{owner} as {t}>::{}", f.name)
            }
            None => format!("{owner}::{}", f.name),
        })
        .collect();
    Head {
        self_ty,
        canon,
        trait_,
        paths,
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
                crate::net::catch(|| head(map, p.module, p.imp)).ok()
            });
            head.filter(|_| !read)
        })
        .collect()
}

fn add_impl<'a>(map: &mut DefMap<'a>, m: ModId, imp: &'a ImplIr, head: Option<Head>) {
    for f in &imp.fns {
        crate::net::failpoint("impl", &f.name);
    }
    let generics = &imp.generics;
    let Head {
        self_ty,
        canon,
        trait_,
        paths,
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
    for (f, path) in imp.fns.iter().zip(paths) {
        let id = add_fn(
            map,
            m,
            f,
            path,
            Some((&imp.self_ty, canon.clone())),
            generics,
            trait_.clone(),
        );
        if let Some(b) = &mut blanket {
            b.fns.insert(f.name.clone(), id);
        }
        if let Some(c) = &canon {
            with_slot(&mut map.methods, c, |t| {
                with_slot(t, &f.name, |ids| ids.push(id))
            });
        }
        if let Some(t) = &trait_ {
            map.trait_impls
                .entry((t.clone(), f.name.clone()))
                .or_default()
                .push(id);
            if f.name == "drop"
                && t == DROP
                && let Some(c) = &canon
            {
                map.drops.insert(c.clone(), id);
            }
        }
    }
    map.blankets.extend(blanket);
}

/// Fns nested in a body are visible there first, and to their siblings.
fn link_local_fns(map: &mut DefMap<'_>) {
    let by_ir: HashMap<*const FnIr, FnId> = map
        .fns
        .iter()
        .enumerate()
        .filter_map(|(i, f)| f.ir.map(|ir| (ir as *const FnIr, i as FnId)))
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
