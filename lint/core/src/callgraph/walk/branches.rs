//! Branches: an `if` or a `match` whose condition a fixed library flag or this node's
//! constant arguments decide walks only the branch or arms it takes.

use super::{Typed, Walker, unknown};
use crate::parse::ir::Expr;
use crate::resolve::{Def, Ty};

impl Walker<'_, '_> {
    /// The condition's bindings (`if let`) in the `then` branch's scope only; typed as the
    /// first branch whose type is known (`let t = if c { a.argmax(0)? } else { b }`). A
    /// condition that reads a library flag fixed at its default (`DefMap::fixed_flags`),
    /// or that this node's constant arguments decide (`values.rs`), walks only the branch
    /// it takes.
    pub(super) fn if_expr(&mut self, cond: &Expr, then: &Expr, els: Option<&Expr>) -> Typed {
        let fixed = (self.fixed_condition(cond)).or_else(|| self.constant_condition(cond));
        self.push_scope();
        self.expr(cond);
        let t = match fixed {
            Some(false) => unknown(),
            _ => self.in_branch(fixed.is_none(), |w| w.expr(then)),
        };
        self.pop_scope();
        // Without `else` the `if` is `()`.
        let els = els.filter(|_| fixed != Some(true));
        match els.map(|e| self.in_branch(fixed.is_none(), |w| w.expr(e))) {
            Some(e) if t.0 == Ty::Unknown => e,
            Some(_) => t,
            None if fixed == Some(true) => t,
            None => unknown(),
        }
    }

    /// The value of a condition that is a fixed flag's read, `FLAG.load(..)`, or its
    /// negation; `None` for any other condition.
    pub(super) fn fixed_condition(&self, cond: &Expr) -> Option<bool> {
        match cond {
            Expr::Op { method, args, .. } if method == "not" => match args.as_slice() {
                [inner] => self.fixed_condition(inner).map(|v| !v),
                _ => None,
            },
            Expr::MethodCall { recv, name, .. } if &**name == "load" => {
                let Expr::Path(p) = &**recv else { return None };
                if p.segs.len() == 1 && self.local(p.last_name()).is_some() {
                    return None;
                }
                match self.map.resolve_path(self.module, &p.names(), p.global)? {
                    Def::Value(c) => self.map.fixed_flags.get(&c).copied(),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Each arm in its own scope, with the pattern's bindings typed from the scrutinee;
    /// not an arm that this node's constant values rule out (`values.rs`).
    pub(super) fn match_expr(
        &mut self,
        scrutinee: &Expr,
        arms: &[(crate::parse::ir::Pat, Option<Expr>, Expr)],
    ) -> Typed {
        let st = self.expr(scrutinee);
        let mut result = unknown();
        let several = self.live_arms(scrutinee, arms) > 1;
        for (pat, guard, body) in arms {
            // An arm of another variant than the one this node knows the scrutinee holds.
            if self.arm_ruled_out(scrutinee, pat) {
                continue;
            }
            self.push_scope();
            self.bind_pat(pat, st.clone(), 0);
            if let Some(g) = guard {
                self.expr(g);
            }
            let t = self.in_branch(several, |w| w.expr(body));
            if result.0 == Ty::Unknown {
                result = t;
            }
            self.pop_scope();
        }
        result
    }
}
