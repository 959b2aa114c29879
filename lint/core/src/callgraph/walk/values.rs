//! Constant arguments: a call that passes `true`/`false`, a unit variant, or a struct
//! literal with such fields (cubecl's `StreamErrorMode { ignore: true, flush: false }`), or
//! a value a derive's constructor made with its fields' defaults (burn's `LinearConfig::new`
//! sets `layout: LinearLayout::Row`), for a parameter or receiver that its callee cannot
//! change (bound without `mut`, not a `&mut`) specialises the callee to those values
//! (`callgraph::specialise`); the specialised node passes them on where it hands the
//! parameter on whole, and its walk follows only the branch of an `if` whose condition
//! they decide (`if mode.flush`, `if !p`) and the arms of a `match` their variant can take.
//! A reader sees the same: the branch a constant rules out is not taken by this call.
//! The branches nothing decides are walked as such (`Edge::branch`): the search prefers a
//! chain whose calls are known to run.

use super::Walker;
use crate::parse::ir::{DefaultValue, Expr, Pat, PathIr};
use crate::resolve::{Def, FnId, Known, TypeData, Value};

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

    /// What the value of `e` is known to hold.
    pub(super) fn value_of(&self, e: &Expr) -> Option<Known> {
        match e {
            Expr::Bool(b) => Some(vec![("".into(), Value::Bool(*b))]),
            Expr::Ref(inner) => self.value_of(inner),
            Expr::Path(p) if p.segs.len() == 1 && p.qself.is_none() => {
                self.param_values(p.last_name()).cloned()
            }
            Expr::Path(p) => Some(vec![("".into(), self.variant(self.module, p)?)]),
            Expr::Struct { fields, names, .. } => {
                let known: Known = (names.iter().zip(fields))
                    .filter_map(|(n, f)| Some((n.clone(), self.whole(f)?)))
                    .collect();
                (!known.is_empty()).then_some(known)
            }
            Expr::CallPath { path, .. } => self.constructed(path),
            _ => None,
        }
    }

    /// The value of `e` as a whole, when known.
    fn whole(&self, e: &Expr) -> Option<Value> {
        let known = self.value_of(e)?;
        known
            .into_iter()
            .find(|(f, _)| f.is_empty())
            .map(|(_, v)| v)
    }

    /// The unit variant path `p` names in module `m` (`LinearLayout::Row`).
    fn variant(&self, m: crate::resolve::ModId, p: &PathIr) -> Option<Value> {
        let names = p.names();
        let (last, ty) = names.split_last()?;
        match self.map.resolve_path(m, ty, p.global)? {
            Def::Type(c) if self.map.has_variant(&c, last) => {
                Some(Value::Variant(format!("{c}::{last}").into()))
            }
            _ => None,
        }
    }

    /// What `T::new(..)` makes, when a derive wrote that constructor with the fields'
    /// defaults (`known::models`' `[[derive]]` with `defaults`): those fields.
    fn constructed(&self, path: &PathIr) -> Option<Known> {
        let (last, ty) = path.segs.split_last()?;
        if ty.is_empty() || path.qself.is_some() {
            return None;
        }
        let names: Vec<&str> = ty.iter().map(|s| &*s.name).collect();
        let Def::Type(c) = self.map.resolve_path(self.module, &names, path.global)? else {
            return None;
        };
        let derive = self.map.derived_ctors.get(&c)?;
        let attr = derive.defaults.as_deref()?;
        let td: &TypeData<'_> = self.map.types.get(&c)?;
        if derive.constructor != *last.name {
            return None;
        }
        let known: Known = (td.defaults.iter())
            .filter(|d| d.attr == attr)
            .filter_map(|d| {
                let v = match &d.value {
                    DefaultValue::Bool(b) => Value::Bool(*b),
                    DefaultValue::Path(p) => self.variant(td.module, p)?,
                };
                Some((d.field.as_str().into(), v))
            })
            .collect();
        (!known.is_empty()).then_some(known)
    }

    /// What parameter `name` of this node (`self` for its receiver) is known to hold (a
    /// local of that name that shadows it is not the parameter).
    fn param_values(&self, name: &str) -> Option<&Known> {
        if !self.local(name).is_some_and(|l| l.is_param) {
            return None;
        }
        self.values.iter().find(|(n, _)| n == name).map(|(_, k)| k)
    }

    /// The value of `p` or `p.field` for a parameter `p` this node knows.
    fn known_value(&self, e: &Expr) -> Option<&Value> {
        let (base, field) = match e {
            Expr::Path(p) if p.segs.len() == 1 && p.qself.is_none() => (p.last_name(), ""),
            Expr::Field { base, name } => match &**base {
                Expr::Path(p) if p.segs.len() == 1 && p.qself.is_none() => {
                    (p.last_name(), name.as_str())
                }
                _ => return None,
            },
            Expr::Ref(inner) => return self.known_value(inner),
            _ => return None,
        };
        let known = self.param_values(base)?;
        known.iter().find(|(f, _)| &**f == field).map(|(_, v)| v)
    }

    /// The value of an `if` condition that this node's constant parameters decide:
    /// `p`, `p.field`, `!c`; `None` for any other.
    pub(super) fn constant_condition(&self, cond: &Expr) -> Option<bool> {
        match cond {
            Expr::Bool(b) => Some(*b),
            Expr::Op { method, args, .. } if method == "not" => match args.as_slice() {
                [inner] => self.constant_condition(inner).map(|b| !b),
                _ => None,
            },
            _ => match self.known_value(cond)? {
                Value::Bool(b) => Some(*b),
                Value::Variant(_) => None,
            },
        }
    }

    /// Whether the arm with pattern `pat` of a `match` on `scrutinee` cannot be taken:
    /// the scrutinee is a known variant (a constant parameter, or a call whose callees the
    /// models say return one variant) and the pattern names another of its enum.
    pub(super) fn arm_ruled_out(&self, scrutinee: &Expr, pat: &Pat) -> bool {
        // A known parameter value, else the variant the scrutinee's callees return.
        let known: &str = match self.known_value(scrutinee) {
            Some(Value::Variant(known)) => known,
            _ => match self.returned_variant(scrutinee) {
                Some(v) => v,
                None => return false,
            },
        };
        let p = match pat {
            Pat::Path(p) | Pat::TupleStruct(p, _) | Pat::Struct(p, _) => p,
            _ => return false,
        };
        match self.variant(self.module, p) {
            Some(Value::Variant(v)) => {
                let enum_of = |s: &str| s.rsplit_once("::").map(|(e, _)| e.to_owned());
                enum_of(&v) == enum_of(known) && &*v != known
            }
            _ => false,
        }
    }

    /// How many arms of a `match` on `scrutinee` this node can take: one left means it
    /// always runs (a `match` is exhaustive), several that none is known to.
    pub(super) fn live_arms<G, B>(&self, scrutinee: &Expr, arms: &[(Pat, G, B)]) -> usize {
        (arms.iter())
            .filter(|(pat, ..)| !self.arm_ruled_out(scrutinee, pat))
            .count()
    }

    /// Walks `f` as a branch this node is not known to take when `unknown` (the edges made
    /// there are `Edge::branch`), else as code that runs whenever the enclosing code does.
    pub(super) fn in_branch<T>(&mut self, unknown: bool, f: impl FnOnce(&mut Self) -> T) -> T {
        self.branch += u32::from(unknown);
        let out = f(self);
        self.branch -= u32::from(unknown);
        out
    }

    /// The variant a call scrutinee (`x.m()`, `x.m()?`) returns, when each of its callees is
    /// an impl method the models say returns that one variant (`known::models`'
    /// `[[variant]]`); its edges were recorded by walking the scrutinee.
    fn returned_variant(&self, scrutinee: &Expr) -> Option<&String> {
        let call = match scrutinee {
            Expr::Try(inner) => &**inner,
            e => e,
        };
        let (Expr::MethodCall { span, .. } | Expr::CallPath { span, .. }) = call else {
            return None;
        };
        let mut callees = self.edges.iter().filter(|e| e.site == *span);
        let variant_of = |e: &crate::callgraph::Edge| {
            let ir = self.map.func(e.to).ir?;
            (e.tag != crate::diagnostics::Confidence::NameOnly)
                .then(|| self.map.returned_variants.get(&ir.span))?
        };
        let first = variant_of(callees.next()?)?;
        callees
            .all(|e| variant_of(e) == Some(first))
            .then_some(first)
    }

    /// The constant arguments this call passes to `f`'s parameters (and receiver) that
    /// `f` cannot change: (name, values). The arguments' values are those recorded for the
    /// call (`Self::arg_values`, and `recv_values` for a method call's receiver; a receiver
    /// written first, `Type::m(recv, ..)`, is the first argument).
    pub(super) fn values_for(&self, f: FnId) -> Vec<(String, Known)> {
        let Some(ir) = self.map.func(f).ir.filter(|ir| ir.body.is_some()) else {
            return Vec::new();
        };
        let offset = self.arg_values.len().saturating_sub(ir.params.len()).min(1);
        let mut out: Vec<(String, Known)> = (ir.params.iter().enumerate())
            .filter(|(_, p)| !p.mutable)
            .filter_map(|(i, p)| Some((p.name.clone()?, self.arg_values.get(i + offset)?.clone()?)))
            .collect();
        let recv = match offset {
            1 => self.arg_values.first().cloned().flatten(),
            _ => self.recv_values.clone(),
        };
        if let Some(known) = recv.filter(|_| ir.self_param.is_some() && !ir.self_mutable) {
            out.push(("self".to_owned(), known));
        }
        out
    }
}
