//! The call graph: one node per fn (analysed fns and built-in sinks), one edge per
//! resolved call with its tag (`exact`, `inferred`, `name-only`) and call site, and per
//! fn the calls that could not be resolved. Only the bodies the search from the roots
//! can read are walked, wave by wave, each wave in parallel.

mod bodies;
mod frontier;
mod returns;
mod reuse;
mod specialise;
mod std_types;
pub mod tags;
#[cfg(test)]
mod tests;

pub use reuse::Reuse;
pub use specialise::Spec;
mod walk;

use crate::diagnostics::{Confidence, Diagnostic};
use crate::panics::Caught;
use crate::parse::ir::SpanIr;
use crate::resolve::{DefMap, FnId};
use crate::source::{SharedCache, SourceMap};
use bodies::Bodies;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// A resolved call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    /// The call is in a branch that the lint does not know `from` takes: an `if`'s or
    /// `else`'s block whose condition nothing decides, one of several `match` arms left,
    /// a `let .. else` block. (A branch a constant rules out is not walked at all.)
    pub branch: bool,
}

/// A condition the callee blocks under that the lint could not decide at this call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Uncertain {
    /// The callee's model decides from an argument that nothing at this call decides, or
    /// its `follow` model says only some calls take the wait in its body
    /// (`known::models`); `note` says which and why.
    Argument { note: String },
    /// The call is made only while macro `name!` builds an error value or a panic message:
    /// the caller waits only when it fails (see `analysis`: decided in the root's own body,
    /// undecided in a function the root calls).
    Failing { name: String },
}

/// How a call reaches an impl its source does not name (for the hop's note).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Via {
    /// Dispatched through a trait bound or `dyn Trait` to one of the trait's impls.
    /// (Boxed, as `callback` is: most edges have neither, and every edge is kept.)
    pub dispatch: Option<Box<Dispatch>>,
    /// The callee is specialised to the concrete types of these arguments:
    /// (parameter name, or `_`; the type by its last path segment).
    pub specialised: Vec<(String, String)>,
    /// The callee is specialised to these bindings of its type parameters (from the
    /// receiver's type arguments or the arguments): (parameter, the type by its last
    /// path segment).
    pub bound: Vec<(String, String)>,
    /// A method of a value's impl of a trait of a crate that is not analysed, reached
    /// from a call of that crate's fn given the value (see `walk/external.rs`).
    pub callback: Option<Box<Callback>>,
}

/// `callee` (a fn of a crate that is not analysed) is given a value of type `ty` (by its
/// last path segment), which implements that crate's trait `trait_`: it may call the
/// impl's methods.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Callback {
    pub callee: String,
    pub ty: String,
    pub trait_: String,
}

/// A call through trait `trait_` whose receiver's concrete type is not known: it may
/// reach any of the trait's `impls` impls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dispatch {
    pub trait_: String,
    pub impls: usize,
}

/// What a `Drop` edge drops (for its label: "`_timer` is dropped here").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Dropped {
    /// A local, by name: at the end of its scope, or by `drop(x)`.
    Local(String),
    /// A value with no name: `let _ = value;`, `drop(make())`.
    Value,
}

/// A call the lint could not resolve.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    /// Declared fns with a body that were walked.
    pub walked: usize,
    /// Specialised nodes that were walked.
    pub walked_specialised: usize,
    /// Whether an edge has a condition it could not decide (`Edge::uncertain`).
    pub undecided: bool,
    /// The lazy bodies lowered for the walk, kept only to be freed with the graph
    /// (`engine` frees it off the caller's path): dropping them where the walk ends
    /// was a tenth of a warm run on the generated crate.
    lowered: Bodies,
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
#[derive(Debug, Default, Serialize, Deserialize)]
struct Walked {
    edges: Vec<Edge>,
    specs: Vec<(usize, Spec)>,
    unresolved: Vec<Unresolved>,
}

/// Where the walked fns' bodies come from: the sources, the cache of lazy bodies, and the
/// bodies lowered so far (which the walks add to).
struct BodySource<'s> {
    sources: &'s SourceMap,
    cache: Option<&'s SharedCache>,
    lowered: &'s mut Bodies,
}

/// Walks `fns` in parallel, each behind the net: a panic in one body loses that body's
/// calls (an `internal-error` in `diags`), not the graph. With `store`, each clean walk
/// is encoded for the cache right after it, on the pool (see [`reuse`]).
fn walk_all(
    map: &DefMap<'_>,
    fns: &[FnId],
    from: &mut BodySource<'_>,
    store: Option<(&reuse::Walks<'_>, usize)>,
    diags: &mut Vec<Diagnostic>,
) -> Vec<(Walked, Option<Vec<u8>>)> {
    let sources = from.sources;
    from.lowered.lower(map, fns, sources, from.cache, diags);
    let bodies = &*from.lowered;
    let encode = |f: FnId, w: &Walked| {
        let (walks, declared) = store?;
        let clean = map.func(f).ir.is_some_and(|ir| bodies.clean(ir));
        clean.then(|| walks.encode((map, sources), f, w, declared))?
    };
    let walked: Vec<_> = fns
        .par_iter()
        .map(|&f| {
            let w = crate::panics::catch(|| walk::walk_fn(map, f, bodies))?;
            let bytes = encode(f, &w);
            Ok((w, bytes))
        })
        .collect();
    walked
        .into_iter()
        .zip(fns)
        .map(|(w, &f)| {
            w.unwrap_or_else(|caught| {
                diags.push(walk_error(map, f, &caught, sources));
                Default::default()
            })
        })
        .collect()
}

/// One wave: with the cache of walks, the nodes it has (see [`reuse`]) come from it and
/// only the others are walked ([`walk_all`]), their clean walks stored.
fn walk_wave(
    map: &DefMap<'_>,
    (wave, ids): (&[FnId], &specialise::Ids),
    from: &mut BodySource<'_>,
    walks: Option<&mut reuse::Walks<'_>>,
    declared: usize,
    diags: &mut Vec<Diagnostic>,
) -> Vec<Walked> {
    let Some(walks) = walks else {
        let walked = walk_all(map, wave, from, None, diags);
        return walked.into_iter().map(|(w, _)| w).collect();
    };
    let (keys, found) = walks.found(map, (wave, ids), from.sources);
    let shared = &*walks;
    let todo: Vec<FnId> = (wave.iter().zip(&found))
        .filter_map(|(&f, w)| w.is_none().then_some(f))
        .collect();
    let reused = (wave.iter().zip(&found)).filter_map(|(&f, w)| w.is_some().then_some(f));
    reuse::keep_bodies(map, reused, from.cache);
    let store = Some((shared, declared));
    let mut fresh = walk_all(map, &todo, from, store, diags).into_iter();
    let reuse = &mut *walks.reuse;
    (keys.into_iter().zip(found))
        .map(|(key, found)| {
            reuse.walked += usize::from(key.is_some());
            match (found, key) {
                (Some(w), Some(k)) => {
                    reuse.reused += 1;
                    reuse.store.mark_used(k);
                    w
                }
                _ => {
                    let (w, bytes) = fresh.next().unwrap_or_default();
                    if let (Some(k), Some(b)) = (key, bytes) {
                        reuse.store.insert(k, b);
                    }
                    w
                }
            }
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

/// Which fn bodies [`build`] walks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Walk {
    /// Those the search from the roots reads (see [`frontier`]).
    #[default]
    FromRoots,
    /// Every fn body, and every specialisation any call asks for: the reference that
    /// identity tests compare `FromRoots` with.
    Every,
}

/// What [`build`] reuses of earlier runs and fills for later ones: the cache of walks and
/// the cache of lazy bodies.
#[derive(Debug, Default)]
pub struct Caches<'a> {
    pub walks: Option<&'a mut Reuse>,
    pub bodies: Option<&'a SharedCache>,
}

/// Builds the graph of the fns `walk` selects, wave by wave from `roots`: each wave's
/// bodies are walked in parallel, then the callees the search from the roots can read
/// (see [`frontier`]) that no wave had make the next wave. A provided trait method called
/// on a known type, and a fn given a value of a known type for a `dyn Trait` or generic
/// parameter, get a node of their own for those types (see [`specialise`]), walked when
/// a call reaches it. `out` and `unresolved` are empty for a fn not walked.
///
/// With `caches.walks`, the cache of walks of earlier runs, a node whose walk it has (see
/// [`reuse`]) is not walked again; the walks made now are added to it. Lazy bodies come
/// from `caches.bodies`, the cache of lazy bodies, when it has them, and go into it when
/// not.
pub fn build(
    map: &mut DefMap<'_>,
    sources: &SourceMap,
    roots: &[FnId],
    walk: Walk,
    caches: Caches<'_>,
) -> (CallGraph, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let mut lowered = Bodies::default();
    let declared = map.fns.len();
    let mut walks = caches.walks.map(reuse::Walks::new);
    let mut front = frontier::Frontier::new(map, walk);
    let mut walked: Vec<Option<Walked>> = Vec::new();
    let mut wave = front.first_wave(map, roots);
    while !wave.is_empty() {
        let mut from = BodySource {
            sources,
            cache: caches.bodies,
            lowered: &mut lowered,
        };
        let results = walk_wave(
            map,
            (&wave, &front.ids),
            &mut from,
            walks.as_mut(),
            declared,
            &mut diags,
        );
        let mut next = Vec::new();
        for (f, mut w) in wave.into_iter().zip(results) {
            front.follow(map, f, &mut w, &mut next);
            if walked.len() <= f as usize {
                walked.resize_with(f as usize + 1, || None);
            }
            walked[f as usize] = Some(w);
        }
        wave = next;
    }
    let mut g = assemble(map, walked, &front.ids, declared);
    g.lowered = lowered;
    (g, diags)
}

/// The graph from the walked bodies (by FnId). Edges of one fn are in call-site order,
/// and at one site in the order of their callees' [`specialise::Ids::order`], which does
/// not depend on the order nodes were created in.
fn assemble(
    map: &DefMap<'_>,
    walked: Vec<Option<Walked>>,
    ids: &specialise::Ids,
    declared: usize,
) -> CallGraph {
    let mut g = CallGraph {
        out: vec![Vec::new(); map.fns.len()],
        unresolved: vec![Vec::new(); map.fns.len()],
        ..CallGraph::default()
    };
    g.edges
        .reserve_exact(walked.iter().flatten().map(|w| w.edges.len()).sum());
    for (f, w) in walked.into_iter().enumerate() {
        let Some(w) = w else { continue };
        if map.fns[f].ir.is_some() {
            match f < declared {
                true => g.walked += 1,
                false => g.walked_specialised += 1,
            }
        }
        let mut edges = w.edges;
        edges.sort_by(|a, b| (a.site, ids.order(a.to)).cmp(&(b.site, ids.order(b.to))));
        edges.dedup_by(|a, b| a.site == b.site && a.to == b.to);
        for e in edges {
            g.undecided |= e.uncertain.is_some();
            g.out[f].push(g.edges.len() as u32);
            g.edges.push(e);
        }
        g.unresolved[f] = w.unresolved;
    }
    g
}
