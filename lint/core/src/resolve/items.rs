//! Collecting one crate's items on its own ([`collect_crate`], run for every crate in
//! parallel by [`super::collect::build`]): its modules and fns numbered from 0, its types
//! and values in the order they were found, and the impls and supertraits left for
//! later. [`Part::merge_into`] then adds the crates to the map in crate order, each
//! renumbered past the ones before it and its tables filled in the order of its own
//! collection, so the map is the one collecting the crates one after another builds.

use super::modfiles::{self, ModuleFiles};
use super::*;
use crate::crate_graph::CrateSpec;
use crate::diagnostics::{Code, Diagnostic};
use crate::parse::Parsed;
use crate::parse::ir::{ImplIr, Item, ModKind, PathIr};
use crate::source::SourceMap;

/// An impl of module `module`, added once every crate is collected.
pub(super) struct Pending<'a> {
    pub module: ModId,
    pub imp: &'a ImplIr,
}

/// A trait's supertrait bounds, resolved once every crate's modules are known (a bound
/// can name a trait of a crate collected later).
pub(super) struct PendingSupers<'a> {
    pub module: ModId,
    pub span: SpanIr,
    pub canon: String,
    pub supers: &'a [PathIr],
}

/// One crate's items, its module and fn ids counted from 0 (its root module is 0).
pub(super) struct Part<'a> {
    modules: Vec<ModuleData<'a>>,
    fns: Vec<FnData<'a>>,
    /// By canonical path, in the order found (a later one replaces an earlier one).
    types: Vec<(String, TypeData<'a>)>,
    values: Vec<(String, (ModId, &'a TypeRef))>,
    impls: Vec<Pending<'a>>,
    supers: Vec<PendingSupers<'a>>,
    diags: Vec<Diagnostic>,
}

/// The items of crate `krate` (`spec`), its module tree walked from its root file, under
/// `path_name` (see [`crate::crate_graph::path_names`]).
pub(super) fn collect_crate<'a>(
    krate: usize,
    (spec, path_name): (&CrateSpec, &str),
    parsed: &'a Parsed,
    sources: &SourceMap,
) -> Part<'a> {
    let mut part = Part {
        modules: Vec::new(),
        fns: Vec::new(),
        types: Vec::new(),
        values: Vec::new(),
        impls: Vec::new(),
        supers: Vec::new(),
        diags: Vec::new(),
    };
    let root = part.new_module(krate, None, (path_name.to_owned(), true));
    let Some(file) = parsed.get(&spec.root, krate) else {
        return part;
    };
    let deps: HashMap<&str, &DepTarget> = spec.deps.iter().map(|(n, t)| (&**n, t)).collect();
    let mut work = vec![(root, &file.items[..])];
    let mut loaded = ModuleFiles::new(root, spec.root.clone());
    let collected = crate::panics::catch(|| {
        while let Some((m, items)) = work.pop() {
            let cx = Cx {
                parsed,
                krate,
                deps: &deps,
                sources,
            };
            part.collect_items(m, items, &cx, (&mut work, &mut loaded));
        }
    });
    if let Err(caught) = collected {
        let subject = format!("crate `{}`", spec.name);
        let at = sources.span_of(file.file, 0, 0);
        let lost = "the items not collected yet are not analysed";
        let d = caught.diagnostic("collecting the items of", &subject, lost, at);
        part.diags.push(d);
    }
    part
}

/// What collecting a crate's items reads.
struct Cx<'c, 'a> {
    parsed: &'a Parsed,
    krate: usize,
    deps: &'c HashMap<&'c str, &'c DepTarget>,
    sources: &'c SourceMap,
}

/// The work list (module, items) and the module files loaded so far.
type Work<'w, 'a> = (&'w mut Vec<(ModId, &'a [Item])>, &'w mut ModuleFiles);

impl<'a> Part<'a> {
    fn new_module(
        &mut self,
        krate: usize,
        parent: Option<ModId>,
        (path, is_pub): (String, bool),
    ) -> ModId {
        self.modules.push(ModuleData {
            krate,
            parent,
            path,
            is_pub,
            items: NameMap::default(),
            uses: HashMap::default(),
            globs: Vec::new(),
        });
        (self.modules.len() - 1) as ModId
    }

    fn define(&mut self, m: ModId, name: &str, def: Def) {
        self.modules[m as usize]
            .items
            .entry(name.to_owned())
            .or_default()
            .push(def);
    }

    fn add_fn(&mut self, m: ModId, f: &'a FnIr, path: String, trait_: Option<String>) -> FnId {
        self.fns.push(fn_data(m, f, path, None, &[], trait_));
        (self.fns.len() - 1) as FnId
    }

    fn collect_items(&mut self, m: ModId, items: &'a [Item], cx: &Cx<'_, 'a>, work: Work<'_, 'a>) {
        let (work, loaded) = work;
        let mpath = self.modules[m as usize].path.clone();
        for item in items {
            match item {
                Item::Fn(f) => {
                    crate::panics::failpoint("collect", &f.name);
                    let id = self.add_fn(m, f, format!("{mpath}::{}", f.name), None);
                    self.define(m, &f.name, Def::Fn(id));
                    if !f.nested.is_empty() {
                        work.push((m, &f.nested));
                    }
                }
                Item::Use(u) => add_use(&mut self.modules[m as usize], u),
                Item::Struct {
                    name,
                    fields,
                    generics,
                    derives,
                    defaults,
                    ..
                } => {
                    let kind = TypeKind::Struct(fields, generics);
                    self.add_type(m, name, kind, (derives, defaults))
                }
                Item::Enum {
                    name,
                    variants,
                    derives,
                    ..
                } => self.add_type(m, name, TypeKind::Enum(variants), (derives, &[])),
                Item::TypeAlias {
                    name, ty, params, ..
                } => self.add_type(m, name, TypeKind::Alias(ty, params), (&[], &[])),
                Item::Trait {
                    name,
                    fns,
                    supertraits,
                    span,
                    assoc_types,
                    assoc_consts,
                    ..
                } => {
                    let canon = self.add_trait(m, name, fns, (assoc_types, assoc_consts));
                    self.supers.push(PendingSupers {
                        module: m,
                        span: *span,
                        canon,
                        supers: supertraits,
                    });
                }
                Item::Impl(imp) => {
                    self.impls.push(Pending { module: m, imp });
                    for f in imp.fns.iter().filter(|f| !f.nested.is_empty()) {
                        work.push((m, &f.nested));
                    }
                }
                Item::Mod {
                    name,
                    kind,
                    span,
                    is_pub,
                } => self.add_mod(m, (name, kind, *span, *is_pub), cx, (work, loaded)),
                Item::ExternCrate { name, alias, .. } => {
                    if name != "self" {
                        let shown = alias.as_deref().unwrap_or(name);
                        let def = match cx.deps.get(&**name) {
                            Some(DepTarget::Analysed(c)) => Def::Crate(*c),
                            Some(DepTarget::External(real)) => Def::External(vec![real.clone()]),
                            None => Def::External(vec![name.clone()]),
                        };
                        self.define(m, shown, def);
                    }
                }
                Item::Value { name, ty } => {
                    let canon = format!("{mpath}::{name}");
                    self.values.push((canon.clone(), (m, ty)));
                    self.define(m, name, Def::Value(canon));
                }
                Item::MacroRules(_) | Item::MacroCall(_) => {}
            }
        }
    }

    /// Module `name` of `m`: its items queued, from its file when it has one.
    fn add_mod(
        &mut self,
        m: ModId,
        (name, kind, span, is_pub): (&str, &'a ModKind, SpanIr, bool),
        cx: &Cx<'_, 'a>,
        (work, loaded): Work<'_, 'a>,
    ) {
        let path = format!("{}::{name}", self.modules[m as usize].path);
        let child = self.new_module(cx.krate, Some(m), (path, is_pub));
        self.define(m, name, Def::Mod(child));
        match kind {
            ModKind::Inline(inner) => work.push((child, inner)),
            ModKind::File { path, .. } => match loaded.enter(&self.modules, m, child, path) {
                Ok(()) => {
                    if let Some(f) = cx.parsed.get(path, cx.krate) {
                        work.push((child, &f.items));
                    }
                }
                Err(why) => {
                    let d = modfiles::refused(why, name, path, span, cx.sources);
                    self.diags.push(d);
                }
            },
            // `Declared` never outlives parsing, which looks every one up.
            ModKind::Missing(tried)
            | ModKind::Declared {
                candidates: tried, ..
            } => self
                .diags
                .push(missing_module(name, tried, span, cx.sources)),
        }
    }

    fn add_type(
        &mut self,
        m: ModId,
        name: &str,
        kind: TypeKind<'a>,
        (derives, defaults): (&'a [PathIr], &'a [crate::parse::ir::FieldDefault]),
    ) {
        let canon = format!("{}::{name}", self.modules[m as usize].path);
        let data = TypeData {
            module: m,
            kind,
            derives,
            defaults,
        };
        self.types.push((canon.clone(), data));
        self.define(m, name, Def::Type(canon));
    }

    /// Adds trait `name` of module `m` with its fns; returns its canonical path. Its
    /// supertraits are filled in once every crate is collected.
    fn add_trait(
        &mut self,
        m: ModId,
        name: &str,
        fns: &'a [FnIr],
        (assoc, consts): (&'a [AssocTypeDecl], &'a [AssocConstDecl]),
    ) -> String {
        let canon = format!("{}::{name}", self.modules[m as usize].path);
        let mut table = HashMap::new();
        for f in fns {
            let id = self.add_fn(m, f, format!("{canon}::{}", f.name), Some(canon.clone()));
            self.fns[id as usize].is_trait_decl = true;
            table.insert(f.name.clone(), id);
        }
        let kind = TypeKind::Trait {
            fns: table,
            supertraits: Vec::new(),
            assoc,
            consts,
        };
        self.types.push((
            canon.clone(),
            TypeData {
                module: m,
                kind,
                derives: &[],
                defaults: &[],
            },
        ));
        self.define(m, name, Def::Trait(canon.clone()));
        canon
    }

    /// How many modules and fns this crate has.
    pub(super) fn sizes(&self) -> (usize, usize) {
        (self.modules.len(), self.fns.len())
    }

    /// Adds this crate's items to `map` after those there, its ids moved past theirs; its
    /// impls, supertraits and diagnostics go to the lists given.
    pub(super) fn merge_into(
        self,
        map: &mut DefMap<'a>,
        (impls, supers, diags): PendingLists<'_, 'a>,
    ) {
        let (mo, fo) = (map.modules.len() as ModId, map.fns.len() as FnId);
        let moved = |def: &mut Def| match def {
            Def::Mod(x) => *x += mo,
            Def::Fn(x) => *x += fo,
            _ => {}
        };
        for mut md in self.modules {
            md.parent = md.parent.map(|p| p + mo);
            md.items.values_mut().flatten().for_each(moved);
            map.modules.push(md);
        }
        for mut f in self.fns {
            f.module += mo;
            let id = map.fns.len() as FnId;
            if f.ir.is_some_and(|ir| ir.self_param.is_some()) {
                super::collect::with_slot(&mut map.by_name, &f.name, |ids| ids.push(id));
            }
            map.fns.push(f);
        }
        for (canon, mut t) in self.types {
            t.module += mo;
            if let TypeKind::Trait { fns, .. } = &mut t.kind {
                fns.values_mut().for_each(|f| *f += fo);
            }
            map.types.insert(canon, t);
        }
        for (canon, (m, ty)) in self.values {
            map.values.insert(canon, (m + mo, ty));
        }
        impls.extend(self.impls.into_iter().map(|p| Pending {
            module: p.module + mo,
            ..p
        }));
        supers.extend(self.supers.into_iter().map(|p| PendingSupers {
            module: p.module + mo,
            ..p
        }));
        diags.extend(self.diags);
    }
}

/// Where [`Part::merge_into`] puts what is left for later: impls, supertraits, diagnostics.
pub(super) type PendingLists<'l, 'a> = (
    &'l mut Vec<Pending<'a>>,
    &'l mut Vec<PendingSupers<'a>>,
    &'l mut Vec<Diagnostic>,
);

/// A fn's node as collected: in module `m`, shown as `path`.
pub(super) fn fn_data<'a>(
    m: ModId,
    f: &'a FnIr,
    path: String,
    self_ty: Option<(&'a TypeRef, Option<String>)>,
    impl_generics: &'a [GenericParam],
    trait_: Option<String>,
) -> FnData<'a> {
    let (self_ty, self_canon) = match self_ty {
        Some((t, c)) => (Some(t), c),
        None => (None, None),
    };
    FnData {
        name: f.name.clone(),
        path,
        module: m,
        span: Some(f.span),
        ir: Some(f),
        self_ty,
        self_canon,
        impl_generics,
        impl_trait_args: &[],
        trait_,
        is_trait_decl: false,
        marks: Marks::default(),
        self_override: None,
    }
}

/// A `use` of module `md`: a glob, or a name it brings in.
fn add_use<'a>(md: &mut ModuleData<'a>, u: &'a UseIr) {
    match u.alias.as_deref() {
        None => md.globs.push(u),
        Some(name) => md.uses.entry(name).or_default().push(u),
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
