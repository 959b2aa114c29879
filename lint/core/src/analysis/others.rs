//! The other chains from one call to one sink, besides the one a finding shows: each by
//! the call where it joins the shown chain (another caller of one of its fns, reached from
//! the same call), so that a user can see every place the wait comes from. Found from the
//! search that found the shown chain ([`Search::best`]): a fn it reached has a chain from
//! the callee, and its call of a fn of the shown chain continues along that chain.

use super::{Pass, Search};
use crate::callgraph::{CallGraph, Edge};
use crate::resolve::{DefMap, FnId};

/// Another chain: the call by which it joins the shown chain, and its length in calls from
/// the search's start to the sink.
#[derive(Debug, Clone, Copy)]
pub(super) struct Join<'g> {
    pub edge: &'g Edge,
    pub hops: usize,
}

/// Each fn's incoming edges (by index), in edge order: one offset per fn and one index
/// per edge (a `Vec` per fn would cost more than the edges on a large workspace).
#[derive(Debug, Default)]
pub(super) struct Incoming {
    start: Vec<u32>,
    edges: Vec<u32>,
}

impl Incoming {
    pub(super) fn new(g: &CallGraph, fns: usize) -> Self {
        let mut start = vec![0u32; fns + 1];
        for e in &g.edges {
            if let Some(n) = start.get_mut(e.to as usize + 1) {
                *n += 1;
            }
        }
        for i in 1..start.len() {
            start[i] += start[i - 1];
        }
        let mut next = start.clone();
        let mut edges = vec![0u32; start[fns] as usize];
        for (i, e) in g.edges.iter().enumerate() {
            if let Some(at) = next
                .get_mut(e.to as usize)
                .filter(|_| (e.to as usize) < fns)
            {
                edges[*at as usize] = i as u32;
                *at += 1;
            }
        }
        Incoming { start, edges }
    }

    /// The edges into `f`.
    fn of(&self, f: FnId) -> &[u32] {
        let (lo, hi) = (self.start.get(f as usize), self.start.get(f as usize + 1));
        match (lo, hi) {
            (Some(&lo), Some(&hi)) => &self.edges[lo as usize..hi as usize],
            _ => &[],
        }
    }
}

impl Search {
    /// The other chains of the last [`Search::best`] (from `from`, over `pass`'s edges) to
    /// the sink `chain` ends in: for each fn of `chain` after `from`, each call of it by a
    /// fn that search reached and went on from (no sink, no other root), whose own chain
    /// does not run through that fn or a later one of `chain` (no cycle), but the call
    /// `chain` makes itself. In the order of `chain`, then of the edges.
    pub(super) fn joins<'g>(
        &self,
        map: &DefMap<'_>,
        (g, inn): (&'g CallGraph, &Incoming),
        (from, is_root, pass): (FnId, &[bool], Pass),
        chain: &[&'g Edge],
    ) -> Vec<Join<'g>> {
        let mut out = Vec::new();
        for (i, shown) in chain.iter().enumerate() {
            let later: Vec<FnId> = chain[i..].iter().map(|e| e.to).collect();
            for &ei in inn.of(shown.to) {
                let e = &g.edges[ei as usize];
                let u = e.from as usize;
                let goes_on =
                    e.from == from || !(map.func(e.from).marks.sink.is_some() || is_root[u]);
                if std::ptr::eq(e, *shown)
                    || self.stamp[u] != self.generation
                    || !goes_on
                    || !pass.follows(map, e)
                {
                    continue;
                }
                let before = self.chain(g, e.from);
                if before.iter().any(|b| later.contains(&b.to)) || later.contains(&e.from) {
                    continue;
                }
                let hops = before.len() + 1 + (chain.len() - i - 1);
                out.push(Join { edge: e, hops });
            }
        }
        out
    }
}
