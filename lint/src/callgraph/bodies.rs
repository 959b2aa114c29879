//! The fn bodies the walk needs: lowered with their file, or lazy ones lowered here, in
//! parallel, for the fns about to be walked (see [`crate::parse::lazy`]).

use crate::diagnostics::Diagnostic;
use crate::parse::ir::{Block, Body, FnIr, LazyBody, SpanIr};
use crate::parse::{free_spans, lazy};
use crate::resolve::{DefMap, FnId};
use crate::source::SourceMap;
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};

/// The lazy bodies lowered so far, by span; `None` for one that does not parse (its
/// `parse-error` was reported when it was lowered).
#[derive(Debug, Default)]
pub struct Bodies {
    lowered: HashMap<SpanIr, Option<Block>>,
}

impl Bodies {
    /// The body of `ir` to walk: its lowered block, or `None` for a declaration, or a lazy
    /// body not lowered (or that did not parse).
    pub fn of<'b>(&'b self, ir: &'b FnIr) -> Option<&'b Block> {
        match ir.body.as_ref()? {
            Body::Lowered(b) => Some(b),
            Body::Lazy(l) => self.lowered.get(&l.span)?.as_ref(),
        }
    }

    /// Lowers, in parallel on the caller's pool, the lazy bodies of `fns` not lowered yet;
    /// their diagnostics (a body that does not parse, a panic while lowering) go to `diags`.
    pub fn lower(
        &mut self,
        map: &DefMap<'_>,
        fns: &[FnId],
        sources: &SourceMap,
        diags: &mut Vec<Diagnostic>,
    ) {
        let mut seen = HashSet::new();
        let todo: Vec<&LazyBody> = fns
            .iter()
            .filter_map(|&f| match map.func(f).ir?.body.as_ref()? {
                Body::Lazy(l) => Some(l),
                Body::Lowered(_) => None,
            })
            .filter(|l| !self.lowered.contains_key(&l.span) && seen.insert(l.span))
            .collect();
        let done: Vec<_> = todo
            .par_iter()
            .map(|l| {
                let out = crate::net::catch(|| lazy::lower_body(l, sources));
                // Every span of the body is a `SpanIr` now (or dropped while unwinding).
                free_spans();
                out
            })
            .collect();
        for (l, out) in todo.into_iter().zip(done) {
            let block = match out {
                Ok(Ok(lowered)) => {
                    diags.extend(lowered.diags);
                    Some(lowered.block)
                }
                Ok(Err(d)) => {
                    diags.push(*d);
                    None
                }
                Err(caught) => {
                    let at = sources.span(SpanIr {
                        hi: l.span.lo + 1,
                        ..l.span
                    });
                    let lost = "its calls are not in the call graph";
                    diags.push(caught.diagnostic("lowering", "a fn body", lost, at));
                    None
                }
            };
            self.lowered.insert(l.span, block);
        }
    }
}
