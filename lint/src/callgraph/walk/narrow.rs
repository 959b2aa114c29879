//! What a call tells its callee: the concrete types it passes for the callee's
//! dispatching parameters (`&dyn Trait`, `Box<dyn Trait>`, `impl Trait`, `T: Trait`),
//! from which the callee is specialised (see `callgraph::specialise`).

use super::{Typed, Walker};
use crate::callgraph::Spec;
use crate::diagnostics::Confidence;
use crate::resolve::{FnId, Ty};

impl Walker<'_, '_> {
    /// The specialisation a call of `f` with `args` asks for: `Self` for a provided
    /// method on a known type, and the concrete arguments of dispatching parameters.
    pub(super) fn spec_for(&self, f: FnId, args: &[Typed]) -> Option<Spec> {
        let fd = self.map.func(f);
        let provided = fd.is_trait_decl && fd.ir.is_some_and(|ir| ir.body.is_some());
        let self_ty = self.spec.clone().filter(|_| provided);
        let args = self.narrowed_args(f, args);
        (self_ty.is_some() || !args.is_empty()).then_some(Spec { self_ty, args })
    }

    /// The parameters of `f` declared with a trait bound or `dyn Trait` to which this
    /// call passes a value of a concrete type implementing it: (position, type, how sure).
    fn narrowed_args(&self, f: FnId, args: &[Typed]) -> Vec<(usize, Ty, Confidence)> {
        let fd = self.map.func(f);
        let Some(ir) = fd.ir.filter(|ir| ir.body.is_some()) else {
            return Vec::new();
        };
        // `Type::m(recv, a, ..)` passes `self` first.
        let offset = usize::from(ir.self_param.is_some() && args.len() == ir.params.len() + 1);
        let mut generics = fd.impl_generics.to_vec();
        generics.extend(ir.generics.iter().cloned());
        let mut out = Vec::new();
        for (i, p) in ir.params.iter().enumerate() {
            let Some((arg, conf)) = args.get(i + offset) else {
                break;
            };
            let declared = self.map.resolve_type(fd.module, &p.ty, &generics, None, 0);
            if let Some(traits) = self.dispatching(&declared)
                && self.implements(arg, &traits)
            {
                out.push((i, arg.clone(), *conf));
            }
        }
        out
    }

    /// The traits a parameter of type `t` dispatches through, behind references and
    /// smart pointers (`&dyn T`, `Arc<Box<dyn T>>`, `impl T`, a `C: T` parameter).
    fn dispatching(&self, t: &Ty) -> Option<Vec<String>> {
        match self.map.deref_chain(t).pop()? {
            Ty::Param(ts) | Ty::Dyn(ts) if !ts.is_empty() => Some(ts),
            _ => None,
        }
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
}

/// A type as a hop note shows it: the concrete type behind references and pointers,
/// by its last path segment.
fn short_ty(map: &crate::resolve::DefMap<'_>, t: &Ty) -> String {
    let chain = map.deref_chain(t);
    let c = chain.iter().rev().find_map(Ty::canon).unwrap_or("_");
    c.rsplit("::").next().unwrap_or(c).to_owned()
}
