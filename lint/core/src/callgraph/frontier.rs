//! Which fns [`build`](super::build) walks, wave after wave: only what the search of
//! `analysis` reads. It reads a fn's edges when it expands the fn (a root, or a fn it
//! reaches that is neither a sink nor a root), and the unresolved calls of every fn it
//! reaches (a sink's among them); it never follows an edge into an `#[allow_sync]` fn,
//! and it follows name-only edges too (in its second pass). So the first wave is the
//! roots, and a walked fn that the search expands adds the callees of its edges, but
//! `allow` fns, to the next wave; a sink reached is walked (for its unresolved calls),
//! its edges are not followed and its calls are not specialised. With [`Walk::Every`]
//! every fn is in the first wave and every call is specialised: the reference that
//! demand-driven walking is tested against.
//!
//! The bounds on specialised nodes (per fn, in all, and in depth) count the calls of the
//! walked fns only: on an input past a bound, a call that every-fn walking leaves to the
//! unspecialised fn (the bound spent on calls no root reaches) may be specialised here.

use super::{Walk, Walked, specialise};
use crate::resolve::{DefMap, FnId};

/// How many times a specialised node is specialised again along a chain, at most: the
/// calls of a node this deep go to the unspecialised callees.
const MAX_DEPTH: u8 = 16;

pub(super) struct Frontier {
    walk: Walk,
    /// Per fn: put in a wave already.
    seen: Vec<bool>,
    /// Per fn: how many specialisations deep it is (0 for a declared fn).
    depth: Vec<u8>,
    /// The specialised nodes created so far.
    pub ids: specialise::Ids,
}

impl Frontier {
    pub(super) fn new(map: &DefMap<'_>, walk: Walk) -> Self {
        Frontier {
            walk,
            seen: vec![false; map.fns.len()],
            depth: vec![0; map.fns.len()],
            ids: specialise::Ids::default(),
        }
    }

    /// The roots (every fn with [`Walk::Every`]), each once.
    pub(super) fn first_wave(&mut self, map: &DefMap<'_>, roots: &[FnId]) -> Vec<FnId> {
        let candidates: Vec<FnId> = match self.walk {
            Walk::FromRoots => roots.to_vec(),
            Walk::Every => map.fn_ids().collect(),
        };
        candidates
            .into_iter()
            .filter(|&f| !std::mem::replace(&mut self.seen[f as usize], true))
            .collect()
    }

    /// After `f`'s body is walked: its calls specialised (their edges retargeted to the
    /// specialised nodes), and the callees the search can reach from it that no wave had
    /// yet pushed to `next`.
    pub(super) fn follow(
        &mut self,
        map: &mut DefMap<'_>,
        f: FnId,
        w: &mut Walked,
        next: &mut Vec<FnId>,
    ) {
        let marks = &map.func(f).marks;
        let expands = self.walk == Walk::Every || marks.root || marks.sink.is_none();
        let depth = self.depth[f as usize];
        if !expands || depth >= MAX_DEPTH {
            w.specs.clear();
        }
        if !expands {
            return;
        }
        let mut created = Vec::new();
        for (i, spec) in w.specs.drain(..) {
            let e = &mut w.edges[i];
            if let Some(id) = specialise::node(map, &mut self.ids, e.to, spec, &mut created) {
                e.to = id;
            }
        }
        self.seen.resize(map.fns.len(), false);
        self.depth.resize(map.fns.len(), 0);
        for id in created {
            self.depth[id as usize] = depth + 1;
        }
        for e in &w.edges {
            let t = e.to as usize;
            if self.seen[t] || (self.walk == Walk::FromRoots && map.func(e.to).marks.allow) {
                continue;
            }
            self.seen[t] = true;
            next.push(e.to);
        }
    }
}
