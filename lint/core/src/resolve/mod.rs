//! Name resolution: a def map of every analysed crate (modules, fns, types, traits,
//! impls, `use`s), built from the item tree without rustc.
//!
//! Items are collected per module (a work list over the module tree, no recursion over
//! user nesting), then impls are attached to their self types once every module is
//! known, then attributes mark roots, sinks and escapes.

mod assoc;
mod collect;
pub mod configured;
mod derives;
mod dyn_uses;
pub mod flags;
mod impls;
mod items;
pub mod macros;
mod marks;
pub mod models;
mod modfiles;
mod reach;
mod scope;
#[cfg(test)]
mod tests;
pub mod ty;

use crate::crate_graph::DepTarget;
use crate::known::models::Model;
use crate::known::sinks::SinkKind;
use crate::parse::ir::{
    AssocConstDecl, AssocTypeDecl, FnIr, GenericParam, MacroOrigin, SpanIr, TypeRef, UseIr,
};
use std::collections::HashMap;

pub use assoc::names_param;
pub use collect::build;
pub use ty::Ty;

/// The resolve stage: the def map of `crates` ([`build`]), the library models and flags
/// applied, and the configured roots, sinks and allowed fns: the def map, the configured
/// roots and the diagnostics.
pub fn resolve_all<'p>(
    crates: &'p [crate::crate_graph::CrateSpec],
    parsed: &'p crate::parse::Parsed,
    sources: &crate::source::SourceMap,
    cfg: &crate::config::Config,
) -> (DefMap<'p>, Vec<FnId>, Vec<crate::diagnostics::Diagnostic>) {
    let (mut map, mut diags) = build(crates, parsed, sources);
    diags.extend(models::apply(&mut map, &cfg.models, sources));
    flags::apply(&mut map, parsed);
    models::apply_variants(&mut map);
    let (root_fns, d) = configured::apply(&mut map, cfg, sources);
    diags.extend(d);
    (map, root_fns, diags)
}

thread_local! {
    /// Whether this thread's resolution read a table that adding an impl fills (a type's
    /// methods, its traits, the impls' associated types), since [`reading_impl_tables`]
    /// started watching.
    static IMPL_TABLES_READ: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Called where resolution reads a table that adding an impl fills.
fn note_impl_tables() {
    IMPL_TABLES_READ.with(|r| r.set(true));
}

/// What `f` returns, and whether it read a table that adding an impl fills
/// ([`note_impl_tables`]).
fn reading_impl_tables<T>(f: impl FnOnce() -> T) -> (T, bool) {
    IMPL_TABLES_READ.with(|r| r.set(false));
    let out = f();
    (out, IMPL_TABLES_READ.with(|r| r.replace(false)))
}

pub type ModId = u32;
pub type FnId = u32;

/// What a name resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Def {
    Mod(ModId),
    Fn(FnId),
    /// A struct, enum, union or type alias, by canonical path.
    Type(String),
    Trait(String),
    /// A `static` or `const`, by canonical path (its type is in [`DefMap::values`]).
    Value(String),
    /// The root of an analysed crate.
    Crate(usize),
    /// An item of a crate that is not parsed, by canonical path segments.
    External(Vec<String>),
}

#[derive(Debug)]
pub struct CrateData {
    /// The crate name as code spells it (`candle_core`).
    pub name: String,
    /// The name its items' canonical paths start with: `name`, or `name@version` for an
    /// older version of a crate the graph holds twice (`crate_graph::path_names`).
    pub path_name: String,
    pub root: ModId,
    pub deps: HashMap<String, DepTarget>,
    pub check_roots: bool,
    /// The package's version and its cudarc's, which choose the models that hold.
    pub versions: models::CrateVersions,
}

/// A table by name or canonical path, hashed with FNV: its keys are short, and the walk
/// looks names up at every path and method call (SipHash was a tenth of the walk).
pub type NameMap<V> = HashMap<String, V, fnv::FnvBuildHasher>;

/// What a value is known to hold: the whole value (`""`) or its fields by name
/// (`StreamErrorMode { ignore: true, flush: false }`: `ignore` and `flush`).
pub type Known = Vec<(Box<str>, Value)>;

/// A value the lint follows: a `bool`, or a unit variant (`LinearLayout::Row`, by its
/// enum's canonical path and its name).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Value {
    Bool(bool),
    Variant(Box<str>),
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Variant(v) => {
                let mut segs = v.rsplitn(3, "::");
                let (name, ty) = (segs.next().unwrap_or(""), segs.next().unwrap_or(""));
                write!(f, "{ty}::{name}")
            }
        }
    }
}

#[derive(Debug)]
pub struct ModuleData<'a> {
    pub krate: usize,
    pub parent: Option<ModId>,
    /// `crate_name::a::b`.
    pub path: String,
    /// Declared `pub` (a crate's root is): not private, `pub(crate)` or `pub(in ..)`.
    pub is_pub: bool,
    pub items: NameMap<Vec<Def>>,
    /// The `use`s that name something, by the name they bring in (each name's in the
    /// order written): a name looked up through them is one hash, not a scan of every
    /// `use` of the module, and no `use` is copied out of the item tree.
    pub uses: HashMap<&'a str, Vec<&'a UseIr>, fnv::FnvBuildHasher>,
    pub globs: Vec<&'a UseIr>,
}

/// How a fn is marked.
#[derive(Debug, Clone, Default)]
pub struct Marks {
    pub root: bool,
    /// The root comes from the configuration's `roots` (not an attribute).
    pub configured_root: bool,
    /// `Some(reason)` for a sink.
    pub sink: Option<String>,
    /// For a sink: whether it always blocks, may block, or is first-use setup.
    pub sink_kind: SinkKind,
    /// A modelled fn (`known::models`): which of its calls wait, for which versions of its
    /// library. A call the model rules out makes no edge.
    pub model: Option<std::sync::Arc<Model>>,
    /// For a modelled fn of an analysed crate: the node a call that waits reaches instead
    /// of the fn's body (the model's sink, with its reason).
    pub model_node: Option<FnId>,
    /// `#[allow_sync]` or config `allow`: calls into it are not followed.
    pub allow: bool,
}

#[derive(Debug)]
pub struct FnData<'a> {
    pub name: String,
    /// Display path: `demo::train::step`, `demo::Trainer::step`.
    pub path: String,
    pub module: ModId,
    pub span: Option<SpanIr>,
    /// `None` for built-in (cudarc) sinks.
    pub ir: Option<&'a FnIr>,
    pub self_ty: Option<&'a TypeRef>,
    pub self_canon: Option<String>,
    pub impl_generics: &'a [GenericParam],
    /// The type arguments of the trait its impl implements, as written (`B` of
    /// `impl<B: Backend> BasicOps<B> for Int`): a call through a bound `K: BasicOps<Cpu>`
    /// binds the impl's parameters with them.
    pub impl_trait_args: &'a [TypeRef],
    /// The trait this fn declares (trait item) or implements (trait impl).
    pub trait_: Option<String>,
    pub is_trait_decl: bool,
    pub marks: Marks,
    /// For a provided trait method specialised to one implementing type: that type
    /// (its body is walked with `Self` = this type, so `self.f()` reaches that impl).
    pub self_override: Option<Ty>,
}

#[derive(Debug)]
pub enum TypeKind<'a> {
    /// Fields, and the struct's generic parameters (a field typed `B` takes the
    /// receiver's argument for `B`, or `B`'s bounds).
    Struct(&'a [(String, TypeRef)], &'a [GenericParam]),
    /// Variants and their fields (positional fields named `0`, `1`, ...).
    Enum(&'a [(String, Vec<(String, TypeRef)>)]),
    /// The aliased type and the alias's type parameters with their defaults.
    Alias(&'a TypeRef, &'a [(String, Option<TypeRef>)]),
    Trait {
        fns: HashMap<String, FnId>,
        supertraits: Vec<String>,
        /// Associated types with their bounds as written (`type Server: ComputeServer;`).
        assoc: &'a [AssocTypeDecl],
        /// Associated consts with their types as written (`const V: Self;`).
        consts: &'a [AssocConstDecl],
    },
}

/// An impl of a trait for a type parameter: every type with its bounds has it.
#[derive(Debug, Clone)]
pub struct Blanket {
    /// The parameter's bounds, by canonical path (those that resolve).
    pub bounds: Vec<String>,
    /// The trait implemented, by canonical path.
    pub trait_: String,
    /// The methods the impl defines.
    pub fns: HashMap<String, FnId>,
}

/// An associated type an impl defines (`impl Runtime for CudaRuntime { type Server =
/// CudaServer; }`), resolved when a projection names it, with the impl's generics bound
/// from the projected type.
#[derive(Debug, Clone)]
pub struct ImplAssoc<'a> {
    pub module: ModId,
    /// The trait implemented, by canonical path.
    pub trait_: String,
    pub name: &'a str,
    pub ty: &'a TypeRef,
    pub self_ty: &'a TypeRef,
    pub generics: &'a [GenericParam],
}

#[derive(Debug)]
pub struct TypeData<'a> {
    pub module: ModId,
    pub kind: TypeKind<'a>,
    /// The paths of a struct's or enum's `#[derive(..)]`, resolved once every crate is
    /// collected (`derives.rs`).
    pub derives: &'a [crate::parse::ir::PathIr],
    /// A struct's fields' `#[<attr>(default = ..)]`, which a derive's constructor may write.
    pub defaults: &'a [crate::parse::ir::FieldDefault],
}

/// Every analysed crate's items, and the indexes the call graph queries.
#[derive(Debug, Default)]
pub struct DefMap<'a> {
    pub crates: Vec<CrateData>,
    pub modules: Vec<ModuleData<'a>>,
    pub fns: Vec<FnData<'a>>,
    pub types: NameMap<TypeData<'a>>,
    /// Methods and associated fns by self type canonical path, then name.
    pub methods: NameMap<NameMap<Vec<FnId>>>,
    /// Implementations of a trait method: (trait, method) → impl fns.
    pub trait_impls: HashMap<(String, String), Vec<FnId>>,
    /// Methods (taking `self`) by name, for name-only matching.
    pub by_name: NameMap<Vec<FnId>>,
    /// Types of statics and consts: (module, written type) by canonical path.
    pub values: HashMap<String, (ModId, &'a TypeRef)>,
    /// Traits each type implements (for provided methods it does not override).
    pub traits_of: NameMap<Vec<String>>,
    /// Impls of a trait for every type with some bounds (`impl<U: UnaryOpT> Map1 for U`).
    pub blankets: Vec<Blanket>,
    /// The associated types of trait impls by self type (`Deref::Target` among them).
    pub impl_assocs: NameMap<Vec<ImplAssoc<'a>>>,
    /// `Drop::drop` by type.
    pub drops: NameMap<FnId>,
    /// Fns declared inside a fn body, visible by name in that body (and to each other):
    /// they shadow the module's items of the same name.
    pub local_fns: HashMap<FnId, Vec<(String, FnId)>>,
    /// Built-in sinks by canonical path (one per version range of its model).
    pub builtin: HashMap<String, Vec<FnId>>,
    /// Names of the fns whose models decide from an argument: a call of one of these names
    /// records the shapes of its arguments for the model (`callgraph::walk::models`).
    pub modelled_names: NameMap<()>,
    /// The library flags no analysed crate sets (`flags.rs`): each static's canonical path
    /// and the default it keeps.
    pub fixed_flags: NameMap<bool>,
    /// The variant each modelled impl method returns (`known::models`' `[[variant]]`), by the
    /// span of the fn (its specialised copies share it): `enum canonical path::Variant`.
    pub returned_variants: HashMap<SpanIr, String>,
    /// The values the models' `value` matchers name, resolved: the matcher's path →
    /// the canonical path of its type and its variant or constant's name.
    pub model_values: NameMap<String>,
    /// For a fn specialised to concrete argument types (see `callgraph::specialise`):
    /// the parameters (by position, not counting `self`) bound to them, and how sure.
    pub arg_specs: HashMap<FnId, Vec<(usize, Ty, crate::diagnostics::Confidence)>>,
    /// For a fn specialised to concrete types for its type parameters (the impl's, from
    /// the receiver's type arguments; the fn's, from arguments): those bindings.
    pub param_specs: HashMap<FnId, Vec<(String, Ty)>>,
    /// For a fn specialised to constant arguments (see `callgraph::walk::values`): the
    /// parameters (by name, `self` for the receiver) and what they are known to hold.
    pub value_specs: HashMap<FnId, Vec<(String, Known)>>,
    /// Types a derive gives a constructor (`derives.rs`): the type's canonical path and
    /// the constructor's name (`T::new(..)` is a `T`).
    pub derived_ctors: NameMap<&'static crate::known::models::Derive>,
    /// What each crate can call (by crate index), for name-only guesses.
    pub reach: Vec<reach::Reach>,
    /// The methods of the traits the analysed code uses as `dyn Trait`, by name: each
    /// name's traits (`dyn_uses.rs`).
    pub dyn_methods: NameMap<Vec<String>>,
    /// The `macro_rules!` invocations that generated items, by the invocation's span
    /// (which every generated item carries).
    pub macro_origins: HashMap<SpanIr, MacroOrigin>,
}

impl DefMap<'_> {
    /// The tables that borrow nothing, taken out of the map (left empty), so that the
    /// caller can free them elsewhere (`engine::free_aside`): freeing a whole map is
    /// hundreds of thousands of allocations, most of them in these.
    pub fn take_owned(&mut self) -> Box<dyn Send> {
        use std::mem::take;
        Box::new((
            (take(&mut self.crates), self.take_owned_modules()),
            (take(&mut self.methods), take(&mut self.trait_impls)),
            (take(&mut self.by_name), take(&mut self.traits_of)),
            (take(&mut self.blankets), take(&mut self.drops)),
            (take(&mut self.local_fns), take(&mut self.builtin)),
            (take(&mut self.arg_specs), take(&mut self.param_specs)),
            take(&mut self.value_specs),
            (take(&mut self.reach), take(&mut self.macro_origins)),
            self.take_owned_parts(),
        ))
    }

    /// The modules' owned parts (paths, items), moved out of them; what borrows (`use`s
    /// by name, globs) is left to be freed with the map.
    fn take_owned_modules(&mut self) -> Vec<(String, NameMap<Vec<Def>>)> {
        let modules = self.modules.iter_mut();
        modules
            .map(|m| (std::mem::take(&mut m.path), std::mem::take(&mut m.items)))
            .collect()
    }

    /// The owned parts of the tables that borrow (the fns' names, paths and types, the
    /// types' and values' keys, the traits' method tables), moved out of them.
    fn take_owned_parts(&mut self) -> Box<dyn Send> {
        use std::mem::take;
        let fns: Vec<_> = take(&mut self.fns)
            .into_iter()
            .map(|f| {
                (
                    f.name,
                    f.path,
                    f.self_canon,
                    f.trait_,
                    f.marks,
                    f.self_override,
                )
            })
            .collect();
        let types: Vec<_> = take(&mut self.types)
            .into_iter()
            .map(|(canon, t)| match t.kind {
                TypeKind::Trait {
                    fns, supertraits, ..
                } => (canon, Some((fns, supertraits))),
                _ => (canon, None),
            })
            .collect();
        let values: Vec<String> = take(&mut self.values).into_keys().collect();
        let assocs: Vec<_> = take(&mut self.impl_assocs)
            .into_iter()
            .map(|(ty, list)| (ty, list.into_iter().map(|a| a.trait_).collect::<Vec<_>>()))
            .collect();
        Box::new((fns, types, values, assocs))
    }

    pub fn fn_ids(&self) -> impl Iterator<Item = FnId> + use<'_> {
        0..self.fns.len() as FnId
    }

    pub fn func(&self, id: FnId) -> &FnData<'_> {
        &self.fns[id as usize]
    }

    /// The macro that generated fn `id`, when a `macro_rules!` invocation did.
    pub fn generated_by(&self, id: FnId) -> Option<&MacroOrigin> {
        let f = self.func(id);
        f.ir?;
        self.macro_origins.get(&f.span?)
    }

    /// The trait method declaration `name` of trait `tr` or its supertraits.
    pub fn trait_method(&self, tr: &str, name: &str) -> Option<FnId> {
        let mut stack = vec![tr.to_owned()];
        let mut seen = 0;
        while let Some(t) = stack.pop() {
            seen += 1;
            if seen > 32 {
                break;
            }
            if let Some(TypeData {
                kind: TypeKind::Trait {
                    fns, supertraits, ..
                },
                ..
            }) = self.types.get(&t)
            {
                if let Some(&f) = fns.get(name) {
                    return Some(f);
                }
                stack.extend(supertraits.iter().cloned());
            }
        }
        None
    }
}
