//! Expressions typed the way a reader types them: operators through their std trait's
//! impl (`impl Div<f64> for &Tensor`, an edge like a method call's, and its `Output`),
//! indexing (a std container's element or slice, else `impl Index`), ranges, `for`
//! patterns from what the loop iterates, closures (their parameters from the std method
//! they are handed to, their type from their body) and fn items handed to a call.

use super::{Typed, Walker, unknown};
use crate::callgraph::std_types::{closure, closure_params, index_output, item_of};
use crate::callgraph::tags::{self, How, WRITTEN};
use crate::diagnostics::Confidence;
use crate::known::std::{PRIMITIVES, operator_trait};
use crate::parse::ir::{
    Block, Expr, Pat, PathIr, SpanIr, TypeRef, UNSUFFIXED_FLOAT, UNSUFFIXED_INT,
};
use crate::resolve::{Def, FnId, Ty};

fn prim(name: &str) -> Ty {
    Ty::Adt(name.to_owned(), Vec::new())
}

fn is_primitive(t: &Ty) -> bool {
    t.canon().is_some_and(|c| PRIMITIVES.contains(&c))
}

/// An unsuffixed number operand of an operator whose other operand is of a known type that
/// is no primitive (`2.0 * t`, `t / 2`) has rustc's fallback type, `f64` or `i32`: the
/// other operand's impl for it (`impl Mul<Tensor> for f64`) is the one called. Elsewhere
/// its context decides, which the walk does not follow.
fn literal_fallback(args: &[Expr], tys: &mut [Typed]) {
    let known = |t: &Ty| *t != Ty::Unknown && !is_primitive(t);
    for i in 0..tys.len().min(2) {
        let fallback = match &args[i] {
            Expr::Lit(Some(l)) if l == UNSUFFIXED_FLOAT => "f64",
            Expr::Lit(Some(l)) if l == UNSUFFIXED_INT => "i32",
            _ => continue,
        };
        if tys.get(1 - i).is_some_and(|other| known(&other.0)) {
            tys[i] = (prim(fallback), WRITTEN);
        }
    }
}

impl Walker<'_, '_> {
    /// `-a`, `a + b`, `a += b`, `a < b`: the impl of the operator's trait for the left
    /// operand's type (chosen by the right operand's type and the left one's borrow where
    /// several are), else std's own meaning for primitives.
    pub(super) fn operator(&mut self, method: &str, args: &[Expr], span: SpanIr) -> Typed {
        let borrowed = args.first().and_then(|a| self.is_borrow(a));
        let comparison = matches!(method, "eq" | "ne" | "lt" | "le" | "gt" | "ge");
        if !comparison {
            self.move_locals(args);
        }
        let mut tys = self.exprs(args);
        literal_fallback(args, &mut tys);
        let (Some(trait_), Some(lhs)) = (operator_trait(method), tys.first()) else {
            return (prim("bool"), WRITTEN);
        };
        let rhs = tys.get(1).map(|t| &t.0);
        let targets = self.operator_impls(&lhs.0, trait_, method, rhs, borrowed);
        let mut ret = None;
        for f in targets {
            let tag = tags::edge(How::Receiver, lhs.1);
            let r = self.call_fn(f, tag, Some(&lhs.0), &tys[1..], span, 0);
            ret.get_or_insert(r);
        }
        if let Some(r) = ret {
            return r;
        }
        let ty = match (&lhs.0, rhs) {
            _ if comparison => prim("bool"),
            _ if method.ends_with("_assign") => Ty::Unknown,
            (l, _) if is_primitive(l) => l.clone(),
            (Ty::Unknown, Some(r)) if is_primitive(r) => r.clone(),
            _ => Ty::Unknown,
        };
        (ty, tags::derived(lhs.1))
    }

    /// Whether operand `e` is a borrow (`&x`, a parameter taken by reference) or a value
    /// (a temporary of `?` or of another operator); `None` when that is not known.
    fn is_borrow(&self, e: &Expr) -> Option<bool> {
        match e {
            Expr::Ref(_) => Some(true),
            Expr::Try(_) | Expr::Op { .. } | Expr::Lit(_) | Expr::Bool(_) => Some(false),
            Expr::Path(p) if p.segs.len() == 1 && p.qself.is_none() => {
                let l = self.local(p.last_name())?;
                (l.is_param || l.owned).then_some(l.by_ref)
            }
            _ => None,
        }
    }

    /// The impls of operator trait `trait_`'s `method` for a left operand of type `lhs`:
    /// those whose right operand is of `rhs`'s type, else the generic ones (`impl<B:
    /// Borrow<Tensor>> Add<B>`), else all; none for a primitive (`f32`) whose right operand
    /// no analysed impl takes (std's arithmetic); then those for a borrowed or an owned
    /// left operand as `borrowed` says, when some are.
    fn operator_impls(
        &self,
        lhs: &Ty,
        trait_: &str,
        method: &str,
        rhs: Option<&Ty>,
        borrowed: Option<bool>,
    ) -> Vec<FnId> {
        let Some(canon) = lhs.canon() else {
            return Vec::new();
        };
        // `x * 100.0` on an `f32`: std's own arithmetic unless the right operand is known
        // to be what an analysed impl takes (`impl Mul<Tensor> for f32`).
        let rhs_unknown = rhs.is_none_or(|r| *r == Ty::Unknown);
        if rhs_unknown && is_primitive(lhs) {
            return Vec::new();
        }
        let mut ids = self.map.impl_methods(canon, trait_, method);
        let primitive = is_primitive(lhs);
        if let Some(r) = rhs.filter(|_| !rhs_unknown)
            && (ids.len() > 1 || primitive)
        {
            let params: Vec<(FnId, Ty)> = ids.iter().map(|&f| (f, self.rhs_param(f))).collect();
            let same = |t: &Ty| t.canon().is_some() && t.canon() == r.canon();
            let generic = |t: &Ty| matches!(t, Ty::Param(_) | Ty::Unknown);
            let pick = |keep: &dyn Fn(&Ty) -> bool| -> Vec<FnId> {
                params
                    .iter()
                    .filter(|(_, t)| keep(t))
                    .map(|(f, _)| *f)
                    .collect()
            };
            let (exact, generic) = (pick(&same), pick(&generic));
            // None fits: std's own impl for a primitive, else any of them.
            if !exact.is_empty() {
                ids = exact;
            } else if !generic.is_empty() || primitive {
                ids = generic;
            }
        }
        if let Some(b) = borrowed {
            let by_ref = |&f: &FnId| {
                let written = self.map.func(f).self_ty;
                written.is_some_and(|t| matches!(t, TypeRef::Ref(_))) == b
            };
            if ids.iter().any(by_ref) {
                ids.retain(by_ref);
            }
        }
        ids
    }

    /// The type of the first parameter after `self` of fn `f` (an operator's right
    /// operand), with its impl's and its own generics in scope.
    fn rhs_param(&self, f: FnId) -> Ty {
        let fd = self.map.func(f);
        let Some(ir) = fd.ir else {
            return Ty::Unknown;
        };
        let Some(p) = ir.params.first() else {
            return Ty::Unknown;
        };
        let generics = super::joined(fd.impl_generics, &ir.generics);
        self.map.resolve_type(fd.module, &p.ty, &generics, None, 0)
    }

    /// `base[index]`: a std container's element (a slice for a range), else the
    /// `impl Index` of the base's type (an edge to its `index`), through auto-deref.
    pub(super) fn index(&mut self, base: &Expr, index: &Expr, span: SpanIr) -> Typed {
        let (bt, sure) = self.expr(base);
        let it = self.expr(index);
        for t in self.map.deref_chain(&bt) {
            if let Some(out) = index_output(&t, &it.0) {
                return (out, tags::derived(sure));
            }
            let targets = self.operator_impls(&t, "std::Index", "index", Some(&it.0), None);
            if !targets.is_empty() {
                let mut ret = unknown();
                for (i, f) in targets.into_iter().enumerate() {
                    let tag = tags::edge(How::Receiver, sure);
                    let r = self.call_fn(f, tag, Some(&t), std::slice::from_ref(&it), span, 0);
                    if i == 0 {
                        ret = r;
                    }
                }
                return ret;
            }
        }
        (Ty::Unknown, tags::derived(sure))
    }

    /// `a..b` and the other ranges: std's range of the bounds' type.
    pub(super) fn range(&mut self, kind: &str, bounds: &[Expr]) -> Typed {
        let tys = self.exprs(bounds);
        let bound = tys.into_iter().find(|t| t.0 != Ty::Unknown);
        let (b, sure) = bound.unwrap_or_else(unknown);
        (Ty::Adt(format!("std::{kind}"), vec![b]), sure)
    }

    /// `for pat in iter { body }`: the pattern binds what iterating `iter` yields.
    pub(super) fn for_loop(&mut self, pat: &Pat, iter: &Expr, body: &Block) -> Typed {
        let (t, sure) = self.expr(iter);
        let item = self.item_of(&t);
        self.push_scope();
        self.bind_pat(pat, (item, tags::derived(sure)), 0);
        self.block(body);
        self.pop_scope();
        unknown()
    }

    /// What iterating a value of type `t` yields: std's iterables, else the `Item` of
    /// its type's `impl Iterator` or `impl IntoIterator`.
    pub(super) fn item_of(&self, t: &Ty) -> Ty {
        if let Some(item) = item_of(t) {
            return item;
        }
        ["std::Iterator", "std::IntoIterator"]
            .iter()
            .find_map(|tr| self.map.impl_assoc_type(t, tr, "Item"))
            .unwrap_or(Ty::Unknown)
    }

    /// What `recv.collect()` (`sum`, `product`) collects: the items of `recv`, when it is
    /// a std iterator (or iterable).
    pub(super) fn collected_item(&self, recv: &Ty, name: &str) -> Option<Ty> {
        if !matches!(name, "collect" | "sum" | "product") {
            return None;
        }
        self.map.deref_chain(recv).iter().find_map(item_of)
    }

    /// A closure: its parameters typed as written, else as `given` (known as sure as
    /// `sure`); its type says what its body gives.
    pub(super) fn closure(
        &mut self,
        params: &[(Pat, Option<TypeRef>)],
        body: &Expr,
        given: &[Ty],
        sure: Confidence,
    ) -> Typed {
        self.push_scope();
        for (i, (pat, written)) in params.iter().enumerate() {
            let ty = match written {
                Some(t) => (self.ty(t), WRITTEN),
                None => (given.get(i).cloned().unwrap_or(Ty::Unknown), sure),
            };
            self.bind_pat(pat, ty, 0);
        }
        let (ret, c) = self.expr(body);
        self.pop_scope();
        (closure(ret), c)
    }

    /// The arguments of `recv.name(args)`: a closure handed to a std method is walked
    /// with its parameters typed from the receiver (`ts.iter().map(|t| ..)`: `t` is an
    /// item of `ts`), a fn item handed on is called ([`Self::handed_fn`]).
    pub(super) fn method_args(
        &mut self,
        recv: &Typed,
        name: &str,
        args: &[Expr],
        span: SpanIr,
    ) -> Vec<Typed> {
        let detached = args.iter().any(is_handed)
            && self
                .method_callee(&recv.0, name)
                .is_some_and(|(f, _)| self.detaches(f));
        let mut out: Vec<Typed> = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            let t = match a {
                _ if detached && is_handed(a) => self.detached_arg(a),
                Expr::Closure { params, body } => {
                    let given: Vec<Ty> = out.iter().map(|t| t.0.clone()).collect();
                    let chain = self.map.deref_chain(&recv.0);
                    let params_of = |r: &Ty| closure_params(r, name, i, &given);
                    let tys = chain
                        .iter()
                        .find_map(params_of)
                        .or_else(|| {
                            let (f, on) = self.method_callee(&recv.0, name)?;
                            self.fn_bound_params(f, i, Some(&on))
                        })
                        .unwrap_or_default();
                    self.closure(params, body, &tys, tags::derived(recv.1))
                }
                _ => self.arg(a, span),
            };
            out.push(t);
        }
        out
    }

    /// The arguments of the path call `path(args)`: a closure handed to an analysed fn
    /// has its parameters typed from that fn's `Fn(..)` bound.
    pub(super) fn path_args(&mut self, path: &PathIr, args: &[Expr], span: SpanIr) -> Vec<Typed> {
        let callee = match self
            .map
            .resolve_path(self.module, &path.names(), path.global)
        {
            Some(Def::Fn(f)) if path.qself.is_none() => Some(f),
            _ => None,
        };
        let shift = callee
            .and_then(|f| self.map.func(f).ir)
            .map_or(0, |ir| usize::from(ir.self_param.is_some()));
        let detached = callee.is_some_and(|f| self.detaches(f));
        let mut out = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            let t = match (a, callee) {
                _ if detached && is_handed(a) => self.detached_arg(a),
                (Expr::Closure { params, body }, Some(f)) if i >= shift => {
                    let tys = self.fn_bound_params(f, i - shift, None);
                    self.closure(params, body, &tys.unwrap_or_default(), WRITTEN)
                }
                _ => self.arg(a, span),
            };
            out.push(t);
        }
        out
    }

    /// The analysed fn a method call `recv.name(..)` reaches first (for its signature),
    /// and the receiver's type it was found on.
    fn method_callee(&self, recv: &Ty, name: &str) -> Option<(FnId, Ty)> {
        for t in self.map.deref_chain(recv) {
            let found = match &t {
                Ty::Adt(c, _) => self
                    .map
                    .methods
                    .get(c)
                    .and_then(|m| m.get(name))
                    .and_then(|ids| ids.first().copied()),
                Ty::Param(traits) | Ty::Dyn(traits) => {
                    traits.iter().find_map(|tr| self.map.trait_method(tr, name))
                }
                _ => None,
            };
            if let Some(f) = found {
                return Some((f, t));
            }
        }
        None
    }

    /// The parameters of a closure handed as argument `arg` (not counting `self`) to the
    /// analysed fn `f`, from the `Fn(A, ..)` bound of that parameter's type (`task: T`
    /// with `T: FnOnce(&mut S) -> R`, `f: impl Fn(&Tensor)`), with the parameters of
    /// `f`'s impl bound from the receiver's type `recv` (`DeviceHandle<CudaServer>`: `S`).
    fn fn_bound_params(&self, f: FnId, arg: usize, recv: Option<&Ty>) -> Option<Vec<Ty>> {
        let fd = self.map.func(f);
        let ir = fd.ir?;
        let generics = super::joined(fd.impl_generics, &ir.generics);
        let mut ty = &ir.params.get(arg)?.ty;
        while let TypeRef::Ref(inner) = ty {
            ty = inner;
        }
        let bounds: &[PathIr] = match ty {
            TypeRef::ImplTrait(b) | TypeRef::DynTrait(b) => b,
            TypeRef::Path(p) if p.segs.len() == 1 && p.qself.is_none() => {
                let g = generics.iter().find(|g| g.name == p.last_name())?;
                &g.bounds
            }
            _ => return None,
        };
        let inputs = bounds.iter().find_map(|b| {
            let seg = b.segs.last()?;
            let is_fn = matches!(&*seg.name, "Fn" | "FnMut" | "FnOnce");
            is_fn.then(|| seg.args().first()).flatten()
        })?;
        let TypeRef::Tuple(inputs) = inputs else {
            return None;
        };
        let subst = match (recv, fd.self_ty) {
            (Some(r), Some(written)) => self.map.bind_params(written, fd.impl_generics, r),
            _ => Vec::new(),
        };
        let resolve =
            |t: &TypeRef| (self.map).resolve_type_with(fd.module, t, &generics, recv, &subst, 0);
        Some(inputs.iter().map(resolve).collect())
    }

    /// Whether fn `f` has a `detached` model: it runs the closures handed to it later, on
    /// another thread, and returns without waiting for them (`known::models`).
    fn detaches(&self, f: FnId) -> bool {
        (self.map.func(f).marks.model)
            .as_ref()
            .is_some_and(|m| m.detached)
    }

    /// A closure or fn item handed to a `detached` fn: not the caller's code, so neither
    /// its body nor the fn it names is walked (as `std::thread::spawn`'s closure).
    fn detached_arg(&mut self, a: &Expr) -> Typed {
        match a {
            Expr::Closure { .. } => (closure(Ty::Unknown), WRITTEN),
            _ => self.expr(a),
        }
    }

    /// An argument of a call at `span`: a fn item handed on is taken as called there.
    pub(super) fn arg(&mut self, a: &Expr, span: SpanIr) -> Typed {
        match a {
            Expr::Path(p) => {
                self.handed_fn(p, span);
                self.expr(a)
            }
            Expr::Closure { params, body } => self.closure(params, body, &[], WRITTEN),
            _ => self.expr(a),
        }
    }

    /// A path naming a fn (not a local), handed to the call at `span` (`.map(Tensor::relu)`,
    /// `handle.submit(flush)`): the callee is taken to call it, an edge of the caller.
    fn handed_fn(&mut self, p: &PathIr, span: SpanIr) {
        let names = p.names();
        if p.qself.is_some() || (names.len() == 1 && self.local(names[0]).is_some()) {
            return;
        }
        let local = match names.as_slice() {
            [name] => self
                .map
                .local_fns
                .get(&self.from)
                .and_then(|l| l.iter().find(|(n, _)| n == name).map(|&(_, f)| f)),
            _ => None,
        };
        let f = local.or_else(
            || match self.map.resolve_path(self.module, &names, p.global) {
                Some(Def::Fn(f)) if !self.map.func(f).is_trait_decl => Some(f),
                _ => None,
            },
        );
        if let Some(f) = f {
            self.call_fn(f, tags::edge(How::Handed, WRITTEN), None, &[], span, 0);
        }
    }
}

/// An argument that hands code to the callee: a closure, or a path that may name a fn item.
fn is_handed(a: &Expr) -> bool {
    matches!(a, Expr::Closure { .. } | Expr::Path(_))
}
