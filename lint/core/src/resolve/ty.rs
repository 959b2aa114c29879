//! Types as the lint understands them: resolved to canonical paths, references and
//! smart pointers peeled where method calls auto-deref.

use super::*;
use crate::known::locks::GUARDS;
use crate::known::std::{PRIMITIVES, SMART_POINTERS, WRAPPERS};
use crate::parse::ir::PathIr;
use std::cell::Cell;

/// A resolved type.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Ty {
    /// A named type by canonical path (`demo::Trainer`, `cudarc::driver::CudaStream`,
    /// `std::Vec`), with its generic arguments.
    Adt(String, Vec<Ty>),
    /// A generic parameter or `impl Trait`: its trait bounds.
    Param(Vec<String>),
    /// `dyn Trait`.
    Dyn(Vec<String>),
    Slice(Box<Ty>),
    Array(Box<Ty>),
    Tuple(Vec<Ty>),
    Unknown,
}

const MAX_DEPTH: usize = 16;

impl Ty {
    pub fn canon(&self) -> Option<&str> {
        match self {
            Ty::Adt(c, _) => Some(c),
            _ => None,
        }
    }

    pub fn arg(&self, i: usize) -> Ty {
        match self {
            Ty::Adt(_, args) => args.get(i).cloned().unwrap_or(Ty::Unknown),
            _ => Ty::Unknown,
        }
    }

    pub fn is(&self, canon: &str) -> bool {
        self.canon() == Some(canon)
    }

    /// Whether a part of the type is unknown (`Vec<_>`).
    pub fn has_holes(&self) -> bool {
        match self {
            Ty::Unknown => true,
            Ty::Adt(_, args) | Ty::Tuple(args) => args.iter().any(Ty::has_holes),
            Ty::Slice(t) | Ty::Array(t) => t.has_holes(),
            Ty::Param(_) | Ty::Dyn(_) => false,
        }
    }

    /// `Result<T, _>`/`Option<T>` → `T` (what `?` and `unwrap` give).
    pub fn unwrap_once(&self) -> Ty {
        if self.canon().is_some_and(|c| WRAPPERS.contains(&c)) {
            return self.arg(0);
        }
        Ty::Unknown
    }

    /// The type and what it auto-derefs to: `Arc<Box<T>>` → [`Arc<..>`, `Box<T>`, `T`].
    pub fn deref_chain(&self) -> Vec<Ty> {
        let mut out = vec![self.clone()];
        while out.len() < 6 {
            match out.last() {
                Some(Ty::Adt(c, args))
                    if (SMART_POINTERS.contains(&c.as_str()) || GUARDS.contains(&c.as_str()))
                        && !args.is_empty() =>
                {
                    let inner = args[0].clone();
                    out.push(inner);
                }
                _ => break,
            }
        }
        out
    }

    /// Whether this is pageable host memory (a `Vec`, slice or array).
    pub fn is_pageable(&self) -> Option<bool> {
        let inner = self.deref_chain().pop().unwrap_or(Ty::Unknown);
        match inner {
            Ty::Slice(_) | Ty::Array(_) => Some(true),
            Ty::Adt(c, _) if c == "std::Vec" => Some(true),
            Ty::Adt(c, _) if c == "cudarc::driver::PinnedHostSlice" => Some(false),
            Ty::Adt(c, _) if c.starts_with("cudarc::") => Some(false),
            _ => None,
        }
    }
}

/// What names mean while a written type is resolved: the generic parameters in scope,
/// `Self`, and (inside an alias's definition) the alias's parameters bound to the
/// arguments it was used with.
pub(super) struct TyCx<'c> {
    pub(super) generics: &'c [GenericParam],
    pub(super) self_ty: Option<&'c Ty>,
    pub(super) subst: &'c [(String, Ty)],
    /// Type nodes left to resolve for this written type: aliases that name themselves
    /// several times over (`type A = (A, A, A, A);`) multiply at every level, which the
    /// depth cap alone bounds only exponentially.
    pub(super) budget: &'c Cell<u32>,
}

/// Most type nodes resolved for one written type (aliases expanded included).
pub(super) const MAX_TYPE_NODES: u32 = 4096;

impl DefMap<'_> {
    /// Resolves a written type in module `m`, with `generics` in scope and `Self` = `self_ty`.
    pub fn resolve_type(
        &self,
        m: ModId,
        t: &TypeRef,
        generics: &[GenericParam],
        self_ty: Option<&Ty>,
        depth: usize,
    ) -> Ty {
        self.resolve_type_with(m, t, generics, self_ty, &[], depth)
    }

    /// [`Self::resolve_type`] with some of `generics` bound to known types (`subst`):
    /// a struct's parameters bound to a value's type arguments, a specialised fn's.
    pub fn resolve_type_with(
        &self,
        m: ModId,
        t: &TypeRef,
        generics: &[GenericParam],
        self_ty: Option<&Ty>,
        subst: &[(String, Ty)],
        depth: usize,
    ) -> Ty {
        let cx = TyCx {
            generics,
            self_ty,
            subst,
            budget: &Cell::new(MAX_TYPE_NODES),
        };
        self.resolve_ty_in(m, t, &cx, depth)
    }

    pub(super) fn resolve_ty_in(&self, m: ModId, t: &TypeRef, cx: &TyCx<'_>, depth: usize) -> Ty {
        if depth > MAX_DEPTH || cx.budget.get() == 0 {
            return Ty::Unknown;
        }
        cx.budget.set(cx.budget.get() - 1);
        let d = depth + 1;
        match t {
            TypeRef::Ref(inner) => self.resolve_ty_in(m, inner, cx, d),
            TypeRef::Slice(inner) => Ty::Slice(Box::new(self.resolve_ty_in(m, inner, cx, d))),
            TypeRef::Array(inner) => Ty::Array(Box::new(self.resolve_ty_in(m, inner, cx, d))),
            TypeRef::Tuple(ts) => {
                Ty::Tuple(ts.iter().map(|t| self.resolve_ty_in(m, t, cx, d)).collect())
            }
            TypeRef::ImplTrait(bounds) => Ty::Param(self.traits(m, bounds)),
            TypeRef::DynTrait(bounds) => Ty::Dyn(self.traits(m, bounds)),
            TypeRef::Path(p) => self.resolve_type_path(m, p, cx, d),
            TypeRef::Unknown => Ty::Unknown,
        }
    }

    fn resolve_type_path(&self, m: ModId, p: &PathIr, cx: &TyCx<'_>, d: usize) -> Ty {
        if let Some(q) = &p.qself {
            return self.qualified_projection(m, &q.ty, p, cx, d);
        }
        let names = p.names();
        if let Some((first, rest)) = names.split_first()
            && let Some((base, bound)) = self.param_or_self(m, first, cx)
        {
            if rest.is_empty() {
                return base;
            }
            // `R::Server`, `Self::Target`, `R::Server::Storage`: projections.
            let mut ty = match self.bound_binding(m, bound, rest[0], cx, d) {
                Some(t) => t,
                None => self.project(&base, None, rest[0], cx, d),
            };
            for name in &rest[1..] {
                ty = self.project(&ty, None, name, cx, d);
            }
            return ty;
        }
        let args = |s: &Self| -> Vec<Ty> {
            let last = p.segs.last().map(|s| s.args()).unwrap_or(&[]);
            last.iter().map(|a| s.resolve_ty_in(m, a, cx, d)).collect()
        };
        match self.resolve_path(m, &names, p.global) {
            Some(Def::Type(c)) => match self.types.get(&c) {
                Some(TypeData {
                    kind: TypeKind::Alias(..),
                    ..
                }) => self.expand_alias(&c, &args(self), cx.budget, d),
                Some(TypeData {
                    kind: TypeKind::Struct(_, generics),
                    module,
                    ..
                }) => {
                    let mut given = args(self);
                    self.fill_defaults(*module, generics, &mut given, cx.budget, d);
                    Ty::Adt(c, given)
                }
                _ => Ty::Adt(c, args(self)),
            },
            Some(Def::Trait(c)) => Ty::Dyn(vec![c]),
            Some(Def::External(segs)) => Ty::Adt(crate::known::canonical_name(&segs), args(self)),
            // A primitive (not shadowed by an item of that name): its name is its path.
            None if p.qself.is_none() && !p.global => match names.as_slice() {
                [name] if PRIMITIVES.contains(name) => Ty::Adt((*name).to_owned(), Vec::new()),
                _ => Ty::Unknown,
            },
            _ => Ty::Unknown,
        }
    }

    /// A name that is `Self`, a bound parameter or a generic parameter in `cx`: its
    /// type, and its bounds as written (for a generic parameter).
    fn param_or_self<'c>(&self, m: ModId, name: &str, cx: &TyCx<'c>) -> Option<(Ty, &'c [PathIr])> {
        let bound = cx.generics.iter().find(|g| g.name == name);
        let bound = bound.map(|g| g.bounds.as_slice()).unwrap_or_default();
        if let Some((_, t)) = cx.subst.iter().find(|(n, _)| n == name) {
            return Some((t.clone(), bound));
        }
        if name == "Self" {
            return Some((cx.self_ty.cloned().unwrap_or(Ty::Unknown), &[]));
        }
        let g = cx.generics.iter().find(|g| g.name == name)?;
        if g.is_const {
            return Some((Ty::Unknown, &[]));
        }
        Some((Ty::Param(self.traits(m, &g.bounds)), bound))
    }

    /// Whether enum `canon` has a variant `name`.
    pub fn has_variant(&self, canon: &str, name: &str) -> bool {
        matches!(
            self.types.get(canon),
            Some(TypeData { kind: TypeKind::Enum(vs), .. }) if vs.iter().any(|(v, _)| v == name)
        )
    }

    /// The arguments a struct's type is written without, from its parameters' defaults
    /// (`Tensor<B, 2>` is `Tensor<B, 2, Float>` for `struct Tensor<B, const D: usize, K =
    /// Float>`), each resolved where the struct is declared with the parameters before it
    /// bound; nothing is added when none of the missing parameters has a default.
    fn fill_defaults(
        &self,
        m: ModId,
        generics: &[GenericParam],
        args: &mut Vec<Ty>,
        budget: &Cell<u32>,
        d: usize,
    ) {
        let missing = generics.get(args.len()..).unwrap_or_default();
        if !missing.iter().any(|g| g.default.is_some()) {
            return;
        }
        for i in args.len()..generics.len() {
            let subst: Vec<(String, Ty)> = (generics.iter().map(|g| g.name.clone()))
                .zip(args.iter().cloned())
                .filter(|(_, t)| *t != Ty::Unknown)
                .collect();
            let cx = TyCx {
                generics,
                self_ty: None,
                subst: &subst,
                budget,
            };
            let t = match &generics[i].default {
                Some(t) => self.resolve_ty_in(m, t, &cx, d + 1),
                None => Ty::Unknown,
            };
            args.push(t);
        }
    }

    /// `<T as Trait>::Assoc` (and `<T>::Assoc`): the associated type of `T`'s impl of
    /// `Trait`, or of the trait's declaration when `T` is not concrete.
    fn qualified_projection(
        &self,
        m: ModId,
        q: &TypeRef,
        p: &PathIr,
        cx: &TyCx<'_>,
        d: usize,
    ) -> Ty {
        let names = p.names();
        let base = self.resolve_ty_in(m, q, cx, d);
        let trait_ = match self.resolve_path(m, &names[..p.qself_pos().min(names.len())], p.global)
        {
            Some(Def::Trait(t)) => Some(t),
            _ if p.qself_pos() == 0 => None,
            _ => return Ty::Unknown,
        };
        let Some((first, rest)) = names.get(p.qself_pos()..).and_then(|r| r.split_first()) else {
            return Ty::Unknown;
        };
        let mut ty = self.project(&base, trait_.as_deref(), first, cx, d);
        for name in rest {
            ty = self.project(&ty, None, name, cx, d);
        }
        ty
    }

    /// The type alias `canon` stands for when used with `args`: its parameters are bound
    /// to the arguments given, the missing ones to their defaults (which may name the
    /// parameters before them), or to an unknown type. A type that is no alias is itself.
    pub fn resolve_alias(&self, canon: &str, args: &[Ty], depth: usize) -> Ty {
        self.expand_alias(canon, args, &Cell::new(MAX_TYPE_NODES), depth)
    }

    fn expand_alias(&self, canon: &str, args: &[Ty], budget: &Cell<u32>, depth: usize) -> Ty {
        if depth > MAX_DEPTH {
            return Ty::Unknown;
        }
        let Some(TypeData {
            kind: TypeKind::Alias(t, params),
            module,
            ..
        }) = self.types.get(canon)
        else {
            return Ty::Adt(canon.to_owned(), args.to_vec());
        };
        let mut subst: Vec<(String, Ty)> = Vec::with_capacity(params.len());
        for (i, (name, default)) in params.iter().enumerate() {
            let ty = match (args.get(i), default) {
                (Some(a), _) => a.clone(),
                (None, Some(def)) => {
                    let cx = TyCx {
                        generics: &[],
                        self_ty: None,
                        subst: &subst,
                        budget,
                    };
                    self.resolve_ty_in(*module, def, &cx, depth + 1)
                }
                (None, None) => Ty::Unknown,
            };
            subst.push((name.clone(), ty));
        }
        let cx = TyCx {
            generics: &[],
            self_ty: None,
            subst: &subst,
            budget,
        };
        // Aliases of aliases carry the depth (`type A = A;` ends).
        self.resolve_ty_in(*module, t, &cx, depth + 1)
    }

    /// Trait bounds resolved to canonical trait paths.
    pub fn traits(&self, m: ModId, bounds: &[PathIr]) -> Vec<String> {
        bounds
            .iter()
            .filter_map(|b| match self.resolve_path(m, &b.names(), b.global) {
                Some(Def::Trait(t)) => Some(t),
                _ => None,
            })
            .collect()
    }

    /// The type and what it auto-derefs to, through std smart pointers and user
    /// `impl Deref` (bounded).
    pub fn deref_chain(&self, ty: &Ty) -> Vec<Ty> {
        // Each type is cloned once, into the chain (this runs at every method call).
        let mut out: Vec<Ty> = ty.deref_chain();
        while out.len() < 8 {
            let Some(last) = out.last() else { break };
            match self.deref_target(last) {
                Some(t) if t != Ty::Unknown && !out.contains(&t) => out.extend(t.deref_chain()),
                _ => break,
            }
        }
        out
    }

    /// The fields of variant `variant` of enum `canon`, or of struct `canon`.
    pub fn variant_fields(&self, canon: &str, variant: Option<&str>) -> Vec<(String, Ty)> {
        let (fields, module): (&[(String, TypeRef)], ModId) = match (self.types.get(canon), variant)
        {
            (
                Some(TypeData {
                    kind: TypeKind::Enum(vs),
                    module,
                    ..
                }),
                Some(v),
            ) => match vs.iter().find(|(n, _)| n == v) {
                Some((_, f)) => (f, *module),
                None => return Vec::new(),
            },
            (
                Some(TypeData {
                    kind: TypeKind::Struct(f, _),
                    module,
                    ..
                }),
                _,
            ) => (f, *module),
            _ => return Vec::new(),
        };
        fields
            .iter()
            .map(|(n, t)| (n.clone(), self.resolve_type(module, t, &[], None, 0)))
            .collect()
    }

    /// The type of field `name` of the struct `ty` (with its generic arguments).
    pub fn field_type(&self, ty: &Ty, name: &str) -> Ty {
        let Ty::Adt(canon, args) = ty else {
            return Ty::Unknown;
        };
        let Some(TypeData {
            kind: TypeKind::Struct(fields, generics),
            module,
            ..
        }) = self.types.get(canon)
        else {
            return Ty::Unknown;
        };
        let Some((_, t)) = fields.iter().find(|(n, _)| n == name) else {
            return Ty::Unknown;
        };
        // The struct's parameters are the value's type arguments, where they are known
        // (`ComputeClient<CudaRuntime>`'s `server: R::Server` is `CudaServer`).
        let subst: Vec<(String, Ty)> = generics
            .iter()
            .zip(args)
            .filter(|(_, a)| **a != Ty::Unknown)
            .map(|(g, a)| (g.name.clone(), a.clone()))
            .collect();
        self.resolve_type_with(*module, t, generics, None, &subst, 0)
    }
}
