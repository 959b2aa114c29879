//! Bindings introduced by patterns, typed from the matched value.

use super::{Typed, Walker};
use crate::parse::ir::{Pat, PathIr};
use crate::resolve::{Def, Ty};

impl Walker<'_, '_> {
    /// Binds the names a pattern introduces, typed from the matched value where the
    /// pattern says how (tuples, enum variants, `Some`/`Ok`/`Err`, struct fields).
    pub(super) fn bind_pat(&mut self, pat: &Pat, ty: Typed, depth: usize) {
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
                    self.bind_pat(p, (t, crate::callgraph::tags::derived(ty.1)), d);
                }
            }
            Pat::Struct(path, fs) => {
                let fields = self.pattern_fields(path, &ty.0);
                for (name, p) in fs {
                    let t = fields
                        .iter()
                        .find(|(n, _)| n == name)
                        .map_or(Ty::Unknown, |(_, t)| t.clone());
                    self.bind_pat(p, (t, crate::callgraph::tags::derived(ty.1)), d);
                }
            }
            Pat::Or(p) => self.bind_pat(p, ty, d),
            Pat::Other | Pat::Wild | Pat::Path(_) => {}
        }
    }

    /// The fields a variant or struct pattern destructures, given the matched type.
    pub(super) fn pattern_fields(&self, path: &PathIr, scrutinee: &Ty) -> Vec<(String, Ty)> {
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
}
