//! Call resolution: paths, `Self::m`, UFCS, trait paths, method calls from the
//! receiver's type (inherent, provided trait methods, trait-bound and `dyn` dispatch),
//! the name-only fallback, and the edges with their conditions.

use super::models::Verdict;
use super::{Typed, Walker, unknown};
use crate::callgraph::returns::{cudarc_ret, std_assoc_ret};
use crate::callgraph::tags::{self, How, WRITTEN};
use crate::callgraph::{Edge, Uncertain, Via};
use crate::diagnostics::Confidence;
use crate::parse::ir::{PathIr, SpanIr};
use crate::resolve::{Def, FnId, Ty};

impl Walker<'_, '_> {
    pub(super) fn call_path(&mut self, path: &PathIr, args: &[Typed], span: SpanIr) -> Typed {
        let names = path.names();
        if path.segs.len() == 1
            && path.qself.is_none()
            && let Some(l) = self.local(names[0])
        {
            if l.is_param {
                self.unresolved(span, format!("a call through parameter `{}`", names[0]));
            }
            return unknown();
        }
        if let [name] = names.as_slice()
            && path.qself.is_none()
            && let Some(&(_, f)) = self
                .map
                .local_fns
                .get(&self.from)
                .and_then(|l| l.iter().find(|(n, _)| n == name))
        {
            return self.call_fn(f, tags::edge(How::Path, WRITTEN), None, args, span, 0);
        }
        if let Some(q) = &path.qself {
            return self.call_qualified(&q.ty, path, args, span);
        }
        if let [first, method] = names.as_slice()
            && let Some(recv) = self.type_param_or_self(first)
        {
            if let Some(t) = self.derived_ctor(&recv, method) {
                return (t, WRITTEN);
            }
            let rest = self.shift_args(args);
            self.bound_args = self.bound_trait_args(first);
            let out = self.method_call((recv, WRITTEN), method, &rest, span);
            self.bound_args = None;
            return out;
        }
        match self.map.resolve_path(self.module, &names, path.global) {
            Some(Def::Fn(f)) if self.map.func(f).is_trait_decl => {
                self.call_trait_path(f, args, span)
            }
            Some(Def::Fn(f)) => {
                // `Type::method(recv, ..)`: the receiver is the first argument.
                // Its type binds the impl's parameters as a method call's receiver does.
                let ir = self.map.func(f).ir;
                let shift = usize::from(ir.is_some_and(|ir| ir.self_param.is_some()));
                let recv = match shift {
                    1 => args.first().map(|(t, _)| t.clone()),
                    _ => (self.turbofish_self(path)).or_else(|| self.self_in_args(f, args)),
                };
                let tag = tags::edge(How::Path, WRITTEN);
                self.call_fn(f, tag, recv.as_ref(), args, span, shift)
            }
            Some(Def::Type(c)) => (self.map.resolve_alias(&c, &[], 0), WRITTEN),
            Some(Def::External(segs)) => self.call_external(&segs, args, span),
            Some(_) => unknown(),
            None => match self.type_prefix(path) {
                Some(t) => self.call_on_type(t, path.last_name(), args, span),
                None => self.unresolved_path(path, span),
            },
        }
    }

    /// The type `T` of a path `T::name` that names no fn (`None` when `T` is no type).
    fn type_prefix(&self, path: &PathIr) -> Option<Ty> {
        let (_, ty) = path.segs.split_last()?;
        if ty.is_empty() || path.qself.is_some() {
            return None;
        }
        let ty_path = PathIr {
            global: path.global,
            segs: ty.into(),
            qself: None,
        };
        match self.ty(&crate::parse::ir::TypeRef::Path(ty_path)) {
            Ty::Unknown => None,
            t => Some(t),
        }
    }

    /// `T::name(args)` where `T` has no fn `name` of its own: the constructor a derive gave
    /// it (`resolve::derives`), or a method of a trait `T` implements with no impl the lint
    /// sees (a derived one: `Config::load`), called on `T` (`T::m(x, ..)` with a `self`
    /// method: on `x`).
    fn call_on_type(&mut self, t: Ty, name: &str, args: &[Typed], span: SpanIr) -> Typed {
        if let Some(ct) = self.derived_ctor(&t, name) {
            return (ct, WRITTEN);
        }
        let decl = (t.canon()).and_then(|c| self.provided_method(c, name));
        match decl.and_then(|f| self.map.func(f).ir) {
            Some(ir) if ir.self_param.is_some() => {
                let recv = args.first().cloned().unwrap_or((t, WRITTEN));
                let rest = self.shift_args(args);
                self.method_call(recv, name, &rest, span)
            }
            Some(_) => self.method_call((t, WRITTEN), name, args, span),
            None => unknown(),
        }
    }

    /// The type a derived constructor `name` of type `t` makes: `t` itself.
    fn derived_ctor(&self, t: &Ty, name: &str) -> Option<Ty> {
        let c = t.canon()?;
        let d = self.map.derived_ctors.get(c)?;
        (d.constructor == name).then(|| t.clone())
    }

    /// `Trait::m(x, ..)`: a method call on `x` through `Trait`.
    pub(super) fn call_trait_path(&mut self, decl: FnId, args: &[Typed], span: SpanIr) -> Typed {
        let fd = self.map.func(decl);
        let (name, tr) = (fd.name.clone(), fd.trait_.clone().unwrap_or_default());
        let recv = args.first().cloned().unwrap_or_else(unknown);
        let rest = self.shift_args(args);
        let chain = self.map.deref_chain(&recv.0);
        let implementing = chain
            .iter()
            .filter_map(Ty::canon)
            .find(|c| (self.map.traits_of.get(*c)).is_some_and(|ts| ts.contains(&tr)));
        // The impl's own method, named through its trait: not an inherent method of the
        // same name (`Module::map(opt, ..)` is not `Option::map`).
        let own = implementing.and_then(|c| self.map.impl_methods(c, &tr, &name).first().copied());
        if let Some(f) = own {
            // Found from the receiver's type: as sure as that type.
            let (recv_ty, tag) = (recv.0.clone(), tags::edge(How::Receiver, recv.1));
            return self.call_fn(f, tag, Some(&recv_ty), args, span, 1);
        }
        let recv = if implementing.is_some() {
            recv
        } else {
            (Ty::Param(vec![tr]), WRITTEN)
        };
        self.method_call(recv, &name, &rest, span)
    }

    /// Arguments of `T::m(recv, rest..)` as a method call's: without the receiver.
    pub(super) fn shift_args(&self, args: &[Typed]) -> Vec<Typed> {
        args.iter().skip(1).cloned().collect()
    }

    /// `Type::<A, B>::f(..)`: the type with the arguments written, which bind the impl's
    /// parameters as a receiver's would (`Tensor::<Cpu, Int>::from_data`).
    fn turbofish_self(&self, path: &PathIr) -> Option<Ty> {
        let [prefix @ .., _] = &*path.segs else {
            return None;
        };
        prefix.last().filter(|s| !s.args().is_empty())?;
        let written = crate::parse::ir::TypeRef::Path(PathIr {
            global: path.global,
            segs: prefix.into(),
            qself: None,
        });
        Some(self.ty(&written)).filter(|t| matches!(t, Ty::Adt(..)))
    }

    /// `Type::f(args)` where a parameter is written with `Self` (`cat(tensors: Vec<Self>)`):
    /// the argument's type there, which binds the impl's parameters as a receiver's would.
    fn self_in_args(&self, f: FnId, args: &[Typed]) -> Option<Ty> {
        let fd = self.map.func(f);
        let (ir, c) = (fd.ir?, fd.self_canon.as_deref()?);
        if fd.impl_generics.is_empty() {
            return None;
        }
        let mut with_self = ir
            .params
            .iter()
            .zip(args)
            .filter(|(p, _)| mentions_self(&p.ty));
        with_self.find_map(|(_, (t, _))| {
            let inner = match t {
                Ty::Adt(v, a) if v == "std::Vec" || v == "std::Option" => a.first()?.clone(),
                Ty::Slice(e) | Ty::Array(e) => (**e).clone(),
                t => t.clone(),
            };
            self.map.deref_chain(&inner).into_iter().find(|t| t.is(c))
        })
    }

    /// The first bound with type arguments of type parameter `name` (`K: BasicOps<B>`):
    /// its trait, and its arguments as this fn knows them (`B` bound to `Cpu`).
    fn bound_trait_args(&self, name: &str) -> Option<(String, Vec<Ty>)> {
        let g = self
            .generics
            .iter()
            .find(|g| g.name == name && !g.is_const)?;
        let bound = g
            .bounds
            .iter()
            .find(|b| b.segs.last().is_some_and(|s| !s.args().is_empty()))?;
        let tr = self
            .map
            .traits(self.module, std::slice::from_ref(bound))
            .pop()?;
        let args = bound
            .segs
            .last()?
            .args()
            .iter()
            .map(|a| self.ty(a))
            .collect();
        Some((tr, args))
    }

    pub(super) fn type_param_or_self(&self, name: &str) -> Option<Ty> {
        if name == "Self" {
            return self.self_ty.clone();
        }
        if let Some((_, t)) = self.ty_params.iter().find(|(n, _)| n == name) {
            return Some(t.clone());
        }
        let g = self
            .generics
            .iter()
            .find(|g| g.name == name && !g.is_const)?;
        Some(Ty::Param(self.map.traits(self.module, &g.bounds)))
    }

    pub(super) fn unresolved_path(&mut self, path: &PathIr, span: SpanIr) -> Typed {
        let names = path.names();
        let prefix_known = names.len() > 1
            && self
                .map
                .resolve_path(self.module, &names[..names.len() - 1], path.global)
                .is_some();
        if !prefix_known {
            self.unresolved(span, format!("cannot resolve `{}`", names.join("::")));
        }
        unknown()
    }

    pub(super) fn call_external(&mut self, segs: &[String], args: &[Typed], span: SpanIr) -> Typed {
        let joined = segs.join("::");
        if let Some(ids) = self.map.builtin.get(&joined) {
            let mut ret = None;
            for &f in ids {
                // A method's receiver is its first argument; a module fn has none.
                let shift = usize::from(self.map.func(f).self_canon.is_some());
                let tag = tags::edge(How::Path, WRITTEN);
                ret.get_or_insert(self.call_fn(f, tag, None, args, span, shift));
            }
            if let Some(r) = ret {
                return r;
            }
        }
        if let Some(r) = self.call_external_trait(segs, args, span) {
            return r;
        }
        self.external_callbacks(segs, args, span);
        let args: Vec<Ty> = args.iter().map(|(t, _)| t.clone()).collect();
        (
            std_assoc_ret(segs, &args).unwrap_or(Ty::Unknown),
            tags::derived(WRITTEN),
        )
    }

    /// `<T as Trait>::m(..)`: the impl of `Trait` for `T`, or the trait's method.
    pub(super) fn call_qualified(
        &mut self,
        q: &crate::parse::ir::TypeRef,
        path: &PathIr,
        args: &[Typed],
        span: SpanIr,
    ) -> Typed {
        let recv = self.ty(q);
        let names = path.names();
        let method = path.last_name();
        let trait_ = self.map.resolve_path(
            self.module,
            &names[..path.qself_pos().min(names.len())],
            path.global,
        );
        // A trait outside the analysed crates is matched by canonical path
        // (`<T as core::ops::Drop>::drop` is the `impl Drop for T`), or by its crate
        // and name (`DefMap::impl_methods`).
        let trait_canon = match &trait_ {
            Some(Def::Trait(t)) => Some(t.clone()),
            Some(Def::External(segs)) => Some(crate::known::canonical_name(segs)),
            _ => None,
        };
        let impl_fn = match (&recv, &trait_canon) {
            (Ty::Adt(c, _), Some(t)) => self.map.impl_methods(c, t, method).first().copied(),
            _ => None,
        };
        match (impl_fn, trait_) {
            (Some(f), _) => self.call_fn(
                f,
                tags::edge(How::Path, WRITTEN),
                Some(&recv),
                args,
                span,
                1,
            ),
            (None, Some(Def::Trait(t))) => self.method_call(
                (Ty::Param(vec![t]), WRITTEN),
                method,
                &self.shift_args(args),
                span,
            ),
            _ => self.method_call((recv, WRITTEN), method, &self.shift_args(args), span),
        }
    }

    /// Records an edge to `f` (unless a condition rules it out) and returns its result type.
    pub(super) fn call_fn(
        &mut self,
        f: FnId,
        tag: Confidence,
        recv: Option<&Ty>,
        args: &[Typed],
        span: SpanIr,
        arg_shift: usize,
    ) -> Typed {
        let fd = self.map.func(f);
        let uncertain = match self.model_verdict(fd, args, arg_shift) {
            Verdict::Never => return (self.ret_type(f, recv), tag),
            Verdict::Waits => None,
            Verdict::Undecided(u) => Some(u),
        };
        let failing = || self.failing.clone().map(|name| Uncertain::Failing { name });
        let uncertain = uncertain.or_else(failing);
        // A modelled fn of an analysed crate: a call that waits reaches the model's sink,
        // not the fn's body (whose other arms this call does not take).
        if let Some(node) = fd.marks.model_node {
            self.edges.push(Edge {
                from: self.from,
                to: node,
                tag,
                site: span,
                uncertain,
                via: Via::default(),
                dropped: None,
                branch: self.branch > 0,
            });
            return (self.ret_type(f, recv), tags::derived(tag));
        }
        let spec = self.spec_for(f, recv, args);
        let via = Via {
            dispatch: (self.via.clone().filter(|_| !fd.is_trait_decl)).map(Box::new),
            callback: self.callback.clone().map(Box::new),
            specialised: spec
                .as_ref()
                .map(|s| self.narrowed(f, s))
                .unwrap_or_default(),
            bound: spec
                .as_ref()
                .map(|s| self.bound_params(f, s))
                .unwrap_or_default(),
        };
        if let Some(spec) = spec {
            self.specs.push((self.edges.len(), spec));
        }
        self.edges.push(Edge {
            from: self.from,
            to: f,
            tag,
            site: span,
            uncertain,
            via,
            dropped: None,
            branch: self.branch > 0,
        });
        (self.ret_type(f, recv), tags::derived(tag))
    }

    pub(super) fn ret_type(&self, f: FnId, recv: Option<&Ty>) -> Ty {
        let fd = self.map.func(f);
        let Some(ir) = fd.ir else {
            return fd
                .self_canon
                .as_deref()
                .and_then(|c| cudarc_ret(c, &fd.name))
                .unwrap_or(Ty::Unknown);
        };
        let Some(ret) = &ir.ret else {
            return Ty::Unknown;
        };
        let generics = super::joined(fd.impl_generics, &ir.generics);
        // The receiver as the impl's self type (behind references and smart pointers),
        // whose arguments bind the impl's parameters: `lock()` on a
        // `DeviceContext<CudaServer>` returns a `DeviceStateGuard<CudaServer>`.
        let own = recv.and_then(|r| {
            let c = fd.self_canon.as_deref()?;
            // The chain starts with the receiver itself, mostly the impl's type already.
            if r.is(c) {
                return Some(r.clone());
            }
            self.map.deref_chain(r).into_iter().find(|t| t.is(c))
        });
        let subst = match (&own, &fd.self_ty) {
            (Some(t), Some(written)) => self.map.bind_params(written, fd.impl_generics, t),
            _ => Vec::new(),
        };
        let self_ty = match (own.as_ref().or(recv), &fd.self_ty) {
            (Some(r), _) if *r != Ty::Unknown => Some(r.clone()),
            (_, Some(t)) => Some(
                self.map
                    .resolve_type(fd.module, t, fd.impl_generics, None, 0),
            ),
            _ => None,
        };
        self.map
            .resolve_type_with(fd.module, ret, &generics, self_ty.as_ref(), &subst, 0)
    }
}

/// Whether a written type names `Self` (`Self`, `&Self`, `Vec<Self>`, `[Self; 2]`).
fn mentions_self(t: &crate::parse::ir::TypeRef) -> bool {
    use crate::parse::ir::TypeRef as T;
    match t {
        T::Path(p) => p
            .segs
            .iter()
            .any(|s| &*s.name == "Self" || s.args().iter().any(mentions_self)),
        T::Ref(t) | T::Slice(t) | T::Array(t) => mentions_self(t),
        T::Tuple(ts) => ts.iter().any(mentions_self),
        _ => false,
    }
}
