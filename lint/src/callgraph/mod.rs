//! The call graph: one node per fn (analysed fns and built-in sinks), one edge per
//! resolved call with its tag (`exact`, `inferred`, `name-only`) and call site, and per
//! fn the calls that could not be resolved. Bodies are walked in parallel.

mod bodies;
mod returns;
mod specialise;
pub mod tags;

pub use specialise::Spec;
mod walk;

use crate::diagnostics::{Confidence, Diagnostic};
use crate::net::Caught;
use crate::parse::ir::SpanIr;
use crate::resolve::{DefMap, FnId};
use crate::source::SourceMap;
use bodies::Bodies;
use rayon::prelude::*;
use std::collections::HashMap;

/// A resolved call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    pub from: FnId,
    pub to: FnId,
    pub tag: Confidence,
    /// The call expression in `from`.
    pub site: SpanIr,
    /// Set when the call blocks only under a condition the lint could not decide.
    pub uncertain: Option<Uncertain>,
    /// How the call reaches its callee when the source does not name it: through a trait
    /// bound or `dyn Trait`, or specialised to concrete argument types.
    pub via: Via,
    /// Set when the edge is a value's `Drop` rather than a call written in the source.
    pub dropped: Option<Dropped>,
}

/// A condition the callee blocks under that the lint could not decide at this call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Uncertain {
    /// `callee` blocks only for a pageable host destination, and the destination's type
    /// is unknown.
    PageableDst { callee: String },
}

/// How a call reaches an impl its source does not name (for the hop's note).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Via {
    /// Dispatched through a trait bound or `dyn Trait` to one of the trait's impls.
    pub dispatch: Option<Dispatch>,
    /// The callee is specialised to the concrete types of these arguments:
    /// (parameter name, or `_`; the type by its last path segment).
    pub specialised: Vec<(String, String)>,
    /// The callee is specialised to these bindings of its type parameters (from the
    /// receiver's type arguments or the arguments): (parameter, the type by its last
    /// path segment).
    pub bound: Vec<(String, String)>,
    /// A method of a value's impl of a trait of a crate that is not analysed, reached
    /// from a call of that crate's fn given the value (see `walk/external.rs`).
    pub callback: Option<Callback>,
}

/// `callee` (a fn of a crate that is not analysed) is given a value of type `ty` (by its
/// last path segment), which implements that crate's trait `trait_`: it may call the
/// impl's methods.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Callback {
    pub callee: String,
    pub ty: String,
    pub trait_: String,
}

/// A call through trait `trait_` whose receiver's concrete type is not known: it may
/// reach any of the trait's `impls` impls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dispatch {
    pub trait_: String,
    pub impls: usize,
}

/// What a `Drop` edge drops (for its label: "`_timer` is dropped here").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dropped {
    /// A local, by name: at the end of its scope, or by `drop(x)`.
    Local(String),
    /// A value with no name: `let _ = value;`, `drop(make())`.
    Value,
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

/// One body's calls. `specs` is build-time scratch, never part of the graph: the edges (by
/// index) whose callee is to be specialised to what the call knows, see [`build`].
#[derive(Debug, Default)]
struct Walked {
    edges: Vec<Edge>,
    specs: Vec<(usize, Spec)>,
    unresolved: Vec<Unresolved>,
}

/// Walks `fns` in parallel, each behind the net: a panic in one body loses that body's
/// calls (an `internal-error` in `diags`), not the graph.
fn walk_all(
    map: &DefMap<'_>,
    fns: Vec<FnId>,
    (sources, bodies): (&SourceMap, &mut Bodies),
    diags: &mut Vec<Diagnostic>,
) -> Vec<Walked> {
    bodies.lower(map, &fns, sources, diags);
    let bodies = &*bodies;
    let walked: Vec<_> = fns
        .par_iter()
        .map(|&f| crate::net::catch(|| walk::walk_fn(map, f, bodies)))
        .collect();
    walked
        .into_iter()
        .zip(fns)
        .map(|(w, f)| {
            w.unwrap_or_else(|caught| {
                diags.push(walk_error(map, f, &caught, sources));
                Walked::default()
            })
        })
        .collect()
}

fn walk_error(map: &DefMap<'_>, f: FnId, caught: &Caught, sources: &SourceMap) -> Diagnostic {
    let d = map.func(f);
    let at = d
        .span
        .map_or_else(|| sources.first_span(), |s| sources.span(s));
    let subject = format!("the body of `{}`", d.path);
    caught.diagnostic(
        "walking",
        &subject,
        "its calls are not in the call graph",
        at,
    )
}

/// Walks every fn body of `map` and builds the graph. A provided trait method called
/// on a known type, and a fn given a value of a known type for a `dyn Trait` or
/// generic parameter, get a node of their own for those types (see [`specialise`]);
/// specialisations are created in rounds until none is new.
/// The lazy bodies of the fns walked are lowered first.
pub fn build(map: &mut DefMap<'_>, sources: &SourceMap) -> (CallGraph, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let mut bodies = Bodies::default();
    let all = map.fn_ids().collect();
    let mut per_fn = walk_all(map, all, (sources, &mut bodies), &mut diags);
    let mut spec_ids = specialise::Ids::default();
    for _round in 0..16 {
        let mut created = Vec::new();
        for w in per_fn.iter_mut() {
            for (i, spec) in w.specs.drain(..) {
                let e = &mut w.edges[i];
                if let Some(id) = specialise::node(map, &mut spec_ids, e.to, spec, &mut created) {
                    e.to = id;
                }
            }
        }
        if created.is_empty() {
            break;
        }
        let ctx = (sources, &mut bodies);
        per_fn.extend(walk_all(map, created, ctx, &mut diags));
    }
    (assemble(map, per_fn), diags)
}

fn assemble(map: &DefMap<'_>, per_fn: Vec<Walked>) -> CallGraph {
    let mut g = CallGraph {
        out: vec![Vec::new(); map.fns.len()],
        ..CallGraph::default()
    };
    for (f, w) in per_fn.into_iter().enumerate() {
        let (mut edges, unresolved) = (w.edges, w.unresolved);
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
