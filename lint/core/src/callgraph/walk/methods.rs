//! Method calls: the receiver's type picks inherent methods, provided trait methods,
//! trait-bound and `dyn` dispatch; the name-only fallback when the type is unknown.

use super::{NAME_ONLY_CAP, Typed, Walker};
use crate::callgraph::Dispatch;
use crate::callgraph::returns::{cudarc_ret, std_method_ret};
use crate::callgraph::tags::{self, How};
use crate::known::sinks::NAME_ONLY_OK;
use crate::known::std::{INHERENT as STD_INHERENT, TRAIT_METHODS as STD_METHODS};
use crate::parse::ir::SpanIr;
use crate::resolve::{FnId, Ty};

impl Walker<'_, '_> {
    pub(super) fn method_call(
        &mut self,
        recv: Typed,
        name: &str,
        args: &[Typed],
        span: SpanIr,
    ) -> Typed {
        let (targets, known) = self.method_targets(&recv.0, name, args.len());
        let by_value = |f: &FnId| {
            self.map
                .func(*f)
                .ir
                .is_some_and(|ir| ir.self_param == Some(false))
        };
        self.consumed = !targets.is_empty() && targets.iter().all(|(f, _)| by_value(f));
        let via = self.via.take();
        let spec = self.spec.take();
        let mut ret = None;
        for (f, how) in &targets {
            let tag = tags::edge(*how, recv.1);
            self.via = via.clone();
            self.spec = spec.clone();
            let r = self.call_fn(*f, tag, Some(&recv.0), args, span, 0);
            self.via = None;
            self.spec = None;
            ret.get_or_insert(r);
        }
        if let Some(r) = ret {
            return r;
        }
        if name == "to_string"
            && args.is_empty()
            && let Some(r) = self.call_to_string(&recv, span)
        {
            return r;
        }
        if !known && recv.0 == Ty::Unknown && !STD_METHODS.contains(&name) {
            self.unresolved(span, format!("method `{name}` on a value of unknown type"));
        }
        let chain = self.map.deref_chain(&recv.0);
        let arg_tys: Vec<Ty> = args.iter().map(|(t, _)| t.clone()).collect();
        let ty = std_method_ret(&recv.0, name, &arg_tys)
            .filter(|t| *t != Ty::Unknown)
            .or_else(|| {
                chain
                    .iter()
                    .find_map(|t| std_method_ret(t, name, &arg_tys).filter(|t| *t != Ty::Unknown))
            })
            .or_else(|| {
                chain
                    .iter()
                    .find_map(|t| t.canon().and_then(|c| cudarc_ret(c, name)))
            })
            .unwrap_or(Ty::Unknown);
        (ty, recv.1)
    }

    /// Candidate fns for `recv.name(..)`, and whether the receiver's type is known
    /// (then no name-only fallback is tried).
    pub(super) fn method_targets(
        &mut self,
        recv: &Ty,
        name: &str,
        arity: usize,
    ) -> (Vec<(FnId, How)>, bool) {
        for t in self.map.deref_chain(recv) {
            match &t {
                Ty::Adt(c, _)
                    if c.starts_with("std::")
                        && (STD_INHERENT.contains(&name)
                            || crate::known::std::is_wrapper_inherent(c, name)) =>
                {
                    return (Vec::new(), true);
                }
                Ty::Adt(c, _) => {
                    if let Some(ids) = self.map.methods.get(c).and_then(|m| m.get(name)) {
                        // Inherent methods shadow trait methods of the same name (Rust's
                        // method lookup): `Tensor::add` before `<Tensor as Add>::add`.
                        let inherent = |&&f: &&FnId| self.map.func(f).trait_.is_none();
                        let ids: Vec<FnId> = match ids.iter().any(|f| inherent(&f)) {
                            true => ids.iter().filter(inherent).copied().collect(),
                            false => ids.clone(),
                        };
                        return (ids.iter().map(|&f| (f, How::Receiver)).collect(), true);
                    }
                    if let Some(f) = self.provided_method(c, name) {
                        self.spec = Some(t.clone());
                        return (vec![(f, How::Receiver)], true);
                    }
                    let traits = self.map.traits_of.get(c).cloned().unwrap_or_default();
                    let blanket = self.blanket_targets(&t, &traits, name);
                    if !blanket.is_empty() {
                        return (blanket, true);
                    }
                }
                Ty::Param(traits) | Ty::Dyn(traits) => {
                    let targets = self.dispatch(traits, name);
                    if targets.is_empty() {
                        let blanket = self.blanket_targets(&t, traits, name);
                        return (blanket, true);
                    }
                    let impls = targets
                        .iter()
                        .filter(|(f, _)| !self.map.func(*f).is_trait_decl)
                        .count();
                    let tr = targets
                        .first()
                        .and_then(|(f, _)| self.map.func(*f).trait_.clone())
                        .unwrap_or_default();
                    self.via = Some(Dispatch { trait_: tr, impls });
                    return (targets, true);
                }
                Ty::Unknown => return (self.unknown_receiver(name, arity), false),
                _ => return (Vec::new(), true),
            }
        }
        (Vec::new(), true)
    }

    /// A provided trait method that type `c` inherits (its impl does not override it).
    pub(super) fn provided_method(&self, c: &str, name: &str) -> Option<FnId> {
        let traits = self.map.traits_of.get(c)?;
        traits.iter().find_map(|t| self.map.trait_method(t, name))
    }

    /// A call through a trait bound or `dyn`: the trait's method and every impl of it
    /// (only the method when it is itself a sink).
    pub(super) fn dispatch(&self, traits: &[String], name: &str) -> Vec<(FnId, How)> {
        let mut out = Vec::new();
        for tr in traits {
            if let Some(decl) = self.map.trait_method(tr, name) {
                out.push((decl, How::Receiver));
                // A `#[synchronizes]` declaration covers every impl: one finding, at the trait.
                if self.map.func(decl).marks.sink.is_some() {
                    break;
                }
                let owner = self.map.func(decl).trait_.clone().unwrap_or_default();
                for &imp in self
                    .map
                    .trait_impls
                    .get(&(owner, name.to_owned()))
                    .into_iter()
                    .flatten()
                {
                    out.push((imp, How::AnyImpl));
                }
                break;
            }
        }
        out
    }

    /// Methods named `name` that a call `recv.name(..)` with `arity` arguments on a
    /// receiver of unknown type could be: in a crate the caller can reach (its own or
    /// its dependency closure; cudarc's built-in sinks only if cudarc is a dependency),
    /// taking as many arguments, and not a name std owns ([`crate::known::std::never_guessed`]:
    /// a method every type has through std traits, or one of std's slices, `Vec`, `str`,
    /// `String`, `Option`, `Result` or iterators).
    pub(super) fn name_only(&self, name: &str, arity: usize) -> Vec<(FnId, How)> {
        if crate::known::std::never_guessed(name) {
            return Vec::new();
        }
        let cands: Vec<FnId> = self
            .map
            .by_name
            .get(name)
            .into_iter()
            .flatten()
            .copied()
            .filter(|&f| {
                let fd = self.map.func(f);
                let arity_ok = fd.ir.is_none_or(|ir| ir.params.len() == arity);
                (fd.ir.is_some() || NAME_ONLY_OK.contains(&name))
                    && arity_ok
                    && self.map.can_call(self.module, f)
            })
            .collect();
        if cands.len() > NAME_ONLY_CAP {
            return Vec::new();
        }
        cands.into_iter().map(|f| (f, How::Name)).collect()
    }
}
