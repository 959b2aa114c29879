//! Walking one fn body: calls resolved by path or from the receiver's type, which is
//! inferred on the way (parameters, `let` annotations, constructors, fields, return
//! types, `?`, auto-deref). Closures and async blocks are part of the fn.

mod blanket;
mod branches;
mod calls;
mod drops;
mod exits;
mod external;
mod formats;
mod locals;
mod methods;
mod models;
mod narrow;
mod ops;
mod patterns;
mod values;

use super::{Callback, Dispatch, Dropped, Edge, Spec, Unresolved, Via, Walked};
use crate::callgraph::std_types::{collect_into, fill_holes};
use crate::callgraph::tags::{self, WRITTEN};
use crate::diagnostics::Confidence;
use crate::parse::ir::{Block, Expr, GenericParam, Pat, PathIr, SpanIr, Stmt};
use crate::resolve::{Def, DefMap, FnId, ModId, Ty};
use std::borrow::Cow;

/// Name-only matches with more candidates than this are counted as unresolved.
const NAME_ONLY_CAP: usize = 8;
type Typed = (Ty, Confidence);

fn unknown() -> Typed {
    (Ty::Unknown, WRITTEN)
}

struct Local {
    name: String,
    ty: Typed,
    is_param: bool,
    /// A parameter taken by reference (`&T`, `&self`): `drop` on it drops nothing.
    by_ref: bool,
    /// Moved into `drop(x)`: not dropped again at the end of its scope.
    moved: bool,
    /// Known to hold its value, not a borrow (a struct literal, a `let` with a written
    /// non-reference type): dropping it drops its fields too (types erase references,
    /// so a value of unknown origin may be a borrow, whose fields are not dropped).
    owned: bool,
}

struct Walker<'m, 'a> {
    map: &'m DefMap<'a>,
    from: FnId,
    module: ModId,
    self_ty: Option<Ty>,
    generics: Vec<GenericParam>,
    /// Type parameters bound to concrete types (a specialised node).
    ty_params: Vec<(String, Ty)>,
    scopes: Vec<Vec<Local>>,
    /// Where each name is bound, innermost last: (scope, position) in `scopes`. Looking
    /// a name up is then constant-time, not a scan of every local in scope (a body of
    /// n `let`s naming n paths was quadratic).
    bound: crate::resolve::NameMap<Vec<(u32, u32)>>,
    edges: Vec<Edge>,
    /// The edges (by index) whose callee is to be specialised, and to what.
    specs: Vec<(usize, Spec)>,
    unresolved: Vec<Unresolved>,
    /// While resolving a dispatched call: how it dispatches (for the hop's note).
    via: Option<Dispatch>,
    /// While recording the edges of a call into a crate that is not analysed: why.
    callback: Option<Callback>,
    /// While resolving a provided method on a known type: that type.
    spec: Option<Ty>,
    /// The type a `let` annotation gives its initializer (`let v: Vec<_> = it.collect()`),
    /// taken by the next expression walked.
    expected: Option<Ty>,
    /// While resolving a call whose name a conditional model has: its arguments' shapes.
    arg_shapes: Vec<models::ArgShape>,
    /// While resolving a call: what its arguments (and a method call's receiver) are
    /// known to hold (`values.rs`).
    arg_values: Vec<Option<crate::resolve::Known>>,
    recv_values: Option<crate::resolve::Known>,
    /// The parameters this node knows constant values of, by name (`values.rs`).
    values: Vec<(String, crate::resolve::Known)>,
    /// While walking the message of a macro that builds an error value or panics: its name
    /// (the calls made there are `Uncertain::Failing`).
    failing: Option<String>,
    /// How many branches not known to be taken enclose the walk here (`values.rs`).
    branch: u32,
    /// The trait and its type arguments of the bound a `K::m(..)` call goes through
    /// (`K: BasicOps<B>` with `B` known): they bind the parameters of the impl it reaches.
    bound_args: Option<(String, Vec<Ty>)>,
    /// The last method call's callees take their receiver by value (`x.finish()` with
    /// `fn finish(self)`): a local receiver is moved into it.
    consumed: bool,
}

/// The calls of fn `f`.
pub(super) fn walk_fn(map: &DefMap<'_>, f: FnId, bodies: &super::Bodies) -> Walked {
    let fd = map.func(f);
    crate::panics::failpoint("walk", &fd.name);
    let Some(ir) = fd.ir else {
        return Default::default();
    };
    let Some(body) = bodies.of(ir) else {
        return Default::default();
    };
    let generics = joined(fd.impl_generics, &ir.generics).into_owned();
    // A node specialised to concrete types for its type parameters (see
    // `callgraph::specialise`) resolves them so: `R::Server` is that impl's server.
    let ty_params = map.param_specs.get(&f).cloned().unwrap_or_default();
    let self_ty = match (&fd.self_ty, &fd.trait_) {
        _ if fd.self_override.is_some() => fd.self_override.clone(),
        (Some(t), _) => Some(map.resolve_type_with(fd.module, t, &generics, None, &ty_params, 0)),
        (None, Some(tr)) if fd.is_trait_decl => Some(Ty::Param(vec![tr.clone()])),
        _ => None,
    };
    let mut w = Walker {
        map,
        from: f,
        module: fd.module,
        self_ty,
        generics,
        ty_params,
        scopes: vec![Vec::new()],
        bound: Default::default(),
        edges: Vec::new(),
        specs: Vec::new(),
        unresolved: Vec::new(),
        via: None,
        callback: None,
        spec: None,
        expected: None,
        arg_shapes: Vec::new(),
        arg_values: Vec::new(),
        recv_values: None,
        values: map.value_specs.get(&f).cloned().unwrap_or_default(),
        failing: None,
        branch: 0,
        consumed: false,
        bound_args: None,
    };
    if let Some(st) = &w.self_ty {
        let by_ref = ir.self_param != Some(false);
        w.bind_param("self", (st.clone(), WRITTEN), by_ref);
    }
    let narrowed = map.arg_specs.get(&f).map(Vec::as_slice).unwrap_or_default();
    for (i, p) in ir.params.iter().enumerate() {
        // A parameter the caller passed a concrete type for (a specialised node) has it.
        let ty = match narrowed.iter().find(|(j, ..)| *j == i) {
            Some((_, t, c)) => (t.clone(), *c),
            None => (w.ty(&p.ty), WRITTEN),
        };
        if let Some(name) = &p.name {
            let by_ref = matches!(p.ty, crate::parse::ir::TypeRef::Ref(_));
            w.bind_param(name, ty, by_ref);
        }
    }
    w.block(body);
    w.drop_params(body);
    Walked {
        edges: w.edges,
        specs: w.specs,
        unresolved: w.unresolved,
    }
}

/// An impl's generic parameters followed by its fn's, cloned only when both have some
/// (a call's return type is resolved with them at every call).
fn joined<'g>(outer: &'g [GenericParam], own: &'g [GenericParam]) -> Cow<'g, [GenericParam]> {
    match (outer.is_empty(), own.is_empty()) {
        (_, true) => Cow::Borrowed(outer),
        (true, false) => Cow::Borrowed(own),
        (false, false) => Cow::Owned(outer.iter().chain(own).cloned().collect()),
    }
}

impl Walker<'_, '_> {
    /// A type written in the body, with the generics, `Self` and bound parameters in scope.
    fn ty(&self, t: &crate::parse::ir::TypeRef) -> Ty {
        let self_ty = self.self_ty.as_ref();
        self.map
            .resolve_type_with(self.module, t, &self.generics, self_ty, &self.ty_params, 0)
    }

    /// An edge to a `Drop` impl: `what`, whose type is known as sure as `ty`, is
    /// dropped at `site`.
    fn drop_edge(&mut self, to: FnId, ty: Confidence, site: SpanIr, what: Dropped) {
        self.edges.push(Edge {
            from: self.from,
            to,
            tag: tags::edge(tags::How::Drop, ty),
            site,
            uncertain: None,
            via: Via::default(),
            dropped: Some(what),
            branch: self.branch > 0,
        });
    }

    fn unresolved(&mut self, site: SpanIr, what: String) {
        self.unresolved.push(Unresolved { site, what });
    }

    fn block(&mut self, b: &Block) -> Typed {
        self.push_scope();
        let mut last = unknown();
        for s in &b.stmts {
            last = match s {
                Stmt::Let(l) => {
                    let crate::parse::ir::LetStmt {
                        name,
                        pat,
                        ty,
                        init,
                        diverge,
                        span,
                    } = &**l;
                    let typed = self.let_stmt(ty.as_ref(), init.as_deref(), diverge.as_deref());
                    // `let r = p;` moves `p` into `r` (`let _ = p;` moves nothing).
                    if name.is_some() || pat.as_deref().is_some_and(|p| *p != Pat::Wild) {
                        self.move_locals(
                            init.as_deref()
                                .map(std::slice::from_ref)
                                .unwrap_or_default(),
                        );
                    }
                    match (name, pat) {
                        (Some(n), _) => {
                            self.bind(n, typed, false);
                            let owned = matches!(init.as_deref(), Some(Expr::Struct { .. }))
                                || ty.as_ref().is_some_and(|t| {
                                    !matches!(t, crate::parse::ir::TypeRef::Ref(_))
                                });
                            if let Some(l) = self.local_mut(n) {
                                l.owned = owned;
                            }
                        }
                        (None, Some(p)) if **p == Pat::Wild => {
                            self.let_wild(init.as_deref(), &typed, *span)
                        }
                        (None, Some(p)) => self.bind_pat(p, typed, 0),
                        _ => {}
                    }
                    unknown()
                }
                Stmt::Expr(e) => self.expr(e),
            };
        }
        let scope = self.pop_scope();
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
        let written = ty.map(|t| self.ty(t));
        self.expected = written.clone();
        let inferred = init.map(|e| self.expr(e));
        self.expected = None;
        if let Some(d) = diverge {
            self.in_branch(true, |w| w.expr(d));
        }
        match (written, inferred) {
            // `let v: Vec<_> = ..`: the holes of the annotation are the initializer's.
            (Some(w), Some((t, c))) if w.has_holes() => (fill_holes(&w, &t), tags::derived(c)),
            (Some(w), _) => (w, WRITTEN),
            (None, Some((t, c))) => (t, tags::derived(c)),
            (None, None) => unknown(),
        }
    }

    fn exprs(&mut self, es: &[Expr]) -> Vec<Typed> {
        es.iter().map(|e| self.expr(e)).collect()
    }

    fn expr(&mut self, e: &Expr) -> Typed {
        // The type a `let` annotation expects of its initializer, for this expression only.
        let expected = self.expected.take();
        match e {
            Expr::CallPath { path, args, span } => {
                if let [arg] = args.as_slice()
                    && self.is_mem_drop(path)
                {
                    return self.explicit_drop(arg, *span);
                }
                self.move_locals(args);
                // A detached thread's closure is not the caller's code: its calls (cubecl's
                // GC thread waiting on events) are no edges of the caller.
                if self.is_thread_spawn(path) {
                    return unknown();
                }
                let shapes = models::shapes(self.map, path.last_name(), args);
                let values = self.arg_values(args);
                let args = self.path_args(path, args, *span);
                self.arg_shapes = shapes;
                self.arg_values = values;
                let out = self.call_path(path, &args, *span);
                self.arg_shapes.clear();
                self.arg_values.clear();
                out
            }
            Expr::CallValue { callee, args, span } => {
                self.move_locals(args);
                self.call_value(callee, args, *span)
            }
            Expr::MethodCall {
                recv,
                name,
                args,
                span,
                turbofish,
            } => {
                let target = match turbofish {
                    Some(t) => Some(self.ty(t)),
                    None => expected,
                };
                let recv_values = self.value_of(recv);
                let recv_expr = &**recv;
                let recv = self.expr(recv);
                self.move_locals(args);
                let shapes = models::shapes(self.map, name, args);
                let values = self.arg_values(args);
                let args = self.method_args(&recv, name, args, *span);
                let item = self.collected_item(&recv.0, name);
                self.arg_shapes = shapes;
                self.arg_values = values;
                self.recv_values = recv_values;
                let ret = self.method_call(recv, name, &args, *span);
                if std::mem::take(&mut self.consumed) {
                    self.move_locals(std::slice::from_ref(recv_expr));
                }
                self.arg_shapes.clear();
                self.arg_values.clear();
                self.recv_values = None;
                match (item, target) {
                    (Some(item), Some(t)) => (collect_into(&t, &item), ret.1),
                    // `let v = it.collect();` typed by a later use: most often a `Vec`.
                    (Some(item), None) if &**name == "collect" && ret.0 == Ty::Unknown => {
                        let c = tags::derived(ret.1);
                        (Ty::Adt("std::Vec".to_owned(), vec![item]), c)
                    }
                    _ => ret,
                }
            }
            Expr::Path(p) => self.path_value(p),
            Expr::Field { base, name } => {
                let (bt, c) = self.expr(base);
                (self.field(&bt, name), tags::derived(c))
            }
            Expr::Try(inner) => {
                let (t, c) = self.expr(inner);
                (crate::callgraph::returns::try_output(&t), c)
            }
            Expr::Await(inner) | Expr::Ref(inner) => self.expr(inner),
            Expr::Return { value, .. } => {
                if let Some(v) = value {
                    self.move_locals(std::slice::from_ref(&**v));
                    self.expr(v);
                }
                unknown()
            }
            Expr::Match { scrutinee, arms } => self.match_expr(scrutinee, arms),
            Expr::Let { pat, expr } => {
                let t = self.expr(expr);
                self.bind_pat(pat, t, 0);
                unknown()
            }
            Expr::Struct { path, fields, .. } => {
                self.move_locals(fields);
                self.exprs(fields);
                (self.type_of_path(path), WRITTEN)
            }
            Expr::Tuple(es) => {
                let ts = self.exprs(es);
                let sure = ts.iter().map(|t| t.1).max().unwrap_or(WRITTEN);
                (Ty::Tuple(ts.into_iter().map(|t| t.0).collect()), sure)
            }
            Expr::Array(es) => match self.exprs(es).into_iter().next() {
                Some((t, sure)) => (Ty::Array(Box::new(t)), sure),
                None => unknown(),
            },
            Expr::Block(b) => self.block(b),
            Expr::If { cond, then, els } => self.if_expr(cond, then, els.as_deref()),
            Expr::Closure { params, body } => self.closure(params, body, &[], WRITTEN),
            Expr::For { pat, iter, body } => self.for_loop(pat, iter, body),
            Expr::Index { base, index, span } => self.index(base, index, *span),
            Expr::Range { kind, bounds } => self.range(kind, bounds),
            Expr::Op { method, args, span } => self.operator(method, args, *span),
            Expr::Bool(_) => (Ty::Adt("bool".to_owned(), Vec::new()), WRITTEN),
            Expr::Lit(t) => match t {
                // An unsuffixed number's type is its context's (see `ops.rs` for operators).
                Some(p) if p.starts_with('{') => unknown(),
                Some(p) => (Ty::Adt(p.clone(), Vec::new()), WRITTEN),
                None => unknown(),
            },
            Expr::Cast { expr, ty } => {
                self.expr(expr);
                (self.ty(ty), WRITTEN)
            }
            Expr::Escape => unknown(),
            Expr::Failing { name, args } => {
                let outer = self.failing.replace(name.clone());
                self.exprs(args);
                self.failing = outer;
                unknown()
            }
            Expr::Other(kids) => {
                // `if let` / `while let` bindings live only inside their expression.
                self.push_scope();
                self.exprs(kids);
                self.pop_scope();
                unknown()
            }
        }
    }

    /// Whether `path` is `std::thread::spawn` (however it is imported).
    pub(super) fn is_thread_spawn(&self, path: &PathIr) -> bool {
        path.qself.is_none()
            && path.last_name() == "spawn"
            && matches!(
                self.map.resolve_path(self.module, &path.names(), path.global),
                Some(Def::External(segs)) if crate::known::std::is_thread_spawn(&crate::known::canonical(&segs))
            )
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
        (self.type_of_path(p), WRITTEN)
    }

    fn type_of_path(&self, p: &PathIr) -> Ty {
        if p.names() == ["Self"] {
            return self.self_ty.clone().unwrap_or(Ty::Unknown);
        }
        // `U::V`: an associated const of a type parameter (or of `Self`).
        if let [first, name] = p.names().as_slice()
            && p.qself.is_none()
            && let Some(base) = self.type_param_or_self(first)
            && let Some(t) = self.map.assoc_const_type(&base, name)
        {
            return t;
        }
        match self.map.resolve_path(self.module, &p.names(), p.global) {
            Some(Def::Type(c)) => self.map.resolve_alias(&c, &[], 0),
            Some(Def::Value(c)) => match self.map.values.get(&c) {
                Some((m, t)) => self.map.resolve_type(*m, t, &[], None, 0),
                None => Ty::Unknown,
            },
            _ => Ty::Unknown,
        }
    }

    fn field(&self, base: &Ty, name: &str) -> Ty {
        for t in self.map.deref_chain(base) {
            match &t {
                Ty::Adt(..) => {
                    let f = self.map.field_type(&t, name);
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
}
