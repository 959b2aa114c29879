//! Associated types: projections (`R::Server`, `<R as Runtime>::Server`, `Self::Target`,
//! `R::Server::Storage`) and the generic parameters a concrete type binds.
//!
//! A projection on a concrete type is the impl's definition (`impl Runtime for
//! CudaRuntime { type Server = CudaServer; }`), resolved with the impl's parameters bound
//! from that type's arguments. On a type parameter it is a binding of its bound
//! (`R: Runtime<Server = S>` gives `S`), else a value of unknown type bounded by the
//! associated type's declared bounds (`type Server: ComputeServer;` gives a parameter
//! bounded by `ComputeServer`, whose calls dispatch to every impl of it).

use super::ty::TyCx;
use super::*;
use crate::known::std::DEREF;
use crate::parse::ir::PathIr;
use std::cell::Cell;

/// Most nested trait lookups for one associated type (supertraits included).
const MAX_TRAITS: usize = 32;

impl DefMap<'_> {
    /// The generic parameters of `generics` that the written self type `written` (of an
    /// impl, or a struct's own parameters in order) takes as arguments, bound to the
    /// arguments of the concrete `ty`: `impl<S> DeviceContext<S>` on a
    /// `DeviceContext<CudaServer>` binds `S = CudaServer`. Unknown arguments bind nothing.
    pub fn bind_params(
        &self,
        written: &TypeRef,
        generics: &[GenericParam],
        ty: &Ty,
    ) -> Vec<(String, Ty)> {
        let mut out = Vec::new();
        bind_into(written, generics, ty, &mut out, 0);
        out
    }

    /// What `Deref` makes of `t` (a user `impl Deref`), its parameters bound from `t`.
    pub fn deref_target(&self, t: &Ty) -> Option<Ty> {
        let budget = Cell::new(super::ty::MAX_TYPE_NODES);
        self.project_adt(t, Some(DEREF), "Target", &budget, 0)
    }

    /// Associated type `name` of the impl of `trait_` for the concrete `t` (`Iterator`'s
    /// `Item`, `Index`'s `Output`), its parameters bound from `t`.
    pub fn impl_assoc_type(&self, t: &Ty, trait_: &str, name: &str) -> Option<Ty> {
        let budget = Cell::new(super::ty::MAX_TYPE_NODES);
        self.project_adt(t, Some(trait_), name, &budget, 0)
    }

    /// The binding of associated type `name` in a type parameter's bounds as written
    /// (`R: Runtime<Server = S>` gives `S`), resolved in `m` with `cx`.
    pub(super) fn bound_binding(
        &self,
        m: ModId,
        bound: &[PathIr],
        name: &str,
        cx: &TyCx<'_>,
        d: usize,
    ) -> Option<Ty> {
        let segs = bound.iter().filter_map(|b| b.segs.last());
        let (_, t) = segs
            .flat_map(|s| s.bindings().iter())
            .find(|(n, _)| n == name)?;
        Some(self.resolve_ty_in(m, t, cx, d + 1))
    }

    /// `base::name` (through `trait_` when the path says which): see the module docs.
    pub(super) fn project(
        &self,
        base: &Ty,
        trait_: Option<&str>,
        name: &str,
        cx: &TyCx<'_>,
        d: usize,
    ) -> Ty {
        match base {
            Ty::Adt(..) => self
                .project_adt(base, trait_, name, cx.budget, d)
                .unwrap_or(Ty::Unknown),
            Ty::Param(traits) | Ty::Dyn(traits) => {
                let own = trait_.map(|t| vec![t.to_owned()]);
                self.declared_assoc(own.as_deref().unwrap_or(traits), name)
            }
            _ => Ty::Unknown,
        }
    }

    /// `name` as the impl of `trait_` (or of any trait) for the concrete `base` defines it.
    fn project_adt(
        &self,
        base: &Ty,
        trait_: Option<&str>,
        name: &str,
        budget: &Cell<u32>,
        d: usize,
    ) -> Option<Ty> {
        super::note_impl_tables();
        let a = self
            .impl_assocs
            .get(base.canon()?)?
            .iter()
            .find(|a| a.name == name && trait_.is_none_or(|t| a.trait_ == t))?;
        let subst = self.bind_params(a.self_ty, a.generics, base);
        let cx = TyCx {
            generics: a.generics,
            self_ty: Some(base),
            subst: &subst,
            budget,
        };
        Some(self.resolve_ty_in(a.module, a.ty, &cx, d + 1))
    }

    /// A value of associated type `name` of one of `traits` (or their supertraits), the
    /// concrete type unknown: a parameter bounded by the declaration's bounds.
    fn declared_assoc(&self, traits: &[String], name: &str) -> Ty {
        self.in_traits(traits, |kind, module| match kind {
            TypeKind::Trait { assoc, .. } => {
                let (_, bounds) = assoc.iter().find(|(n, _)| n == name)?;
                Some(Ty::Param(self.traits(module, bounds)))
            }
            _ => None,
        })
        .unwrap_or(Ty::Unknown)
    }

    /// The type of associated const `name` of `base` (a type parameter or a concrete
    /// type): its declaration's in the trait declaring it, with `Self` = `base`
    /// (candle's `U::V`, `const V: Self;`, is a `U`). `None` when no trait of `base`
    /// declares it.
    pub fn assoc_const_type(&self, base: &Ty, name: &str) -> Option<Ty> {
        let traits = match base {
            Ty::Param(ts) | Ty::Dyn(ts) => ts.clone(),
            Ty::Adt(c, _) => {
                super::note_impl_tables();
                self.traits_of.get(c).cloned().unwrap_or_default()
            }
            _ => return None,
        };
        let (module, ty) = self.in_traits(&traits, |kind, module| match kind {
            TypeKind::Trait { consts, .. } => {
                let (_, ty) = consts.iter().find(|(n, _)| n == name)?;
                Some((module, ty))
            }
            _ => None,
        })?;
        Some(self.resolve_type(module, ty, &[], Some(base), 0))
    }

    /// The first answer of `find` on `traits` and their supertraits (bounded).
    fn in_traits<'s, T>(
        &'s self,
        traits: &[String],
        find: impl Fn(&'s TypeKind<'_>, ModId) -> Option<T>,
    ) -> Option<T> {
        let mut stack: Vec<String> = traits.to_vec();
        let mut seen = 0;
        while let Some(t) = stack.pop() {
            seen += 1;
            if seen > MAX_TRAITS {
                break;
            }
            let Some(data) = self.types.get(&t) else {
                continue;
            };
            if let Some(found) = find(&data.kind, data.module) {
                return Some(found);
            }
            if let TypeKind::Trait { supertraits, .. } = &data.kind {
                stack.extend(supertraits.iter().cloned());
            }
        }
        None
    }
}

/// [`DefMap::bind_params`] into `out`, through nested arguments (bounded).
fn bind_into(
    written: &TypeRef,
    generics: &[GenericParam],
    ty: &Ty,
    out: &mut Vec<(String, Ty)>,
    depth: usize,
) {
    if depth > 4 {
        return;
    }
    let TypeRef::Path(p) = peel(written) else {
        return;
    };
    if let [name] = p.names().as_slice()
        && generics.iter().any(|g| g.name == *name)
    {
        if *ty != Ty::Unknown && !out.iter().any(|(n, _)| n == name) {
            out.push(((*name).to_owned(), ty.clone()));
        }
        return;
    }
    let Some(seg) = p.segs.last() else { return };
    for (i, arg) in seg.args().iter().enumerate() {
        bind_into(arg, generics, &ty.arg(i), out, depth + 1);
    }
}

fn peel(t: &TypeRef) -> &TypeRef {
    match t {
        TypeRef::Ref(inner) => peel(inner),
        t => t,
    }
}

/// Whether the written type `t` is type parameter `name` (behind references).
pub fn names_param(t: &TypeRef, name: &str) -> bool {
    matches!(peel(t), TypeRef::Path(p) if p.qself.is_none() && p.names() == [name])
}
