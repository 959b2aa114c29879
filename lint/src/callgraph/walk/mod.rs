//! Walking one fn body: calls resolved by path or from the receiver's type, which is
//! inferred on the way (parameters, `let` annotations, constructors, fields, return
//! types, `?`, auto-deref). Closures and async blocks are part of the fn.

use super::known::{cudarc_ret, std_assoc_ret, std_method_ret};
use super::{Edge, Unresolved};
use crate::diagnostics::Confidence;
use crate::parse::ir::{Block, Expr, GenericParam, Pat, PathIr, SpanIr, Stmt};
use crate::resolve::{Def, DefMap, FnId, ModId, Ty};
use crate::sinks::{Condition, NAME_ONLY_OK};

/// Name-only matches with more candidates than this are counted as unresolved.
const NAME_ONLY_CAP: usize = 8;
/// Methods every type has through std traits: never matched by name alone.
const STD_METHODS: &[&str] = &[
    "clone",
    "fmt",
    "eq",
    "ne",
    "cmp",
    "partial_cmp",
    "hash",
    "drop",
    "deref",
    "deref_mut",
    "from",
    "into",
    "try_from",
    "try_into",
    "default",
    "next",
    "as_ref",
    "as_mut",
    "to_string",
    "to_owned",
    "borrow",
    "borrow_mut",
    "len",
    "is_empty",
    "iter",
    "iter_mut",
    "into_iter",
    "map",
    "unwrap",
    "expect",
];
/// Inherent methods of std types: a local trait impl for a std type never shadows them.
const STD_INHERENT: &[&str] = &[
    "get",
    "get_mut",
    "insert",
    "remove",
    "push",
    "pop",
    "contains",
    "contains_key",
    "entry",
    "extend",
    "clear",
    "read",
    "write",
    "lock",
    "try_lock",
    "as_slice",
    "as_ptr",
    "as_mut_ptr",
    "len",
    "is_empty",
    "iter",
    "keys",
    "values",
    "to_vec",
    "split_at",
    "first",
    "last",
    "sort",
    "dedup",
    "retain",
    "truncate",
    "reserve",
    "with_capacity",
];

type Typed = (Ty, Confidence);

fn unknown() -> Typed {
    (Ty::Unknown, Confidence::Exact)
}

struct Local {
    name: String,
    ty: Typed,
    is_param: bool,
}

struct Walker<'m, 'a> {
    map: &'m DefMap<'a>,
    from: FnId,
    module: ModId,
    self_ty: Option<Ty>,
    generics: Vec<GenericParam>,
    scopes: Vec<Vec<Local>>,
    edges: Vec<Edge>,
    unresolved: Vec<Unresolved>,
    /// While resolving a dispatched call: how it dispatches (for the hop's note).
    via: Option<String>,
}

/// The calls of fn `f`.
pub fn walk_fn(map: &DefMap<'_>, f: FnId) -> (Vec<Edge>, Vec<Unresolved>) {
    let fd = map.func(f);
    let Some(ir) = fd.ir else {
        return Default::default();
    };
    let Some(body) = &ir.body else {
        return Default::default();
    };
    let mut generics = fd.impl_generics.to_vec();
    generics.extend(ir.generics.iter().cloned());
    let self_ty = match (&fd.self_ty, &fd.trait_) {
        (Some(t), _) => Some(map.resolve_type(fd.module, t, &generics, None, 0)),
        (None, Some(tr)) if fd.is_trait_decl => Some(Ty::Param(vec![tr.clone()])),
        _ => None,
    };
    let mut w = Walker {
        map,
        from: f,
        module: fd.module,
        self_ty,
        generics,
        scopes: vec![Vec::new()],
        edges: Vec::new(),
        unresolved: Vec::new(),
        via: None,
    };
    if let Some(st) = &w.self_ty {
        w.bind("self", (st.clone(), Confidence::Exact), true);
    }
    for p in &ir.params {
        let ty = w
            .map
            .resolve_type(w.module, &p.ty, &w.generics, w.self_ty.as_ref(), 0);
        if let Some(name) = &p.name {
            w.bind(name, (ty, Confidence::Exact), true);
        }
    }
    w.block(body);
    (w.edges, w.unresolved)
}

impl Walker<'_, '_> {
    fn bind(&mut self, name: &str, ty: Typed, is_param: bool) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.push(Local {
                name: name.to_owned(),
                ty,
                is_param,
            });
        }
    }

    fn local(&self, name: &str) -> Option<&Local> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|s| s.iter().rev())
            .find(|l| l.name == name)
    }

    fn edge(&mut self, to: FnId, tag: Confidence, site: SpanIr) {
        self.edges.push(Edge {
            from: self.from,
            to,
            tag,
            site,
            uncertain: None,
            via: None,
        });
    }

    fn unresolved(&mut self, site: SpanIr, what: String) {
        self.unresolved.push(Unresolved { site, what });
    }

    fn block(&mut self, b: &Block) -> Typed {
        self.scopes.push(Vec::new());
        let mut last = unknown();
        for s in &b.stmts {
            last = match s {
                Stmt::Let {
                    name,
                    pat,
                    ty,
                    init,
                    diverge,
                    ..
                } => {
                    let typed = self.let_stmt(ty.as_ref(), init.as_deref(), diverge.as_deref());
                    match (name, pat) {
                        (Some(n), _) => self.bind(n, typed, false),
                        (None, Some(p)) => self.bind_pat(p, typed, 0),
                        _ => {}
                    }
                    unknown()
                }
                Stmt::Expr(e) => self.expr(e),
                Stmt::Item(_) => unknown(),
            };
        }
        let scope = self.scopes.pop().unwrap_or_default();
        if let Some(close) = b.close {
            self.drops(&scope, b.stmts.last(), close);
        }
        last
    }

    /// Walks a `let`'s initializer; returns the type its bindings get.
    fn let_stmt(
        &mut self,
        ty: Option<&crate::parse::ir::TypeRef>,
        init: Option<&Expr>,
        diverge: Option<&Expr>,
    ) -> Typed {
        let inferred = init.map(|e| self.expr(e));
        if let Some(d) = diverge {
            self.expr(d);
        }
        match (ty, inferred) {
            (Some(t), _) => (
                self.map
                    .resolve_type(self.module, t, &self.generics, self.self_ty.as_ref(), 0),
                Confidence::Exact,
            ),
            (None, Some((t, c))) => (t, c.max(Confidence::Inferred)),
            (None, None) => unknown(),
        }
    }

    /// Binds the names a pattern introduces, typed from the matched value where the
    /// pattern says how (tuples, enum variants, `Some`/`Ok`/`Err`, struct fields).
    fn bind_pat(&mut self, pat: &Pat, ty: Typed, depth: usize) {
        if depth > 64 {
            return;
        }
        let d = depth + 1;
        match pat {
            Pat::Bind(name, sub) => {
                if let Some(sub) = sub {
                    self.bind_pat(sub, ty.clone(), d);
                }
                self.bind(name, ty, false);
            }
            Pat::Tuple(ps) => {
                let inner = self.map.deref_chain(&ty.0).pop().unwrap_or(Ty::Unknown);
                for (i, p) in ps.iter().enumerate() {
                    let t = match &inner {
                        Ty::Tuple(ts) => ts.get(i).cloned().unwrap_or(Ty::Unknown),
                        _ => Ty::Unknown,
                    };
                    self.bind_pat(p, (t, ty.1), d);
                }
            }
            Pat::TupleStruct(path, ps) => {
                let fields = self.pattern_fields(path, &ty.0);
                for (i, p) in ps.iter().enumerate() {
                    let t = fields.get(i).map_or(Ty::Unknown, |(_, t)| t.clone());
                    self.bind_pat(p, (t, ty.1.max(Confidence::Inferred)), d);
                }
            }
            Pat::Struct(path, fs) => {
                let fields = self.pattern_fields(path, &ty.0);
                for (name, p) in fs {
                    let t = fields
                        .iter()
                        .find(|(n, _)| n == name)
                        .map_or(Ty::Unknown, |(_, t)| t.clone());
                    self.bind_pat(p, (t, ty.1.max(Confidence::Inferred)), d);
                }
            }
            Pat::Or(p) => self.bind_pat(p, ty, d),
            Pat::Other => {}
        }
    }

    /// The fields a variant or struct pattern destructures, given the matched type.
    fn pattern_fields(&self, path: &PathIr, scrutinee: &Ty) -> Vec<(String, Ty)> {
        let inner = self.map.deref_chain(scrutinee).pop().unwrap_or(Ty::Unknown);
        let last = path.last_name();
        match last {
            "Some" | "Ok" => return vec![("0".to_owned(), inner.arg(0))],
            "Err" => return vec![("0".to_owned(), inner.arg(1))],
            _ => {}
        }
        let names = path.names();
        let owner = match self.map.resolve_path(self.module, &names, path.global) {
            Some(Def::Type(c)) => return self.map.variant_fields(&c, None),
            _ if names.len() > 1 => {
                match self
                    .map
                    .resolve_path(self.module, &names[..names.len() - 1], path.global)
                {
                    Some(Def::Type(c)) => Some(c),
                    _ if names == ["Self", last] => self
                        .self_ty
                        .as_ref()
                        .and_then(|t| t.canon().map(str::to_owned)),
                    _ => None,
                }
            }
            _ => inner.canon().map(str::to_owned),
        };
        owner.map_or_else(Vec::new, |c| self.map.variant_fields(&c, Some(last)))
    }

    /// Locals with a `Drop` impl are dropped at the block's end (unless it returns them).
    fn drops(&mut self, scope: &[Local], tail: Option<&Stmt>, close: SpanIr) {
        let returned = match tail {
            Some(Stmt::Expr(Expr::Path(p))) if p.segs.len() == 1 => Some(p.last_name()),
            _ => None,
        };
        for l in scope
            .iter()
            .rev()
            .filter(|l| !l.is_param && Some(l.name.as_str()) != returned)
        {
            if let Some(&d) = l.ty.0.canon().and_then(|c| self.map.drops.get(c)) {
                self.edge(d, l.ty.1, close);
            }
        }
    }

    fn exprs(&mut self, es: &[Expr]) -> Vec<Typed> {
        es.iter().map(|e| self.expr(e)).collect()
    }

    fn expr(&mut self, e: &Expr) -> Typed {
        match e {
            Expr::CallPath { path, args, span } => {
                let args = self.exprs(args);
                self.call_path(path, &args, *span)
            }
            Expr::CallValue { callee, args, span } => self.call_value(callee, args, *span),
            Expr::MethodCall {
                recv,
                name,
                args,
                span,
            } => {
                let recv = self.expr(recv);
                let args = self.exprs(args);
                self.method_call(recv, name, &args, *span)
            }
            Expr::Path(p) => self.path_value(p),
            Expr::Field { base, name } => {
                let (bt, c) = self.expr(base);
                (self.field(&bt, name), c.max(Confidence::Inferred))
            }
            Expr::Try(inner) => {
                let (t, c) = self.expr(inner);
                (t.unwrap_once(), c)
            }
            Expr::Await(inner) => self.expr(inner),
            Expr::Match { scrutinee, arms } => {
                let st = self.expr(scrutinee);
                let mut result = unknown();
                for (pat, guard, body) in arms {
                    self.scopes.push(Vec::new());
                    self.bind_pat(pat, st.clone(), 0);
                    if let Some(g) = guard {
                        self.expr(g);
                    }
                    let t = self.expr(body);
                    if result.0 == Ty::Unknown {
                        result = t;
                    }
                    self.scopes.pop();
                }
                result
            }
            Expr::Let { pat, expr } => {
                let t = self.expr(expr);
                self.bind_pat(pat, t, 0);
                unknown()
            }
            Expr::Struct { path, fields } => {
                self.exprs(fields);
                (self.type_of_path(path), Confidence::Exact)
            }
            Expr::Block(b) => self.block(b),
            Expr::Closure(body) => {
                self.expr(body);
                unknown()
            }
            Expr::Cast { expr, ty } => {
                self.expr(expr);
                (
                    self.map.resolve_type(
                        self.module,
                        ty,
                        &self.generics,
                        self.self_ty.as_ref(),
                        0,
                    ),
                    Confidence::Exact,
                )
            }
            Expr::Escape => unknown(),
            Expr::Other(kids) => {
                self.exprs(kids);
                unknown()
            }
        }
    }

    fn call_value(&mut self, callee: &Expr, args: &[Expr], span: SpanIr) -> Typed {
        self.expr(callee);
        self.exprs(args);
        self.unresolved(
            span,
            "a call through a value (closure or fn pointer)".to_owned(),
        );
        unknown()
    }

    fn path_value(&self, p: &PathIr) -> Typed {
        if p.segs.len() == 1
            && p.qself.is_none()
            && let Some(l) = self.local(p.last_name())
        {
            return l.ty.clone();
        }
        (self.type_of_path(p), Confidence::Exact)
    }

    fn type_of_path(&self, p: &PathIr) -> Ty {
        if p.names() == ["Self"] {
            return self.self_ty.clone().unwrap_or(Ty::Unknown);
        }
        match self.map.resolve_path(self.module, &p.names(), p.global) {
            Some(Def::Type(c)) => Ty::Adt(c, Vec::new()),
            _ => Ty::Unknown,
        }
    }

    fn field(&self, base: &Ty, name: &str) -> Ty {
        for t in self.map.deref_chain(base) {
            match &t {
                Ty::Adt(c, _) => {
                    let f = self.map.field_type(c, name);
                    if f != Ty::Unknown {
                        return f;
                    }
                }
                Ty::Tuple(ts) => {
                    if let Some(t) = name.parse::<usize>().ok().and_then(|i| ts.get(i)) {
                        return t.clone();
                    }
                }
                _ => {}
            }
        }
        Ty::Unknown
    }

    fn call_path(&mut self, path: &PathIr, args: &[Typed], span: SpanIr) -> Typed {
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
        if let Some(q) = &path.qself {
            return self.call_qualified(q, path, args, span);
        }
        if let [first, method] = names.as_slice()
            && let Some(recv) = self.type_param_or_self(first)
        {
            let rest = self.shift_args(args);
            return self.method_call((recv, Confidence::Exact), method, &rest, span);
        }
        match self.map.resolve_path(self.module, &names, path.global) {
            Some(Def::Fn(f)) if self.map.func(f).is_trait_decl => {
                self.call_trait_path(f, args, span)
            }
            Some(Def::Fn(f)) => self.call_fn(f, Confidence::Exact, None, args, span, 0),
            Some(Def::Type(c)) => (Ty::Adt(c, Vec::new()), Confidence::Exact),
            Some(Def::External(segs)) => self.call_external(&segs, args, span),
            Some(_) => unknown(),
            None => self.unresolved_path(path, span),
        }
    }

    /// `Trait::m(x, ..)`: a method call on `x` through `Trait`.
    fn call_trait_path(&mut self, decl: FnId, args: &[Typed], span: SpanIr) -> Typed {
        let fd = self.map.func(decl);
        let (name, tr) = (fd.name.clone(), fd.trait_.clone().unwrap_or_default());
        let recv = args.first().cloned().unwrap_or_else(unknown);
        let rest = self.shift_args(args);
        let has_impl = self.map.deref_chain(&recv.0).iter().any(|t| {
            t.canon()
                .is_some_and(|c| self.map.traits_of.get(c).is_some_and(|ts| ts.contains(&tr)))
        });
        let recv = if has_impl {
            recv
        } else {
            (Ty::Param(vec![tr]), Confidence::Exact)
        };
        self.method_call(recv, &name, &rest, span)
    }

    /// Arguments of `T::m(recv, rest..)` as a method call's: without the receiver.
    fn shift_args(&self, args: &[Typed]) -> Vec<Typed> {
        args.iter().skip(1).cloned().collect()
    }

    fn type_param_or_self(&self, name: &str) -> Option<Ty> {
        if name == "Self" {
            return self.self_ty.clone();
        }
        let g = self.generics.iter().find(|g| g.name == name)?;
        Some(Ty::Param(self.map.traits(self.module, &g.bounds)))
    }

    fn unresolved_path(&mut self, path: &PathIr, span: SpanIr) -> Typed {
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

    fn call_external(&mut self, segs: &[String], args: &[Typed], span: SpanIr) -> Typed {
        let joined = segs.join("::");
        if let Some(&f) = self.map.builtin.get(&joined) {
            return self.call_fn(f, Confidence::Exact, None, args, span, 1);
        }
        let args: Vec<Ty> = args.iter().map(|(t, _)| t.clone()).collect();
        (
            std_assoc_ret(segs, &args).unwrap_or(Ty::Unknown),
            Confidence::Inferred,
        )
    }

    /// `<T as Trait>::m(..)`: the impl of `Trait` for `T`, or the trait's method.
    fn call_qualified(
        &mut self,
        q: &crate::parse::ir::TypeRef,
        path: &PathIr,
        args: &[Typed],
        span: SpanIr,
    ) -> Typed {
        let recv = self
            .map
            .resolve_type(self.module, q, &self.generics, self.self_ty.as_ref(), 0);
        let names = path.names();
        let method = path.last_name();
        let trait_ = self.map.resolve_path(
            self.module,
            &names[..path.qself_pos.min(names.len())],
            path.global,
        );
        let impl_fn = match (&recv, &trait_) {
            (Ty::Adt(c, _), Some(Def::Trait(t))) => self
                .map
                .methods
                .get(c)
                .and_then(|m| m.get(method))
                .and_then(|ids| {
                    ids.iter()
                        .copied()
                        .find(|&f| self.map.func(f).trait_.as_deref() == Some(t.as_str()))
                }),
            _ => None,
        };
        match (impl_fn, trait_) {
            (Some(f), _) => self.call_fn(f, Confidence::Exact, Some(&recv), args, span, 1),
            (None, Some(Def::Trait(t))) => self.method_call(
                (Ty::Param(vec![t]), Confidence::Exact),
                method,
                &self.shift_args(args),
                span,
            ),
            _ => self.method_call(
                (recv, Confidence::Exact),
                method,
                &self.shift_args(args),
                span,
            ),
        }
    }

    fn method_call(&mut self, recv: Typed, name: &str, args: &[Typed], span: SpanIr) -> Typed {
        let (targets, known) = self.method_targets(&recv.0, name);
        let via = self.via.take();
        let mut ret = None;
        for (f, tag) in &targets {
            let tag = if *tag == Confidence::NameOnly {
                Confidence::NameOnly
            } else {
                (*tag).max(recv.1)
            };
            self.via = via.clone();
            let r = self.call_fn(*f, tag, Some(&recv.0), args, span, 0);
            self.via = None;
            ret.get_or_insert(r);
        }
        if let Some(r) = ret {
            return r;
        }
        if !known && recv.0 == Ty::Unknown && !STD_METHODS.contains(&name) {
            self.unresolved(span, format!("method `{name}` on a value of unknown type"));
        }
        let chain = self.map.deref_chain(&recv.0);
        let ty = std_method_ret(&recv.0, name)
            .filter(|t| *t != Ty::Unknown)
            .or_else(|| {
                chain
                    .iter()
                    .find_map(|t| std_method_ret(t, name).filter(|t| *t != Ty::Unknown))
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
    fn method_targets(&mut self, recv: &Ty, name: &str) -> (Vec<(FnId, Confidence)>, bool) {
        for t in self.map.deref_chain(recv) {
            match &t {
                Ty::Adt(c, _) if c.starts_with("std::") && STD_INHERENT.contains(&name) => {
                    return (Vec::new(), true);
                }
                Ty::Adt(c, _) => {
                    if let Some(ids) = self.map.methods.get(c).and_then(|m| m.get(name)) {
                        return (ids.iter().map(|&f| (f, Confidence::Exact)).collect(), true);
                    }
                    if let Some(f) = self.provided_method(c, name) {
                        return (vec![(f, Confidence::Exact)], true);
                    }
                }
                Ty::Param(traits) | Ty::Dyn(traits) => {
                    let targets = self.dispatch(traits, name);
                    let impls = targets
                        .iter()
                        .filter(|(f, _)| !self.map.func(*f).is_trait_decl)
                        .count();
                    let tr = targets
                        .first()
                        .and_then(|(f, _)| self.map.func(*f).trait_.clone())
                        .unwrap_or_default();
                    self.via = Some(format!(
                        "dispatched through `{tr}` to one of its {impls} impls"
                    ));
                    return (targets, true);
                }
                Ty::Unknown => return (self.name_only(name), false),
                _ => return (Vec::new(), true),
            }
        }
        (Vec::new(), true)
    }

    /// A provided trait method that type `c` inherits (its impl does not override it).
    fn provided_method(&self, c: &str, name: &str) -> Option<FnId> {
        let traits = self.map.traits_of.get(c)?;
        traits.iter().find_map(|t| self.map.trait_method(t, name))
    }

    /// A call through a trait bound or `dyn`: the trait's method and every impl of it
    /// (only the method when it is itself a sink).
    fn dispatch(&self, traits: &[String], name: &str) -> Vec<(FnId, Confidence)> {
        let mut out = Vec::new();
        for tr in traits {
            if let Some(decl) = self.map.trait_method(tr, name) {
                out.push((decl, Confidence::Exact));
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
                    out.push((imp, Confidence::Inferred));
                }
                break;
            }
        }
        out
    }

    fn name_only(&self, name: &str) -> Vec<(FnId, Confidence)> {
        if STD_METHODS.contains(&name) {
            return Vec::new();
        }
        let cands: Vec<FnId> = self
            .map
            .by_name
            .get(name)
            .into_iter()
            .flatten()
            .copied()
            .filter(|&f| self.map.func(f).ir.is_some() || NAME_ONLY_OK.contains(&name))
            .collect();
        if cands.len() > NAME_ONLY_CAP {
            return Vec::new();
        }
        cands
            .into_iter()
            .map(|f| (f, Confidence::NameOnly))
            .collect()
    }

    /// Records an edge to `f` (unless a condition rules it out) and returns its result type.
    fn call_fn(
        &mut self,
        f: FnId,
        tag: Confidence,
        recv: Option<&Ty>,
        args: &[Typed],
        span: SpanIr,
        arg_shift: usize,
    ) -> Typed {
        let fd = self.map.func(f);
        let mut uncertain = None;
        if let Some(Condition::PageableDst { arg }) = fd.marks.condition {
            match args.get(arg + arg_shift).and_then(|(t, _)| t.is_pageable()) {
                Some(true) => {}
                Some(false) => return (self.ret_type(f, recv), tag),
                None => {
                    uncertain = Some(format!(
                        "the destination's type is unknown: `{}` blocks only when it is pageable host memory",
                        fd.name
                    ))
                }
            }
        }
        self.edges.push(Edge {
            from: self.from,
            to: f,
            tag,
            site: span,
            uncertain,
            via: if fd.is_trait_decl {
                None
            } else {
                self.via.clone()
            },
        });
        (self.ret_type(f, recv), tag.max(Confidence::Inferred))
    }

    fn ret_type(&self, f: FnId, recv: Option<&Ty>) -> Ty {
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
        let mut generics = fd.impl_generics.to_vec();
        generics.extend(ir.generics.iter().cloned());
        let self_ty = match (recv, &fd.self_ty) {
            (Some(r), _) if *r != Ty::Unknown => Some(r.clone()),
            (_, Some(t)) => Some(
                self.map
                    .resolve_type(fd.module, t, fd.impl_generics, None, 0),
            ),
            _ => None,
        };
        self.map
            .resolve_type(fd.module, ret, &generics, self_ty.as_ref(), 0)
    }
}
