//! Calls through traits of crates the lint does not read, on a value whose type is known:
//! `Trait::m(&x, ..)` (`std::fmt::Debug::fmt(&t, f)`, and the calls that formatting
//! macros are lowered into, `parse::lower_fmt`) is the method of `x`'s type's impl of
//! `Trait`; `x.to_string()` is its `Display` impl's `fmt` (std's blanket `ToString`). A
//! value shown with `Debug` inside a std container (`Vec`, `Option`, a slice, an array, a
//! tuple) is each element's `Debug`.

use super::{Typed, Walker};
use crate::callgraph::tags::{self, How};
use crate::known::std::{DEBUG, DISPLAY, shows_elements_with_debug};
use crate::parse::ir::SpanIr;
use crate::resolve::Ty;

impl Walker<'_, '_> {
    /// `Trait::m(x, ..)` for the external trait path `segs` (`[core, fmt, Debug, fmt]`):
    /// the impl's method for `x`'s type (every element's, for `Debug` on a container);
    /// `None` when no analysed impl is found. A value of unknown type shown with `Debug`
    /// or `Display` is an unresolved call.
    pub(super) fn call_external_trait(
        &mut self,
        segs: &[String],
        args: &[Typed],
        span: SpanIr,
    ) -> Option<Typed> {
        let [prefix @ .., method] = segs else {
            return None;
        };
        let (first, _) = args.first()?;
        if prefix.is_empty() {
            return None;
        }
        let tr = crate::known::canonical_name(prefix);
        let is_fmt = tr == DEBUG || tr == DISPLAY;
        if is_fmt && *first == Ty::Unknown {
            let shown = if tr == DEBUG { "`Debug`" } else { "`Display`" };
            self.unresolved(span, format!("{shown} of a value of unknown type"));
            return None;
        }
        let mut values = Vec::new();
        shown_values(first, tr == DEBUG, &mut values, 0);
        let mut ret = None;
        for ty in values {
            if let Some(r) = self.call_impl_of(&ty, &tr, method, args, span) {
                ret.get_or_insert(r);
            }
        }
        ret
    }

    /// `recv.to_string()` where no analysed method of that name is found: the `Display`
    /// impl of `recv`'s type, through std's `impl<T: Display> ToString for T`.
    pub(super) fn call_to_string(&mut self, recv: &Typed, span: SpanIr) -> Option<Typed> {
        let args = [recv.clone()];
        let r = self.call_impl_of(&recv.0, DISPLAY, "fmt", &args, span)?;
        Some((Ty::Adt("std::String".to_owned(), Vec::new()), r.1))
    }

    /// The edge to `method` of `ty`'s impl of trait `tr` (the first of its deref chain
    /// that has one), the receiver first in `args`.
    fn call_impl_of(
        &mut self,
        ty: &Ty,
        tr: &str,
        method: &str,
        args: &[Typed],
        span: SpanIr,
    ) -> Option<Typed> {
        let sure = args.first().map_or(tags::WRITTEN, |a| a.1);
        self.map.deref_chain(ty).into_iter().find_map(|t| {
            let f = *self.map.impl_methods(t.canon()?, tr, method).first()?;
            let tag = tags::edge(How::Receiver, sure);
            Some(self.call_fn(f, tag, Some(&t), args, span, 1))
        })
    }
}

/// The values `ty` shows: itself, or with `debug`, the elements of a std container it is
/// (recursively, a few levels deep).
fn shown_values(ty: &Ty, debug: bool, out: &mut Vec<Ty>, depth: usize) {
    let elements: Vec<&Ty> = match ty {
        Ty::Slice(t) | Ty::Array(t) => vec![&**t],
        Ty::Tuple(ts) => ts.iter().collect(),
        Ty::Adt(c, args) if shows_elements_with_debug(c) => args.iter().collect(),
        _ => Vec::new(),
    };
    if !debug || elements.is_empty() || depth >= 4 {
        out.push(ty.clone());
        return;
    }
    for t in elements {
        shown_values(t, debug, out, depth + 1);
    }
}
