//! Constant arguments: a call that passes `true` or `false`, or a struct literal with such
//! fields (cubecl's `StreamErrorMode { ignore: true, flush: false }`), for a parameter that
//! its callee cannot change (bound without `mut`, not a `&mut`) specialises the callee to
//! those values (`callgraph::specialise`); the specialised node passes them on where it
//! hands the parameter on whole, and its walk follows only the branch of an `if` whose
//! condition they decide (`if mode.flush`, `if !p`). A reader sees the same: the branch a
//! constant rules out is not taken by this call.

use super::Walker;
use crate::parse::ir::Expr;
use crate::resolve::{FnId, Known};

impl Walker<'_, '_> {
    /// What each argument of a call is known to hold, in order; empty when none is
    /// (most calls: nothing is recorded).
    pub(super) fn arg_values(&self, args: &[Expr]) -> Vec<Option<Known>> {
        let values: Vec<Option<Known>> = args.iter().map(|a| self.value_of(a)).collect();
        match values.iter().any(Option::is_some) {
            true => values,
            false => Vec::new(),
        }
    }

    fn value_of(&self, e: &Expr) -> Option<Known> {
        match e {
            Expr::Bool(b) => Some(vec![("".into(), *b)]),
            Expr::Ref(inner) => self.value_of(inner),
            Expr::Path(p) if p.segs.len() == 1 && p.qself.is_none() => {
                self.param_values(p.last_name()).cloned()
            }
            Expr::Struct { fields, names, .. } => {
                let known: Known = (names.iter().zip(fields))
                    .filter_map(|(n, f)| Some((n.clone(), self.whole_bool(f)?)))
                    .collect();
                (!known.is_empty()).then_some(known)
            }
            _ => None,
        }
    }

    /// The value of a `bool` expression: a literal, or a parameter known whole.
    fn whole_bool(&self, e: &Expr) -> Option<bool> {
        let known = self.value_of(e)?;
        known.iter().find(|(f, _)| f.is_empty()).map(|&(_, b)| b)
    }

    /// What parameter `name` of this node is known to hold (a local of that name that
    /// shadows it is not the parameter).
    fn param_values(&self, name: &str) -> Option<&Known> {
        if !self.local(name).is_some_and(|l| l.is_param) {
            return None;
        }
        self.values.iter().find(|(n, _)| n == name).map(|(_, k)| k)
    }

    /// The value of an `if` condition that this node's constant parameters decide:
    /// `p`, `p.field`, `!c`; `None` for any other.
    pub(super) fn constant_condition(&self, cond: &Expr) -> Option<bool> {
        let field = |base: &str, field: &str| {
            let known = self.param_values(base)?;
            known.iter().find(|(f, _)| &**f == field).map(|&(_, b)| b)
        };
        match cond {
            Expr::Bool(b) => Some(*b),
            Expr::Path(p) if p.segs.len() == 1 && p.qself.is_none() => field(p.last_name(), ""),
            Expr::Field { base, name } => match &**base {
                Expr::Path(p) if p.segs.len() == 1 && p.qself.is_none() => {
                    field(p.last_name(), name)
                }
                _ => None,
            },
            Expr::Op { method, args, .. } if method == "not" => match args.as_slice() {
                [inner] => self.constant_condition(inner).map(|b| !b),
                _ => None,
            },
            _ => None,
        }
    }

    /// The constant arguments this call passes to `f`'s parameters that `f` cannot
    /// change: (position, values). The arguments' values are those recorded for the call
    /// (`Self::arg_values`), a receiver written first (`Type::m(recv, ..)`) skipped.
    pub(super) fn values_for(&self, f: FnId) -> Vec<(usize, Known)> {
        let Some(ir) = self.map.func(f).ir.filter(|ir| ir.body.is_some()) else {
            return Vec::new();
        };
        let offset = self.arg_values.len().saturating_sub(ir.params.len()).min(1);
        (ir.params.iter().enumerate())
            .filter(|(_, p)| !p.mutable && p.name.is_some())
            .filter_map(|(i, _)| Some((i, self.arg_values.get(i + offset)?.clone()?)))
            .collect()
    }
}
