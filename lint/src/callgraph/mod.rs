//! The call graph: one node per fn (analysed fns and built-in sinks), one edge per
//! resolved call with its tag (`exact`, `inferred`, `name-only`) and call site, and per
//! fn the calls that could not be resolved. Bodies are walked in parallel.

mod known;
mod walk;

use crate::diagnostics::Confidence;
use crate::parse::ir::SpanIr;
use crate::resolve::{DefMap, FnId};
use rayon::prelude::*;

/// A resolved call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    pub from: FnId,
    pub to: FnId,
    pub tag: Confidence,
    /// The call expression in `from`.
    pub site: SpanIr,
    /// Set when the call blocks only under a condition the lint could not decide.
    pub uncertain: Option<String>,
    /// Set for a call dispatched through a trait bound or `dyn Trait` to one of its impls.
    pub via: Option<String>,
}

/// A call the lint could not resolve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unresolved {
    pub site: SpanIr,
    pub what: String,
}

#[derive(Debug, Default)]
pub struct CallGraph {
    pub edges: Vec<Edge>,
    /// Outgoing edge indices per fn, in call-site order.
    pub out: Vec<Vec<u32>>,
    pub unresolved: Vec<Vec<Unresolved>>,
}

impl CallGraph {
    pub fn count(&self, tag: Confidence) -> usize {
        self.edges.iter().filter(|e| e.tag == tag).count()
    }

    pub fn unresolved_count(&self) -> usize {
        self.unresolved.iter().map(Vec::len).sum()
    }
}

/// Walks every fn body of `map` and builds the graph.
pub fn build(map: &DefMap<'_>) -> CallGraph {
    let per_fn: Vec<(Vec<Edge>, Vec<Unresolved>)> = map
        .fn_ids()
        .collect::<Vec<_>>()
        .par_iter()
        .map(|&f| walk::walk_fn(map, f))
        .collect();
    let mut g = CallGraph {
        out: vec![Vec::new(); map.fns.len()],
        ..CallGraph::default()
    };
    for (f, (mut edges, unresolved)) in per_fn.into_iter().enumerate() {
        edges.sort_by_key(|e| (e.site, e.to));
        edges.dedup_by(|a, b| a.site == b.site && a.to == b.to);
        for e in edges {
            g.out[f].push(g.edges.len() as u32);
            g.edges.push(e);
        }
        g.unresolved.push(unresolved);
    }
    g
}
