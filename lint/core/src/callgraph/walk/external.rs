//! Calls into a fn of a crate that is not analysed, given values whose types implement
//! one of that crate's traits: the fn is generic over the trait and may call its
//! methods on them (candle's `Tensor::save_safetensors` passes `[(name, tensor)]` to
//! `safetensors::serialize_to_file<V: View>`, which calls `View::data` on each tensor).
//! The lint cannot read the callee, so each method of each such impl is an inferred
//! edge from the call, and its hop says why.

use super::{Typed, Walker};
use crate::callgraph::Callback;
use crate::callgraph::tags::{self, How};
use crate::parse::ir::SpanIr;
use crate::resolve::{FnId, Ty};

/// Most types looked at inside one argument's type (`Vec<(String, Tensor)>` is three),
/// and how deep.
const MAX_PARTS: usize = 16;
const MAX_DEPTH: usize = 4;

impl Walker<'_, '_> {
    /// The edges of `krate::..::f(args)` (`segs`, canonical) into the analysed impls of
    /// `krate`'s traits for the arguments' types: none for std, whose trait methods are
    /// modelled where std calls them (`Drop`, `Deref`).
    pub(super) fn external_callbacks(&mut self, segs: &[String], args: &[Typed], span: SpanIr) {
        let Some(krate) = segs.first().filter(|k| *k != "std") else {
            return;
        };
        let prefix = format!("{krate}::");
        let callee = segs.join("::");
        let mut done: Vec<FnId> = Vec::new();
        for (ty, sure) in args {
            let mut parts = Vec::new();
            parts_of(ty, 0, &mut parts);
            for (c, tr) in self.impls_of(&parts, &prefix) {
                let why = Callback {
                    callee: callee.clone(),
                    ty: c.rsplit("::").next().unwrap_or(&c).to_owned(),
                    trait_: tr.clone(),
                };
                let recv = Ty::Adt(c.clone(), Vec::new());
                for f in self.impl_fns(&c, &tr) {
                    if done.contains(&f) {
                        continue;
                    }
                    done.push(f);
                    self.callback = Some(why.clone());
                    self.call_fn(
                        f,
                        tags::edge(How::Callback, *sure),
                        Some(&recv),
                        &[],
                        span,
                        0,
                    );
                    self.callback = None;
                }
            }
        }
    }

    /// (type, trait) for each of `parts` that implements a trait whose path starts
    /// with `prefix`.
    fn impls_of(&self, parts: &[String], prefix: &str) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for c in parts {
            for tr in self.map.traits_of.get(c).into_iter().flatten() {
                if tr.starts_with(prefix) && !out.iter().any(|(a, b)| a == c && b == tr) {
                    out.push((c.clone(), tr.clone()));
                }
            }
        }
        out
    }

    /// Every fn of `impl tr for c`, in declaration order.
    fn impl_fns(&self, c: &str, tr: &str) -> Vec<FnId> {
        let mut fns: Vec<FnId> = self
            .map
            .methods
            .get(c)
            .into_iter()
            .flat_map(|m| m.values().flatten())
            .copied()
            .filter(|&f| self.map.func(f).trait_.as_deref() == Some(tr))
            .collect();
        fns.sort_unstable();
        fns
    }
}

/// The named types in `ty` (itself, its generic arguments, the elements of tuples,
/// arrays and slices), at most [`MAX_PARTS`] of them, [`MAX_DEPTH`] levels down.
fn parts_of(ty: &Ty, depth: usize, out: &mut Vec<String>) {
    if depth > MAX_DEPTH || out.len() >= MAX_PARTS {
        return;
    }
    match ty {
        Ty::Adt(c, args) => {
            if !out.contains(c) {
                out.push(c.clone());
            }
            args.iter().for_each(|a| parts_of(a, depth + 1, out));
        }
        Ty::Slice(t) | Ty::Array(t) => parts_of(t, depth + 1, out),
        Ty::Tuple(ts) => ts.iter().for_each(|t| parts_of(t, depth + 1, out)),
        Ty::Param(_) | Ty::Dyn(_) | Ty::Unknown => {}
    }
}

impl Walker<'_, '_> {
    /// The targets of `recv.name(..)` on a receiver of unknown type: the methods of that
    /// name the caller can reach ([`Walker::name_only`]) and, when `name` is a method of
    /// exactly one trait that the analysed code uses as `dyn Trait` and the caller can
    /// see, a dispatch through that trait to every impl of it in the graph, downstream
    /// crates' included (the receiver may be such a trait object, taken out of a
    /// container of a crate the lint does not read). All name-only: the lint does not know
    /// the receiver's type.
    pub(super) fn unknown_receiver(&mut self, name: &str, arity: usize) -> Vec<(FnId, How)> {
        let mut out = self.name_only(name, arity);
        let Some([tr]) = self.map.dyn_methods.get(name).map(Vec::as_slice) else {
            return out;
        };
        let Some(decl) = self.map.trait_method(tr, name) else {
            return out;
        };
        let fd = self.map.func(decl);
        let arity_ok = fd.ir.is_none_or(|ir| ir.params.len() == arity);
        if crate::known::std::never_guessed(name)
            || !arity_ok
            || !self.map.can_call(self.module, decl)
        {
            return out;
        }
        let targets = self.dispatch(std::slice::from_ref(tr), name);
        // The hop's note names the trait when every target is one of its methods.
        let only_dispatch = (out.iter()).all(|(f, _)| targets.iter().any(|(g, _)| g == f));
        let impls = (targets.iter())
            .filter(|(f, _)| !self.map.func(*f).is_trait_decl)
            .count();
        for (f, _) in targets {
            if !out.iter().any(|(g, _)| *g == f) {
                out.push((f, How::Name));
            }
        }
        if only_dispatch {
            self.via = Some(crate::callgraph::Dispatch {
                trait_: tr.clone(),
                impls,
            });
        }
        out
    }
}
