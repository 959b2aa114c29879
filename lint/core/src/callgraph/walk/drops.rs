//! Drops: a local with a `Drop` impl (a user `impl Drop`, or a cudarc type whose `Drop`
//! blocks, `known::sinks::CUDARC_DROPS`) at the end of its scope, `let _ = value;` at once,
//! and `drop(x)` (the prelude's `std::mem::drop`) where it is called; a local dropped by
//! `drop(x)` or passed by value to a call or a struct literal is moved and not dropped
//! again at its scope's end.

use super::{Typed, Walker, unknown};
use crate::callgraph::Dropped;
use crate::parse::ir::{Block, Expr, PathIr, SpanIr, Stmt, TypeRef};
use crate::resolve::{Def, Ty, TypeData, TypeKind};

/// How many levels of struct fields a drop follows (a struct of structs of ...).
const MAX_FIELD_DEPTH: usize = 3;

/// std containers that own (and drop) their contents: a field of one of these types
/// drops what it holds. `Arc`/`Rc` are not among them: they drop only the last reference.
const OWNING: &[&str] = &["std::Box", "std::Option", "std::Vec"];

impl Walker<'_, '_> {
    /// `let _ = init;` drops a value at once; a place (a local, a field, a borrow) is
    /// neither moved nor dropped by it.
    pub(super) fn let_wild(&mut self, init: Option<&Expr>, ty: &Typed, site: SpanIr) {
        let place = match init {
            Some(Expr::Path(p)) => self.local_name(p).is_some(),
            Some(Expr::Field { .. } | Expr::Ref(_)) | None => true,
            Some(_) => false,
        };
        if !place {
            self.drop_now(ty, site, Dropped::Value);
        }
    }

    /// A value of type `ty` dropped at `site`: an edge to its `Drop` impl, if any.
    fn drop_now(&mut self, ty: &Typed, site: SpanIr, what: Dropped) {
        let d = ty.0.canon().and_then(|c| self.map.drops.get(c));
        if let Some(d) = d.and_then(|&d| self.for_cudarc_version(d)) {
            self.drop_edge(d, ty.1, site, what);
        }
    }

    /// Locals with a `Drop` impl are dropped at the block's end (`close`), in reverse
    /// order, unless the block returns them or `drop(x)` moved them.
    pub(super) fn drops(&mut self, scope: &[super::Local], tail: Option<&Stmt>, close: SpanIr) {
        let returned = match tail {
            Some(Stmt::Expr(Expr::Path(p))) if p.segs.len() == 1 => Some(p.last_name()),
            _ => None,
        };
        for l in scope
            .iter()
            .rev()
            .filter(|l| !l.is_param && !l.moved && Some(l.name.as_str()) != returned)
        {
            self.drop_now(&l.ty, close, Dropped::Local(l.name.clone()));
            if l.owned {
                self.drop_fields(&l.ty, close, &l.name, 0);
            }
        }
    }

    /// The parameters the fn took by value and still owns at its end (not moved into a
    /// call, a struct or a `return`, not returned as its tail) are dropped there, after its
    /// locals, with the fields they still hold ([`super::exits`]): a field taken out before
    /// every exit is not dropped, one taken after an early exit is dropped at that exit.
    pub(super) fn drop_params(&mut self, body: &Block) {
        let Some(close) = body.close else { return };
        let returned = match body.stmts.last() {
            Some(Stmt::Expr(Expr::Path(p))) if p.segs.len() == 1 => Some(p.last_name()),
            _ => None,
        };
        let params: Vec<(String, Typed)> = (self.scopes.first().into_iter().flatten())
            .filter(|l| l.is_param && !l.by_ref && !l.moved)
            .filter(|l| Some(l.name.as_str()) != returned)
            .map(|l| (l.name.clone(), l.ty.clone()))
            .collect();
        for (name, ty) in params.iter().rev() {
            self.drop_now(ty, close, Dropped::Local(name.clone()));
            let taken = super::exits::taken_fields(body, name);
            for (f, field) in self.owned_fields(ty) {
                // A method takes only out of an `Option` or `Result` (`Pool::take(&mut self)`
                // of a user type moves nothing out).
                let taking = |by_method: bool| {
                    let declared = self.map.field_type(&ty.0, &f);
                    !by_method || declared.is("std::Option") || declared.is("std::Result")
                };
                let site = match taken.iter().find(|(g, m, _)| *g == f && taking(*m)) {
                    None => close,
                    Some((.., None)) => continue,
                    Some((.., Some(at))) => at.unwrap_or(close),
                };
                let path = format!("{name}.{f}");
                self.drop_now(&field, site, Dropped::Local(path.clone()));
                self.drop_fields(&field, site, &path, 1);
            }
        }
    }

    /// The fields of a struct value `name` of type `ty` dropped at `site` (after its own
    /// `Drop`, as rustc's drop glue does): each field whose type has a `Drop` impl, the
    /// contents of a `Box`, `Option` or `Vec` field, and the fields of struct fields, a
    /// few levels down.
    fn drop_fields(&mut self, ty: &Typed, site: SpanIr, name: &str, depth: usize) {
        if depth >= MAX_FIELD_DEPTH {
            return;
        }
        for (f, field) in self.owned_fields(ty) {
            let path = format!("{name}.{f}");
            self.drop_now(&field, site, Dropped::Local(path.clone()));
            self.drop_fields(&field, site, &path, depth + 1);
        }
    }

    /// The fields a struct value of type `ty` owns, with the types their drops drop: a
    /// `Box`, `Option` or `Vec` field's contents. Fields declared as references own
    /// nothing and are left out.
    fn owned_fields(&self, ty: &Typed) -> Vec<(String, Typed)> {
        let Some(TypeData {
            kind: TypeKind::Struct(fields, _),
            ..
        }) = ty.0.canon().and_then(|c| self.map.types.get(c))
        else {
            return Vec::new();
        };
        let owned = fields.iter().filter(|(_, t)| !matches!(t, TypeRef::Ref(_)));
        let field = |f: &String| {
            let mut ft = self.map.field_type(&ty.0, f);
            if let Ty::Adt(c, args) = &ft
                && OWNING.contains(&c.as_str())
            {
                ft = args.first().cloned().unwrap_or(Ty::Unknown);
            }
            (f.clone(), (ft, ty.1))
        };
        owned.map(|(f, _)| field(f)).collect()
    }

    /// Whether `path` names `std::mem::drop` (`drop` from the prelude, `mem::drop`,
    /// `core::mem::drop`), not a local or an item of the analysed code called `drop`.
    pub(super) fn is_mem_drop(&self, path: &PathIr) -> bool {
        let names = path.names();
        if path.qself.is_some() || names.last() != Some(&"drop") {
            return false;
        }
        if names.len() == 1 {
            let shadowed = self.local("drop").is_some()
                || self
                    .map
                    .local_fns
                    .get(&self.from)
                    .is_some_and(|fs| fs.iter().any(|(n, _)| n == "drop"));
            if shadowed {
                return false;
            }
        }
        match self.map.resolve_path(self.module, &names, path.global) {
            // Nothing named `drop` in scope: the prelude's.
            None => names.len() == 1,
            Some(Def::External(segs)) => crate::known::std::is_mem_drop(&segs),
            _ => false,
        }
    }

    /// `drop(arg)`: `arg` is dropped here. A local is moved (no drop at its scope's end);
    /// a borrow or a parameter taken by reference drops nothing.
    pub(super) fn explicit_drop(&mut self, arg: &Expr, site: SpanIr) -> Typed {
        let ty = self.expr(arg);
        let what = match arg {
            Expr::Ref(_) => return unknown(),
            Expr::Path(p) => match self.local_name(p).and_then(|n| self.local_mut(&n)) {
                Some(l) if l.by_ref => return unknown(),
                Some(l) => {
                    l.moved = true;
                    Dropped::Local(l.name.clone())
                }
                None => Dropped::Value,
            },
            _ => Dropped::Value,
        };
        self.drop_now(&ty, site, what);
        unknown()
    }

    /// Locals passed by value (`Ok(buf)`, `f(buf)`, `v.push(buf)`, `S { buf }`) are moved
    /// there and not dropped at their scope's end. A type with a `Drop` impl is never `Copy`,
    /// so passing one by value always moves it; a borrow (`&buf`) moves nothing.
    pub(super) fn move_locals(&mut self, values: &[Expr]) {
        for v in values {
            if let Expr::Path(p) = v
                && let Some(name) = self.local_name(p)
                && let Some(l) = self.local_mut(&name)
                && !l.by_ref
            {
                l.moved = true;
            }
        }
    }

    /// The local a one-segment path names, if it is one.
    fn local_name(&self, p: &PathIr) -> Option<String> {
        if p.segs.len() != 1 || p.qself.is_some() {
            return None;
        }
        self.local(p.last_name()).map(|l| l.name.clone())
    }
}
