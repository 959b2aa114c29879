//! From each root, searches of the call graph: one finding per (root, call site in the
//! root, sink) that the call reaches, each with its most certain chain (one-time
//! setup sinks counting as one: a call that loads a module, then looks up its function,
//! is one setup finding). Fixing one
//! reported chain thus never reveals a violation that was there all along: every call of
//! the root that reaches a sink is reported, and every sink it reaches. The search from a
//! call's callee goes first over exact and inferred edges whose condition is decided, then
//! over undecided ones (`Uncertain`), then over name-only edges, each for the sinks not
//! reached yet; within a pass the chain with the fewest calls in branches the lint does not
//! know are taken wins, then the one with the fewest calls that are not exact, then the
//! shorter (`best.rs`). At one site (a call dispatched to several impls, several values
//! dropped at one brace) the chain without a name-only hop wins, then the one without an
//! undecided hop, then the same order. A branch that a constant rules out is not in the
//! graph at all (`callgraph`'s constant values): no chain runs through it.
//!
//! A call made only while a macro builds an error value or a panic message
//! (`Uncertain::Failing`) is decided in the root's own body, where the hot path's author
//! wrote the failing path (`bail!("{t:?}")` on a condition the code checks at run time): its
//! wait is certain. Below the root it is undecided: such a path checks the callee's
//! arguments, and the lint cannot tell whether the root's arguments fail the check.
//! Calls into `#[allow_sync]` fns are not followed; sinks end a chain; cycles terminate
//! because every fn is visited once per search. What a callee reaches is computed once and
//! shared by every call of it, from every root.
//!
//! Another root also ends a chain: a sink reached through an inner root is reported at
//! that inner root only. The outer root's finding would add nothing (its chain is the
//! inner root's chain with a prefix, and fixing the inner root fixes both), and with n
//! roots calling each other in a line, reporting every pair would be n² / 2 hops (10 000
//! roots exhausted memory). The outer root still reports sinks it reaches by a path
//! that avoids other roots.

use crate::callgraph::{CallGraph, Dropped, Edge, Uncertain, Unresolved, Via};
use crate::diagnostics::{Code, Confidence, Diagnostic, Finding, Hop};
use crate::known::sinks::SinkKind;
use crate::parse::ir::SpanIr;
use crate::resolve::{DefMap, FnData, FnId};
use crate::source::SourceMap;
use rayon::prelude::*;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

mod below;
mod best;
mod linked;
mod message;
mod others;
mod settle;
#[cfg(test)]
mod tests;
pub use below::{Unseen, unresolved_below};
pub use message::tag_name;
use message::{chain_code, finding, unresolved};
pub use settle::{settle, sorted_roots};

const NONE: u32 = u32::MAX;

/// Per-search scratch space, reused across roots (stamped instead of cleared).
struct Search {
    stamp: Vec<u32>,
    parent: Vec<u32>,
    /// The cost of the best chain found to each fn ([`Search::best`]).
    cost: Vec<best::Cost>,
    generation: u32,
    /// The crates the root's program can link ([`linked`]); empty: every crate.
    linked: Arc<[bool]>,
}

impl Search {
    fn new(n: usize) -> Self {
        Search {
            stamp: vec![0; n],
            parent: vec![NONE; n],
            cost: vec![(0, 0, 0); n],
            generation: 0,
            linked: Arc::from([]),
        }
    }

    /// Whether the root's program can call `f`: a fn of no analysed crate (a built-in or
    /// configured sink, which has no place in the sources), or one of a crate it can link
    /// (a model's node is in its modelled fn's crate).
    fn links(&self, map: &DefMap<'_>, f: FnId) -> bool {
        let fd = map.func(f);
        let krate = map.modules[fd.module as usize].krate;
        fd.span.is_none() || self.linked.get(krate).is_none_or(|&l| l)
    }

    /// BFS from `root` (a root, or the callee of a root's call); returns the fns reached
    /// in visiting order. `is_root[f]`: `f` is searched as a root of its own, so the
    /// search stops there.
    fn run(
        &mut self,
        map: &DefMap<'_>,
        g: &CallGraph,
        (root, is_root): (FnId, &[bool]),
        pass: Pass,
    ) -> Vec<FnId> {
        self.generation += 1;
        let mut order = Vec::new();
        let mut queue = VecDeque::from([root]);
        self.stamp[root as usize] = self.generation;
        self.parent[root as usize] = NONE;
        while let Some(f) = queue.pop_front() {
            order.push(f);
            if f != root && (map.func(f).marks.sink.is_some() || is_root[f as usize]) {
                continue;
            }
            for &ei in &g.out[f as usize] {
                let e = &g.edges[ei as usize];
                let t = e.to as usize;
                if self.stamp[t] == self.generation
                    || !pass.follows(map, e)
                    || !self.links(map, e.to)
                {
                    continue;
                }
                self.stamp[t] = self.generation;
                self.parent[t] = ei;
                queue.push_back(e.to);
            }
        }
        order
    }

    fn chain<'g>(&self, g: &'g CallGraph, to: FnId) -> Vec<&'g Edge> {
        let mut out = Vec::new();
        let mut cur = to;
        while self.parent[cur as usize] != NONE && out.len() <= g.edges.len() {
            let e = &g.edges[self.parent[cur as usize] as usize];
            out.push(e);
            cur = e.from;
        }
        out.reverse();
        out
    }
}

/// Which edges a search follows: exact and inferred edges whose condition is decided, then
/// undecided ones too, then name-only ones too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Pass {
    Decided,
    Undecided,
    NameOnly,
}

impl Pass {
    /// Whether a search in this pass follows `e` (never into an `#[allow_sync]` fn).
    fn follows(self, map: &DefMap<'_>, e: &Edge) -> bool {
        !(map.func(e.to).marks.allow
            || (self < Pass::NameOnly && e.tag == Confidence::NameOnly)
            || (self < Pass::Undecided && e.uncertain.is_some()))
    }
}

/// The sinks a callee reaches, in search order, each with its most certain chain from the
/// callee (decided exact and inferred edges first, then undecided ones, then name-only
/// edges, each for the sinks left).
type Reach<'g> = Vec<(FnId, Found<'g>)>;

/// A chain, and the other chains from its start to its sink ([`others`]).
type Found<'g> = (Vec<&'g Edge>, Vec<others::Join<'g>>);

/// What one root's searches found: its chains, and the unresolved calls they reach (by
/// the fn that makes each), in search order.
type Searched<'g> = (Vec<Found<'g>>, Vec<(FnId, &'g Unresolved)>);

/// What a finding or an unresolved call is reported from: a root and its chain, or a root,
/// the fn reached and its unresolved call.
enum Report<'g> {
    Finding(FnId, Found<'g>),
    Unresolved(FnId, FnId, &'g Unresolved),
}

/// What [`find`] makes diagnostics of, besides the findings.
#[derive(Debug, Clone, Copy)]
pub struct Wanted {
    /// The unresolved calls the roots reach (`unresolved-call-in-no-sync`, allowed by
    /// default: thousands of diagnostics on a large workspace, made only to be hidden).
    pub unresolved: bool,
}

/// Findings and, when [`Wanted`], reachable unresolved calls for every root.
///
/// The roots are searched in parallel (a search reads only the graph; what a callee
/// reaches is a function of the graph alone, so each thread's memo of it holds what any
/// other would), then kept in root order, each finding and unresolved call once (the
/// first root's), and the diagnostics made in parallel, in that order.
pub fn find(
    map: &DefMap<'_>,
    g: &CallGraph,
    sources: &SourceMap,
    (roots, wanted): (&[FnId], Wanted),
) -> Vec<Diagnostic> {
    let mut is_root = vec![false; map.fns.len()];
    for &r in roots {
        is_root[r as usize] = true;
    }
    let is_root = &is_root[..];
    let inn = &others::Incoming::new(g, map.fns.len());
    let crate_of = |f: FnId| map.modules[map.func(f).module as usize].krate;
    let mut links: HashMap<usize, Arc<[bool]>> = HashMap::new();
    for &r in roots {
        let c = crate_of(r);
        links
            .entry(c)
            .or_insert_with(|| linked::linked_crates(map, c).into());
    }
    let links = &links;
    let fresh = || (Search::new(map.fns.len()), HashMap::new());
    let searched: Vec<Result<Searched<'_>, crate::panics::Caught>> = roots
        .par_iter()
        .map_init(fresh, |(s, reach), &root| {
            s.linked = links
                .get(&crate_of(root))
                .cloned()
                .unwrap_or_else(|| Arc::from([]));
            let at = (root, is_root);
            let out = crate::panics::catch(|| search(map, (g, inn), s, at, reach, wanted));
            if out.is_err() {
                // The search's state is unknown after a panic: start the next root afresh.
                (*s, *reach) = fresh();
            }
            out
        })
        .collect();
    let mut seen_unresolved = HashSet::new();
    let mut seen_findings = HashSet::new();
    let mut reports = Vec::new();
    for (&root, found) in roots.iter().zip(searched) {
        let (chains, calls) = match found {
            Ok(found) => found,
            Err(caught) => {
                reports.push(Err(root_error(map, sources, root, &caught)));
                continue;
            }
        };
        for found in chains {
            if seen_findings.insert(finding_key(map, root, &found.0)) {
                reports.push(Ok(Report::Finding(root, found)));
            }
        }
        for (f, u) in calls {
            if seen_unresolved.insert(u.site) {
                reports.push(Ok(Report::Unresolved(root, f, u)));
            }
        }
    }
    reports
        .into_par_iter()
        .map(|r| report(map, sources, r))
        .collect()
}

/// The chains of `root` and the unresolved calls its search reaches.
fn search<'g>(
    map: &DefMap<'_>,
    (g, inn): (&'g CallGraph, &others::Incoming),
    s: &mut Search,
    (root, is_root): (FnId, &[bool]),
    reach: &mut HashMap<(usize, FnId), Reach<'g>>,
    wanted: Wanted,
) -> Searched<'g> {
    crate::panics::failpoint("search", &map.func(root).name);
    let chains = root_chains(map, (g, inn), s, (root, is_root), reach);
    let mut calls = Vec::new();
    if !wanted.unresolved {
        return (chains, calls);
    }
    for f in s.run(map, g, (root, is_root), Pass::NameOnly) {
        // Another root's own unresolved calls are reported by its own search.
        if f == root || !is_root[f as usize] {
            calls.extend(g.unresolved[f as usize].iter().map(|u| (f, u)));
        }
    }
    (chains, calls)
}

/// The diagnostic of one report (a root's error as it is); a panic while making it is
/// that root's error instead.
fn report(map: &DefMap<'_>, sources: &SourceMap, r: Result<Report<'_>, Diagnostic>) -> Diagnostic {
    let r = match r {
        Ok(r) => r,
        Err(d) => return d,
    };
    let root = match &r {
        Report::Finding(root, _) | Report::Unresolved(root, ..) => *root,
    };
    let made = crate::panics::catch(|| match &r {
        Report::Finding(root, (chain, others)) => finding(map, sources, *root, (chain, others)),
        Report::Unresolved(root, f, u) => unresolved(map, sources, *root, *f, u),
    });
    made.unwrap_or_else(|caught| root_error(map, sources, root, &caught))
}

/// One chain per (call site in `root`, sink the call reaches), in call-site order: a
/// chain without a name-only hop before one with, then the shorter. The setup sinks a
/// call site reaches count as one sink: its best chain to any of them.
fn root_chains<'g>(
    map: &DefMap<'_>,
    (g, inn): (&'g CallGraph, &others::Incoming),
    s: &mut Search,
    (root, is_root): (FnId, &[bool]),
    reach: &mut HashMap<(usize, FnId), Reach<'g>>,
) -> Vec<Found<'g>> {
    let mut best: Vec<Found<'g>> = Vec::new();
    let mut index: HashMap<(SpanIr, FnId), usize> = HashMap::new();
    // What a callee reaches depends on the crates the root's program links.
    let home = map.modules[map.func(root).module as usize].krate;
    for &ei in &g.out[root as usize] {
        let e = &g.edges[ei as usize];
        let callee = map.func(e.to);
        let skip = callee.marks.allow || (callee.marks.sink.is_none() && is_root[e.to as usize]);
        if skip || !s.links(map, e.to) {
            continue;
        }
        let suffixes: &[(FnId, Found)] = if callee.marks.sink.is_some() {
            &[(e.to, (Vec::new(), Vec::new()))]
        } else {
            reach
                .entry((home, e.to))
                .or_insert_with(|| callee_reach(map, (g, inn), s, (e.to, is_root)))
        };
        for (sink, (suffix, joins)) in suffixes {
            let mut chain = Vec::with_capacity(suffix.len() + 1);
            chain.push(e);
            chain.extend(suffix.iter().copied());
            let joins = (joins.iter()).map(|j| others::Join {
                hops: j.hops + 1,
                ..*j
            });
            let found = (chain, joins.collect());
            // One-time setup reached from one call site is one finding, whichever
            // setup sinks it reaches (a module load, then its function's lookup).
            let key = match map.func(*sink).marks.sink_kind {
                SinkKind::Setup => (e.site, NONE),
                _ => (e.site, *sink),
            };
            match index.get(&key) {
                Some(&i) if rank(&found.0) < rank(&best[i].0) => best[i] = found,
                Some(_) => {}
                None => {
                    index.insert(key, best.len());
                    best.push(found);
                }
            }
        }
    }
    best
}

/// How certain a chain is (less is better): without a name-only hop first, then without
/// an undecided one, then the fewest calls in branches not known to be taken, then the
/// fewest calls that are not exact, then the fewest calls ([`best`]).
fn rank(chain: &[&Edge]) -> (bool, bool, best::Cost) {
    let name_only = chain.iter().any(|e| e.tag == Confidence::NameOnly);
    let undecided = undecided(chain).next().is_some();
    let cost = (chain.iter()).fold((0, 0, 0), |c, e| best::add(c, best::edge_cost(e)));
    (name_only, undecided, cost)
}

/// The conditions a chain's calls wait under that the lint could not decide: every edge's
/// but a failing path's in the root's own body (its first edge).
fn undecided<'e>(chain: &[&'e Edge]) -> impl Iterator<Item = &'e Edge> {
    chain
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match &e.uncertain {
            Some(Uncertain::Failing { .. }) if i == 0 => None,
            Some(_) => Some(*e),
            None => None,
        })
}

/// The sinks `callee` reaches (it is no sink and no root itself).
fn callee_reach<'g>(
    map: &DefMap<'_>,
    (g, inn): (&'g CallGraph, &others::Incoming),
    s: &mut Search,
    (callee, is_root): (FnId, &[bool]),
) -> Reach<'g> {
    let mut out = Vec::new();
    let mut found = HashSet::new();
    let passes = match g.undecided {
        true => &[Pass::Decided, Pass::Undecided, Pass::NameOnly][..],
        false => &[Pass::Decided, Pass::NameOnly][..],
    };
    for &pass in passes {
        for f in s.best(map, g, (callee, is_root), pass) {
            if f != callee && map.func(f).marks.sink.is_some() && found.insert(f) {
                let chain = s.chain(g, f);
                let joins = s.joins(map, (g, inn), (callee, is_root, pass), &chain);
                out.push((f, (chain, joins)));
            }
        }
    }
    out
}

fn root_error(
    map: &DefMap<'_>,
    sources: &SourceMap,
    root: FnId,
    caught: &crate::panics::Caught,
) -> Diagnostic {
    let f = map.func(root);
    let at = f
        .span
        .map_or_else(|| sources.first_span(), |s| sources.span(s));
    let subject = format!("from the #[no_sync] root `{}`", f.path);
    caught.diagnostic(
        "searching",
        &subject,
        "this root's chains are not all reported",
        at,
    )
}

/// What makes two findings the same, whichever crate they were found in: a file
/// included by two targets (`#[path]` from a bench into an example) gives each its
/// own copy of the fns, with the same spans but different crate paths.
type FindingKey = (
    Code,
    Option<SpanIr>,
    (Option<SpanIr>, String),
    (Option<SpanIr>, String),
);

fn finding_key(map: &DefMap<'_>, root: FnId, chain: &[&Edge]) -> FindingKey {
    let (r, sink) = (
        map.func(root),
        map.func(chain.last().map_or(root, |e| e.to)),
    );
    // Built-in sinks have no span: their path is their identity.
    let sink_id = match sink.span {
        Some(_) => sink.name.clone(),
        None => sink.path.clone(),
    };
    (
        chain_code(chain, sink).0,
        chain.first().map(|e| e.site),
        (r.span, r.name.clone()),
        (sink.span, sink_id),
    )
}
