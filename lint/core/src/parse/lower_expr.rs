//! Lowering of fn bodies: statements and expressions, with a depth limit.

use super::ir::*;
use super::lower::{Lower, lower_qpath, lower_type, pat_ident};
use nosync_syntax::Escape;
use syn::spanned::Spanned;

/// Expressions nested deeper than this are not followed (the rest of the fn is).
const MAX_DEPTH: usize = 256;

impl Lower<'_> {
    pub(crate) fn block(&mut self, b: &syn::Block, nested: &mut Vec<Item>) -> Block {
        let mut stmts = Vec::with_capacity(b.stmts.len());
        for s in &b.stmts {
            self.stmt(s, nested, &mut stmts);
        }
        Block {
            stmts,
            close: Some(self.sp(b.brace_token.span.close())),
        }
    }

    fn stmt(&mut self, s: &syn::Stmt, nested: &mut Vec<Item>, out: &mut Vec<Stmt>) {
        match s {
            syn::Stmt::Local(l) if self.cfg.enabled(&l.attrs) => {
                let (name, ty) = match &l.pat {
                    syn::Pat::Type(pt) => (pat_ident(&pt.pat), Some(lower_type(&pt.ty))),
                    p => (pat_ident(p), None),
                };
                let pat = name.is_none().then(|| Box::new(lower_pat(&l.pat, 0)));
                out.push(Stmt::Let(Box::new(LetStmt {
                    name,
                    pat,
                    ty,
                    init: l.init.as_ref().map(|i| self.boxed(&i.expr)),
                    diverge: l
                        .init
                        .as_ref()
                        .and_then(|i| i.diverge.as_ref())
                        .map(|(_, e)| self.boxed(e)),
                    span: self.sp(l.span()),
                })));
            }
            syn::Stmt::Local(_) => {}
            syn::Stmt::Item(item) => {
                let dir = self.mod_dir.clone();
                let mut items = Vec::new();
                // Items in a body: nested fns are fns of their own, not part of this one.
                for lowered in self.items(std::slice::from_ref(item), &dir, false) {
                    items.push(lowered);
                }
                nested.extend(items);
            }
            syn::Stmt::Expr(e, _) if self.cfg.enabled(expr_attrs(e)) => {
                out.push(Stmt::Expr(self.expr(e)))
            }
            syn::Stmt::Expr(..) => {}
            syn::Stmt::Macro(m) if self.cfg.enabled(&m.attrs) => {
                // It may expand to items (`helper_fn!(name);`): kept for the expansion too.
                let mut call = self.macro_call(&m.mac, m.span());
                call.mod_dir = self.mod_dir.clone();
                call.path_base = self.mod_dir.clone();
                nested.push(Item::MacroCall(call));
                out.push(Stmt::Expr(self.mac(&m.mac)))
            }
            syn::Stmt::Macro(_) => {}
        }
    }

    pub(crate) fn expr(&mut self, e: &syn::Expr) -> Expr {
        if self.depth >= MAX_DEPTH {
            return Expr::Other(Vec::new());
        }
        self.depth += 1;
        let out = self.expr_inner(e);
        self.depth -= 1;
        out
    }

    pub(super) fn exprs<'e>(&mut self, es: impl IntoIterator<Item = &'e syn::Expr>) -> Vec<Expr> {
        es.into_iter().map(|e| self.expr(e)).collect()
    }

    fn boxed(&mut self, e: &syn::Expr) -> Box<Expr> {
        Box::new(self.expr(e))
    }

    fn expr_inner(&mut self, e: &syn::Expr) -> Expr {
        use syn::Expr as E;
        match e {
            E::Call(c) => self.call(c),
            E::MethodCall(m) => Expr::MethodCall {
                recv: self.boxed(&m.receiver),
                name: m.method.to_string().into(),
                args: self.exprs(&m.args),
                span: self.method_span(m),
                turbofish: m.turbofish.as_ref().and_then(|t| {
                    t.args.iter().find_map(|a| match a {
                        syn::GenericArgument::Type(t) => Some(Box::new(lower_type(t))),
                        _ => None,
                    })
                }),
            },
            E::Path(p) => Expr::Path(lower_qpath(p.qself.as_ref(), &p.path)),
            E::Field(f) => Expr::Field {
                base: self.boxed(&f.base),
                name: match &f.member {
                    syn::Member::Named(i) => i.to_string(),
                    syn::Member::Unnamed(i) => i.index.to_string(),
                },
            },
            E::Try(t) => Expr::Try(self.boxed(&t.expr)),
            E::Await(a) => Expr::Await(self.boxed(&a.base)),
            E::Paren(p) => self.expr(&p.expr),
            E::Group(g) => self.expr(&g.expr),
            E::Reference(r) => Expr::Ref(self.boxed(&r.expr)),
            E::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => self.expr(&u.expr),
            E::Struct(s) => Expr::Struct {
                path: Box::new(lower_qpath(s.qself.as_ref(), &s.path)),
                fields: self.exprs(s.fields.iter().map(|f| &f.expr).chain(s.rest.as_deref())),
                names: (s.fields.iter())
                    .map(|f| match &f.member {
                        syn::Member::Named(n) => n.to_string().into(),
                        syn::Member::Unnamed(i) => i.index.to_string().into(),
                    })
                    .collect(),
            },
            E::Block(b) => self.block_expr(&b.block),
            E::Unsafe(b) => self.block_expr(&b.block),
            E::Async(b) => self.block_expr(&b.block),
            E::Const(b) => self.block_expr(&b.block),
            E::TryBlock(b) => self.block_expr(&b.block),
            E::Closure(c) => Expr::Closure {
                params: c.inputs.iter().map(closure_param).collect(),
                body: self.boxed(&c.body),
            },
            E::ForLoop(f) => Expr::For {
                pat: Box::new(lower_pat(&f.pat, 0)),
                iter: self.boxed(&f.expr),
                body: self.nested_block(&f.body),
            },
            E::Index(i) => Expr::Index {
                base: self.boxed(&i.expr),
                index: self.boxed(&i.index),
                span: self.sp(i.span()),
            },
            E::Range(r) => Expr::Range {
                kind: range_kind(r).to_owned(),
                bounds: self.exprs(r.start.iter().chain(r.end.iter()).map(|b| &**b)),
            },
            E::Binary(b) => Expr::Op {
                method: binary_method(&b.op).to_owned(),
                args: self.exprs([&*b.left, &*b.right]),
                span: self.sp(b.op.span()),
            },
            E::Unary(u) => Expr::Op {
                method: if matches!(u.op, syn::UnOp::Neg(_)) {
                    "neg"
                } else {
                    "not"
                }
                .to_owned(),
                args: vec![self.expr(&u.expr)],
                span: self.sp(u.op.span()),
            },
            E::Lit(syn::ExprLit {
                lit: syn::Lit::Bool(b),
                ..
            }) => Expr::Bool(b.value),
            E::Lit(l) => Expr::Lit(lit_type(&l.lit)),
            E::Cast(c) => Expr::Cast {
                expr: self.boxed(&c.expr),
                ty: lower_type(&c.ty),
            },
            E::Macro(m) => self.mac(&m.mac),
            other => self.other(other),
        }
    }

    fn other(&mut self, e: &syn::Expr) -> Expr {
        use syn::Expr as E;
        let kids: Vec<Expr> = match e {
            E::Array(a) => return Expr::Array(self.exprs(&a.elems)),
            E::Tuple(t) => return Expr::Tuple(self.exprs(&t.elems)),
            E::Assign(a) => self.exprs([&*a.left, &*a.right]),
            E::Return(r) => {
                return Expr::Return {
                    value: r.expr.as_ref().map(|e| self.boxed(e)),
                    span: self.sp(r.span()),
                };
            }
            E::Break(b) => self.exprs(b.expr.iter().map(|b| &**b)),
            E::Yield(y) => self.exprs(y.expr.iter().map(|b| &**b)),
            E::Let(l) => {
                return Expr::Let {
                    pat: Box::new(lower_pat(&l.pat, 0)),
                    expr: self.boxed(&l.expr),
                };
            }
            E::Repeat(r) => self.exprs([&*r.expr, &*r.len]),
            E::If(i) => return self.if_expr(i),
            E::While(w) => vec![self.expr(&w.cond), self.block_expr(&w.body)],
            E::Loop(l) => vec![self.block_expr(&l.body)],
            E::Match(m) => return self.match_expr(m),
            _ => Vec::new(),
        };
        Expr::Other(kids)
    }

    fn if_expr(&mut self, i: &syn::ExprIf) -> Expr {
        Expr::If {
            cond: self.boxed(&i.cond),
            then: Box::new(self.block_expr(&i.then_branch)),
            els: i.else_branch.as_ref().map(|(_, e)| self.boxed(e)),
        }
    }

    fn match_expr(&mut self, m: &syn::ExprMatch) -> Expr {
        let scrutinee = self.boxed(&m.expr);
        let arms = m
            .arms
            .iter()
            .map(|arm| {
                let guard = arm.guard.as_ref().map(|(_, g)| self.expr(g));
                (lower_pat(&arm.pat, 0), guard, self.expr(&arm.body))
            })
            .collect();
        Expr::Match { scrutinee, arms }
    }

    fn block_expr(&mut self, b: &syn::Block) -> Expr {
        Expr::Block(self.nested_block(b))
    }

    /// An inner block, whose items belong to the enclosing fn (see `Lower::inner`).
    fn nested_block(&mut self, b: &syn::Block) -> Block {
        let mut nested = Vec::new();
        let block = self.block(b, &mut nested);
        self.inner.append(&mut nested);
        block
    }

    fn call(&mut self, c: &syn::ExprCall) -> Expr {
        // From the callee to the `)`, without the attributes of a statement (`#[cfg]`).
        let (func, close) = (self.sp(c.func.span()), self.sp(c.paren_token.span.close()));
        let span = SpanIr {
            hi: close.hi.max(func.hi),
            ..func
        };
        match &*c.func {
            syn::Expr::Path(p) => {
                let path = lower_qpath(p.qself.as_ref(), &p.path);
                // An escape (`allow_sync(|| ..)`): its argument is not followed.
                if let Some(escape) = Escape::of_fn_name(path.last_name()) {
                    if let Err(e) = escape.check_fn_args(&c.args, c.span()) {
                        self.invalid(e);
                    }
                    return Expr::Escape;
                }
                Expr::CallPath {
                    path,
                    args: self.exprs(&c.args),
                    span,
                }
            }
            callee => Expr::CallValue {
                callee: self.boxed(callee),
                args: self.exprs(&c.args),
                span,
            },
        }
    }

    fn method_span(&self, m: &syn::ExprMethodCall) -> SpanIr {
        let name = self.sp(m.method.span());
        let close = self.sp(m.paren_token.span.close());
        SpanIr {
            hi: close.hi.max(name.hi),
            ..name
        }
    }
}

/// A closure parameter: its pattern and its written type, if any.
fn closure_param(p: &syn::Pat) -> (Pat, Option<TypeRef>) {
    match p {
        syn::Pat::Type(t) => (lower_pat(&t.pat, 0), Some(lower_type(&t.ty))),
        p => (lower_pat(p, 0), None),
    }
}

/// The std range type a range expression builds.
fn range_kind(r: &syn::ExprRange) -> &'static str {
    let closed = matches!(r.limits, syn::RangeLimits::Closed(_));
    match (r.start.is_some(), r.end.is_some(), closed) {
        (true, true, false) => "Range",
        (true, true, true) => "RangeInclusive",
        (true, false, _) => "RangeFrom",
        (false, true, false) => "RangeTo",
        (false, true, true) => "RangeToInclusive",
        (false, false, _) => "RangeFull",
    }
}

/// The method of the std operator trait a binary operator calls (`""` for `&&`, `||`).
fn binary_method(op: &syn::BinOp) -> &'static str {
    use syn::BinOp as B;
    match op {
        B::Add(_) => "add",
        B::Sub(_) => "sub",
        B::Mul(_) => "mul",
        B::Div(_) => "div",
        B::Rem(_) => "rem",
        B::BitXor(_) => "bitxor",
        B::BitAnd(_) => "bitand",
        B::BitOr(_) => "bitor",
        B::Shl(_) => "shl",
        B::Shr(_) => "shr",
        B::Eq(_) => "eq",
        B::Ne(_) => "ne",
        B::Lt(_) => "lt",
        B::Le(_) => "le",
        B::Gt(_) => "gt",
        B::Ge(_) => "ge",
        B::AddAssign(_) => "add_assign",
        B::SubAssign(_) => "sub_assign",
        B::MulAssign(_) => "mul_assign",
        B::DivAssign(_) => "div_assign",
        B::RemAssign(_) => "rem_assign",
        B::BitXorAssign(_) => "bitxor_assign",
        B::BitAndAssign(_) => "bitand_assign",
        B::BitOrAssign(_) => "bitor_assign",
        B::ShlAssign(_) => "shl_assign",
        B::ShrAssign(_) => "shr_assign",
        _ => "",
    }
}

/// The primitive type a literal has when it is written in it.
fn lit_type(l: &syn::Lit) -> Option<String> {
    let (suffix, unsuffixed) = match l {
        syn::Lit::Str(_) => return Some("str".to_owned()),
        syn::Lit::Bool(_) => return Some("bool".to_owned()),
        syn::Lit::Char(_) => return Some("char".to_owned()),
        syn::Lit::Int(i) => (i.suffix(), UNSUFFIXED_INT),
        syn::Lit::Float(f) => (f.suffix(), UNSUFFIXED_FLOAT),
        _ => return None,
    };
    Some(
        if suffix.is_empty() {
            unsuffixed
        } else {
            suffix
        }
        .to_owned(),
    )
}

/// Lowers a pattern (depth-limited: deeper sub-patterns bind nothing).
pub(super) fn lower_pat(p: &syn::Pat, depth: usize) -> Pat {
    if depth > 64 {
        return Pat::Other;
    }
    let d = depth + 1;
    match p {
        syn::Pat::Ident(i) => Pat::Bind(
            i.ident.to_string(),
            i.subpat.as_ref().map(|(_, s)| Box::new(lower_pat(s, d))),
        ),
        syn::Pat::TupleStruct(t) => Pat::TupleStruct(
            lower_qpath(t.qself.as_ref(), &t.path),
            t.elems.iter().map(|e| lower_pat(e, d)).collect(),
        ),
        syn::Pat::Struct(s) => Pat::Struct(
            lower_qpath(s.qself.as_ref(), &s.path),
            s.fields
                .iter()
                .map(|f| match &f.member {
                    syn::Member::Named(n) => (n.to_string(), lower_pat(&f.pat, d)),
                    syn::Member::Unnamed(i) => (i.index.to_string(), lower_pat(&f.pat, d)),
                })
                .collect(),
        ),
        syn::Pat::Tuple(t) => Pat::Tuple(t.elems.iter().map(|e| lower_pat(e, d)).collect()),
        syn::Pat::Wild(_) => Pat::Wild,
        syn::Pat::Path(p) => Pat::Path(lower_qpath(p.qself.as_ref(), &p.path)),
        syn::Pat::Reference(r) => lower_pat(&r.pat, d),
        syn::Pat::Paren(r) => lower_pat(&r.pat, d),
        syn::Pat::Type(t) => lower_pat(&t.pat, d),
        syn::Pat::Or(o) => o
            .cases
            .first()
            .map_or(Pat::Other, |c| Pat::Or(Box::new(lower_pat(c, d)))),
        _ => Pat::Other,
    }
}

/// The outer attributes of an expression (those of an expression statement among them:
/// `#[cfg(feature = "cuda")] dev.synchronize()?;`).
fn expr_attrs(e: &syn::Expr) -> &[syn::Attribute] {
    use syn::Expr as E;
    match e {
        E::Array(x) => &x.attrs,
        E::Assign(x) => &x.attrs,
        E::Async(x) => &x.attrs,
        E::Await(x) => &x.attrs,
        E::Binary(x) => &x.attrs,
        E::Block(x) => &x.attrs,
        E::Break(x) => &x.attrs,
        E::Call(x) => &x.attrs,
        E::Cast(x) => &x.attrs,
        E::Closure(x) => &x.attrs,
        E::Const(x) => &x.attrs,
        E::Continue(x) => &x.attrs,
        E::Field(x) => &x.attrs,
        E::ForLoop(x) => &x.attrs,
        E::Group(x) => &x.attrs,
        E::If(x) => &x.attrs,
        E::Index(x) => &x.attrs,
        E::Infer(x) => &x.attrs,
        E::Let(x) => &x.attrs,
        E::Lit(x) => &x.attrs,
        E::Loop(x) => &x.attrs,
        E::Macro(x) => &x.attrs,
        E::Match(x) => &x.attrs,
        E::MethodCall(x) => &x.attrs,
        E::Paren(x) => &x.attrs,
        E::Path(x) => &x.attrs,
        E::Range(x) => &x.attrs,
        E::RawAddr(x) => &x.attrs,
        E::Reference(x) => &x.attrs,
        E::Repeat(x) => &x.attrs,
        E::Return(x) => &x.attrs,
        E::Struct(x) => &x.attrs,
        E::Try(x) => &x.attrs,
        E::TryBlock(x) => &x.attrs,
        E::Tuple(x) => &x.attrs,
        E::Unary(x) => &x.attrs,
        E::Unsafe(x) => &x.attrs,
        E::While(x) => &x.attrs,
        E::Yield(x) => &x.attrs,
        _ => &[],
    }
}
