//! The fn bodies the walk needs: lowered with their file, or lazy ones lowered here, in
//! parallel, for the fns about to be walked (see [`crate::parse::lazy`]), or read back from
//! the cache and decoded here, in parallel too (see [`crate::parse::encoded`]).

use crate::diagnostics::{Code, Diagnostic};
use crate::parse::encoded::EncodedBody;
use crate::parse::ir::{Block, Body, FnIr, LazyBody, SpanIr};
use crate::parse::{free_spans, lazy};
use crate::resolve::{DefMap, FnId};
use crate::source::{SharedCache, SourceMap};
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};

/// The lazy bodies lowered so far, by span; `None` for one that does not parse (its
/// `parse-error` was reported when it was lowered).
#[derive(Debug, Default)]
pub(super) struct Bodies {
    lowered: HashMap<SpanIr, Option<Block>>,
    /// The bodies (a lazy one by its span, an encoded one by its fn's) whose lowering or
    /// decoding gave a diagnostic: their walks are not cached (see `reuse.rs`).
    diagnosed: HashSet<SpanIr>,
}

impl Bodies {
    /// The body of `ir` to walk: its lowered block, or `None` for a declaration, or a lazy
    /// body not lowered (or that did not parse).
    pub(super) fn of<'b>(&'b self, ir: &'b FnIr) -> Option<&'b Block> {
        match ir.body.as_ref()? {
            Body::Lazy(l) => self.lowered.get(&l.span)?.as_ref(),
            body => body.block(),
        }
    }

    /// Whether the body of `ir` was lowered (or decoded) without a diagnostic.
    pub(super) fn clean(&self, ir: &FnIr) -> bool {
        match &ir.body {
            Some(Body::Lazy(l)) => !self.diagnosed.contains(&l.span),
            _ => !self.diagnosed.contains(&ir.span),
        }
    }

    /// Decodes, in parallel, the encoded bodies of `fns` (read back from the cache, see
    /// [`crate::parse::encoded`]) not decoded yet; one that does not decode is an
    /// `internal-error` at its fn, and its calls are not in the call graph.
    fn decode(
        &mut self,
        map: &DefMap<'_>,
        fns: &[FnId],
        sources: &SourceMap,
        diags: &mut Vec<Diagnostic>,
    ) {
        let todo: Vec<(&EncodedBody, SpanIr)> = fns
            .iter()
            .filter_map(|&f| {
                let ir = map.func(f).ir?;
                match ir.body.as_ref()? {
                    Body::Encoded(e) if !e.is_decoded() => Some((e, ir.span)),
                    _ => None,
                }
            })
            .collect();
        let failed: Vec<SpanIr> = todo
            .par_iter()
            .filter(|(e, _)| e.block().is_none())
            .map(|&(_, at)| at)
            .collect();
        for at in failed {
            self.diagnosed.insert(at);
            let message = "internal error while reading a fn body from the cache; its calls \
                           are not in the call graph";
            let d = Diagnostic::new(Code::InternalError, message, sources.span(at)).with_note(
                "this is a bug in nosync-lint, not in your code; `--no-cache` reads no cache",
                None,
            );
            diags.push(d);
        }
    }

    /// Lowers, in parallel on the caller's pool, the lazy bodies of `fns` not lowered yet;
    /// their diagnostics (a body that does not parse, a panic while lowering) go to `diags`.
    pub(super) fn lower(
        &mut self,
        map: &DefMap<'_>,
        fns: &[FnId],
        sources: &SourceMap,
        cache: Option<&SharedCache>,
        diags: &mut Vec<Diagnostic>,
    ) {
        self.decode(map, fns, sources, diags);
        let mut seen = HashSet::new();
        let todo: Vec<&LazyBody> = fns
            .iter()
            .filter_map(|&f| match map.func(f).ir?.body.as_ref()? {
                Body::Lazy(l) => Some(l),
                _ => None,
            })
            .filter(|l| !self.lowered.contains_key(&l.span) && seen.insert(l.span))
            .collect();
        let done: Vec<_> = todo
            .par_iter()
            .map(|l| {
                let out = crate::panics::catch(|| lazy::lower_body(l, sources, cache));
                // Every span of the body is a `SpanIr` now (or dropped while unwinding).
                free_spans();
                out
            })
            .collect();
        for (l, out) in todo.into_iter().zip(done) {
            if matches!(out, Ok(Err(_))) {
                diags.extend(unparsed_roots(map, fns, l, sources));
            }
            let block = match out {
                Ok(Ok(lowered)) => {
                    if !lowered.diags.is_empty() {
                        self.diagnosed.insert(l.span);
                    }
                    diags.extend(lowered.diags);
                    Some(lowered.block)
                }
                Ok(Err(d)) => {
                    self.diagnosed.insert(l.span);
                    diags.push(*d);
                    None
                }
                Err(caught) => {
                    self.diagnosed.insert(l.span);
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

/// An `unparsed-root` for each root among `fns` whose body, `lazy`, does not parse: the
/// root was not checked (its `parse-error` says where).
fn unparsed_roots(
    map: &DefMap<'_>,
    fns: &[FnId],
    lazy: &LazyBody,
    sources: &SourceMap,
) -> Vec<Diagnostic> {
    let is_it = |f: &FnId| {
        let func = map.func(*f);
        let body = func.ir.and_then(|ir| ir.body.as_ref());
        func.marks.root && matches!(body, Some(Body::Lazy(l)) if l.span == lazy.span)
    };
    let roots = fns.iter().filter(|f| is_it(f));
    let diag = |f: &FnId| {
        let at = map.func(*f).ir.map_or(lazy.span, |ir| ir.span);
        Diagnostic::new(
            Code::UnparsedRoot,
            "this #[no_sync] function's body could not be parsed, so it was not checked",
            sources.span(at),
        )
        .with_label("its syntax error is reported as a `parse-error`")
        .with_help("fix the syntax error; to let the run pass meanwhile, set `unparsed-root` to `allow` in the configuration's `levels`")
    };
    roots.map(diag).collect()
}
