//! What a call tells its callee: the concrete types it passes for the callee's
//! dispatching parameters (`&dyn Trait`, `Box<dyn Trait>`, `impl Trait`, `T: Trait`),
//! from which the callee is specialised (see `callgraph::specialise`).

use super::{Typed, Walker};
use crate::callgraph::Spec;
use crate::diagnostics::Confidence;
use crate::resolve::{FnId, Ty};

/// Dispatching parameters bound to concrete types (position, type, how sure), and the
/// type parameters they bind.
type Narrowed = (Vec<(usize, Ty, Confidence)>, Vec<(String, Ty)>);

impl Walker<'_, '_> {
    /// The specialisation a call of `f` with `args` (on `recv`) asks for: `Self` for a
    /// provided method on a known type, the concrete arguments of dispatching
    /// parameters, and the type parameters that the receiver and arguments bind.
    pub(super) fn spec_for(&self, f: FnId, recv: Option<&Ty>, args: &[Typed]) -> Option<Spec> {
        let fd = self.map.func(f);
        let provided = fd.is_trait_decl && fd.ir.is_some_and(|ir| ir.body.is_some());
        let self_ty = self.spec.clone().filter(|_| provided);
        let (args, mut params) = self.narrowed_args(f, args);
        for (n, t) in self
            .receiver_params(f, recv)
            .into_iter()
            .chain(self.bound_params_of(f))
        {
            if params.iter().all(|(m, _)| *m != n) {
                params.push((n, t));
            }
        }
        let values = self.values_for(f);
        let known = self_ty.is_some() || !args.is_empty() || !params.is_empty();
        (known || !values.is_empty()).then_some(Spec {
            self_ty,
            args,
            params,
            values,
        })
    }

    /// The bounded type parameters of `f`'s impl that the trait arguments of the bound the
    /// call goes through bind (`impl<B: Backend> BasicOps<B> for Int` reached through
    /// `K: BasicOps<Cpu>`: `B` = `Cpu`).
    fn bound_params_of(&self, f: FnId) -> Vec<(String, Ty)> {
        let fd = self.map.func(f);
        let Some((tr, args)) = &self.bound_args else {
            return Vec::new();
        };
        if fd.trait_.as_ref() != Some(tr) || fd.ir.is_none_or(|ir| ir.body.is_none()) {
            return Vec::new();
        }
        let written = fd.impl_trait_args.iter().zip(args);
        let bound = written.flat_map(|(w, t)| self.map.bind_params(w, fd.impl_generics, t));
        bound
            .filter(|(n, t)| concrete_for(fd.impl_generics, n, t))
            .collect()
    }

    /// The bounded type parameters of `f`'s impl that a receiver of concrete type
    /// arguments binds (`impl<R: Runtime> Client<R>` on a `Client<CudaRuntime>`).
    fn receiver_params(&self, f: FnId, recv: Option<&Ty>) -> Vec<(String, Ty)> {
        let fd = self.map.func(f);
        let (Some(recv), Some(written), Some(c)) = (recv, &fd.self_ty, fd.self_canon.as_deref())
        else {
            return Vec::new();
        };
        if fd.impl_generics.is_empty() || fd.ir.is_none_or(|ir| ir.body.is_none()) {
            return Vec::new();
        }
        let Some(own) = self.map.deref_chain(recv).into_iter().find(|t| t.is(c)) else {
            return Vec::new();
        };
        let mut out = self.map.bind_params(written, fd.impl_generics, &own);
        out.retain(|(n, t)| concrete_for(fd.impl_generics, n, t));
        out
    }

    /// The parameters of `f` declared with a trait bound or `dyn Trait` to which this
    /// call passes a value of a concrete type implementing it: (position, type, how
    /// sure); and the type parameters such a parameter is typed by (`c: &C`), bound.
    fn narrowed_args(&self, f: FnId, args: &[Typed]) -> Narrowed {
        let fd = self.map.func(f);
        let Some(ir) = fd.ir.filter(|ir| ir.body.is_some()) else {
            return Default::default();
        };
        // `Type::m(recv, a, ..)` passes `self` first.
        let offset = usize::from(ir.self_param.is_some() && args.len() == ir.params.len() + 1);
        let generics = super::joined(fd.impl_generics, &ir.generics);
        let (mut out, mut params) = (Vec::new(), Vec::new());
        for (i, p) in ir.params.iter().enumerate() {
            let Some((arg, conf)) = args.get(i + offset) else {
                break;
            };
            // A value of no type that implements a trait narrows nothing: the declared
            // type is not resolved (most arguments, at every call).
            if !self.implements_any(arg) {
                continue;
            }
            let declared = self.map.resolve_type(fd.module, &p.ty, &generics, None, 0);
            if let Some(traits) = self.dispatching(&declared)
                && self.implements(arg, &traits)
            {
                out.push((i, arg.clone(), *conf));
                for (n, t) in self.map.bind_params(&p.ty, &ir.generics, arg) {
                    if concrete_for(&ir.generics, &n, &t) && params.iter().all(|(m, _)| *m != n) {
                        params.push((n, t));
                    }
                }
            }
        }
        (out, params)
    }

    /// The traits a parameter of type `t` dispatches through, behind references and
    /// smart pointers (`&dyn T`, `Arc<Box<dyn T>>`, `impl T`, a `C: T` parameter).
    fn dispatching(&self, t: &Ty) -> Option<Vec<String>> {
        match self.map.deref_chain(t).pop()? {
            Ty::Param(ts) | Ty::Dyn(ts) if !ts.is_empty() => Some(ts),
            _ => None,
        }
    }

    /// Whether a value of type `t` is of a concrete type implementing some trait (a
    /// condition of [`Self::implements`] for any traits).
    fn implements_any(&self, t: &Ty) -> bool {
        self.map.deref_chain(t).iter().any(|t| {
            t.canon()
                .is_some_and(|c| self.map.traits_of.get(c).is_some_and(|ts| !ts.is_empty()))
        })
    }

    /// Whether a value of type `t` is of a concrete type implementing one of `traits`.
    fn implements(&self, t: &Ty, traits: &[String]) -> bool {
        self.map.deref_chain(t).iter().any(|t| {
            t.canon().is_some_and(|c| {
                self.map
                    .traits_of
                    .get(c)
                    .is_some_and(|ts| ts.iter().any(|x| traits.contains(x)))
            })
        })
    }

    /// The arguments a call specialised its callee to: (parameter name, or `_`; the type
    /// by its last path segment), for the hop's note.
    pub(super) fn narrowed(&self, f: FnId, spec: &Spec) -> Vec<(String, String)> {
        let Some(ir) = self.map.func(f).ir else {
            return Vec::new();
        };
        spec.args
            .iter()
            .map(|(i, t, _)| {
                let name = ir.params.get(*i).and_then(|p| p.name.as_deref());
                (name.unwrap_or("_").to_owned(), short_ty(self.map, t))
            })
            .collect()
    }

    /// The type parameters a call bound its callee's to, for the hop's note: (name, the
    /// type by its last path segment), without those an argument's type already shows
    /// (`c: &C` given a `Quant` is `c: Quant`).
    pub(super) fn bound_params(&self, f: FnId, spec: &Spec) -> Vec<(String, String)> {
        let Some(ir) = self.map.func(f).ir else {
            return Vec::new();
        };
        let by_arg = |n: &str| {
            spec.args.iter().any(|(i, ..)| {
                ir.params
                    .get(*i)
                    .is_some_and(|p| crate::resolve::names_param(&p.ty, n))
            })
        };
        let values = spec.values.iter().flat_map(|(name, known)| {
            known.iter().map(move |(field, v)| match field.is_empty() {
                true => (name.clone(), v.to_string()),
                false => (format!("{name}.{field}"), v.to_string()),
            })
        });
        (spec.params.iter())
            .filter(|(n, _)| !by_arg(n))
            .map(|(n, t)| (n.clone(), short_ty(self.map, t)))
            .chain(values)
            .collect()
    }
}

/// Whether binding type parameter `name` of `generics` to `t` tells more than its
/// bounds: `t` is a concrete type and the parameter has a bound to dispatch through.
fn concrete_for(generics: &[crate::parse::ir::GenericParam], name: &str, t: &Ty) -> bool {
    matches!(t, Ty::Adt(..))
        && generics
            .iter()
            .any(|g| g.name == name && !g.bounds.is_empty())
}

/// A type as a hop note shows it: the concrete type behind references and pointers,
/// by its last path segment.
fn short_ty(map: &crate::resolve::DefMap<'_>, t: &Ty) -> String {
    let chain = map.deref_chain(t);
    let c = chain.iter().rev().find_map(Ty::canon).unwrap_or("_");
    c.rsplit("::").next().unwrap_or(c).to_owned()
}
