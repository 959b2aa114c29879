//! What a by-value parameter still holds when the fn exits. A field taken out of it
//! (`p.f.take()`, `mem::take(&mut p.f)`, `mem::replace(&mut p.f, ..)`, `p.f` moved by
//! value) on the straight path before any exit is gone at every exit: its drop glue is not
//! the parameter's. A field taken only after an exit (`return`, `?`, `bail!`, `ensure!`)
//! is still there at that exit, where it is dropped. A take in a branch, a loop or a
//! closure may not run: the field stays, dropped at the fn's end. Read from the body alone,
//! in evaluation order, before the walk.

use crate::parse::ir::{Block, Expr, PathIr, SpanIr, Stmt};

/// Methods that move an `Option`/`Result` field out of its owner (`p.tail.take()`).
const TAKING: &[&str] = &[
    "take",
    "unwrap",
    "expect",
    "unwrap_or",
    "unwrap_or_default",
    "unwrap_or_else",
    "into_iter",
    "into_inner",
];

/// A field of the parameter, whether a method took it (`take()`, `unwrap()`: an `Option` or
/// `Result` field only, which the caller checks) rather than a move, and where it leaves
/// the drop glue: `None` when it is taken before every exit, else the first exit before its
/// take (`None` inside: a `?` or `ensure!` whose place the IR does not keep; the fn's end is
/// used then).
pub(super) type Taken = Vec<(String, bool, Option<Option<SpanIr>>)>;

enum Event {
    Exit(Option<SpanIr>),
    /// A field, and whether a method took it.
    Take(String, bool),
}

/// The fields of parameter `param` taken out of it in `body` (see the module's doc).
pub(super) fn taken_fields(body: &Block, param: &str) -> Taken {
    let mut events = Vec::new();
    Scan {
        param,
        events: &mut events,
    }
    .block(body, false);
    let mut first_exit: Option<Option<SpanIr>> = None;
    let mut out: Taken = Vec::new();
    for e in events {
        match e {
            Event::Exit(at) => {
                first_exit.get_or_insert(at);
            }
            Event::Take(f, m) if !out.iter().any(|(g, ..)| *g == f) => out.push((f, m, first_exit)),
            Event::Take(..) => {}
        }
    }
    out
}

struct Scan<'p, 'e> {
    param: &'p str,
    events: &'e mut Vec<Event>,
}

impl Scan<'_, '_> {
    fn block(&mut self, b: &Block, cond: bool) {
        for s in &b.stmts {
            match s {
                Stmt::Let(l) => {
                    if let Some(init) = &l.init {
                        self.value(init, cond);
                    }
                    if let Some(d) = &l.diverge {
                        self.expr(d, true);
                    }
                }
                Stmt::Expr(e) => self.value(e, cond),
            }
        }
    }

    /// `e` where it is used by value: a field of the parameter there is moved out.
    fn value(&mut self, e: &Expr, cond: bool) {
        match self.own_field(e) {
            Some(f) if !cond => self.events.push(Event::Take(f.to_owned(), false)),
            Some(_) => {}
            None => self.expr(e, cond),
        }
    }

    fn values(&mut self, es: &[Expr], cond: bool) {
        es.iter().for_each(|e| self.value(e, cond));
    }

    fn expr(&mut self, e: &Expr, cond: bool) {
        match e {
            Expr::CallPath { path, args, .. } => self.call(path, args, cond),
            Expr::MethodCall {
                recv, name, args, ..
            } => {
                match self.own_field(recv) {
                    Some(f) if TAKING.contains(&&**name) && !cond => {
                        self.events.push(Event::Take(f.to_owned(), true))
                    }
                    _ => self.expr(recv, cond),
                }
                self.values(args, cond);
            }
            Expr::CallValue { callee, args, .. } => {
                self.expr(callee, cond);
                self.values(args, cond);
            }
            Expr::Try(inner) => {
                self.expr(inner, cond);
                self.events.push(Event::Exit(span_of(inner)));
            }
            Expr::Return { value, span } => {
                if let Some(v) = value {
                    self.value(v, cond);
                }
                self.events.push(Event::Exit(Some(*span)));
            }
            Expr::Failing { name, args } => {
                args.iter().for_each(|a| self.expr(a, true));
                if name == "ensure" {
                    self.events.push(Event::Exit(None));
                }
            }
            Expr::Struct { fields, .. } => self.values(fields, cond),
            Expr::Tuple(es) | Expr::Array(es) => self.values(es, cond),
            Expr::Block(b) => self.block(b, cond),
            Expr::If { cond: c, then, els } => {
                self.expr(c, cond);
                self.expr(then, true);
                if let Some(e) = els {
                    self.expr(e, true);
                }
            }
            Expr::Match { scrutinee, arms } => {
                self.expr(scrutinee, cond);
                for (_, guard, body) in arms {
                    if let Some(g) = guard {
                        self.expr(g, true);
                    }
                    self.value(body, true);
                }
            }
            Expr::For { iter, body, .. } => {
                self.expr(iter, cond);
                self.block(body, true);
            }
            // A closure's `?` leaves the closure, not the fn; its takes may never run.
            Expr::Closure { .. } | Expr::Escape | Expr::Path(_) | Expr::Lit(_) | Expr::Bool(_) => {}
            Expr::Field { base, .. } | Expr::Ref(base) | Expr::Await(base) => self.expr(base, cond),
            Expr::Cast { expr, .. } => self.expr(expr, cond),
            Expr::Let { expr, .. } => self.expr(expr, cond),
            Expr::Index { base, index, .. } => {
                self.expr(base, cond);
                self.expr(index, cond);
            }
            Expr::Range { bounds: es, .. } | Expr::Op { args: es, .. } => {
                es.iter().for_each(|e| self.expr(e, cond))
            }
            // Loops and constructs the IR does not name: what runs in them may not.
            Expr::Other(kids) => kids.iter().for_each(|k| self.expr(k, true)),
        }
    }

    /// `f(args)`; `mem::take(&mut p.f)` and `mem::replace(&mut p.f, ..)` take `p.f`.
    fn call(&mut self, path: &PathIr, args: &[Expr], cond: bool) {
        let names = path.names();
        let mem = names.len() >= 2 && names[names.len() - 2] == "mem";
        if mem
            && matches!(path.last_name(), "take" | "replace")
            && let Some(Expr::Ref(place)) = args.first()
            && let Some(f) = self.own_field(place)
        {
            if !cond {
                self.events.push(Event::Take(f.to_owned(), false));
            }
            return self.values(&args[1..], cond);
        }
        self.values(args, cond);
    }

    /// `param.f`: the field's name.
    fn own_field<'x>(&self, e: &'x Expr) -> Option<&'x str> {
        match e {
            Expr::Field { base, name } => match &**base {
                Expr::Path(p) if p.segs.len() == 1 && p.last_name() == self.param => Some(name),
                _ => None,
            },
            _ => None,
        }
    }
}

/// Where an expression that can fail is, when the IR keeps it (calls do).
fn span_of(e: &Expr) -> Option<SpanIr> {
    match e {
        Expr::CallPath { span, .. } | Expr::MethodCall { span, .. } => Some(*span),
        Expr::CallValue { span, .. } | Expr::Index { span, .. } => Some(*span),
        Expr::Await(inner) => span_of(inner),
        _ => None,
    }
}
