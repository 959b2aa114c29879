//! The most certain chain from a callee to each sink it reaches, within one pass's edges:
//! fewest calls the lint does not know run (in a branch it does not know is taken,
//! `Edge::branch`, or dispatched to one of several impls of a trait), then fewest
//! calls that are not exact, then fewest calls. A chain that a user follows then runs
//! through code that runs: a shorter chain through an `if` or a `match` arm nothing
//! decides does not hide the longer one that always waits.
//!
//! Dijkstra's search over those costs, compared in that order (each is a sum over the
//! chain's edges, so a best chain's prefix is a best chain too). Among equal costs the
//! first found wins, in the order a breadth-first search finds them, so that the chain is
//! a function of the graph alone.

use super::{NONE, Pass, Search};
use crate::callgraph::{CallGraph, Edge};
use crate::diagnostics::Confidence;
use crate::resolve::{DefMap, FnId};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What a chain costs, less first: (calls not known to run, calls not exact, calls).
pub(super) type Cost = (u32, u32, u32);

/// The cost of one edge of a chain. A call dispatched to one of several impls (the
/// concrete type unknown) is, like a call in a branch, a call the lint does not know runs.
pub(super) fn edge_cost(e: &Edge) -> Cost {
    let dispatched = (e.via.dispatch.as_ref()).is_some_and(|d| d.impls > 1);
    let unknown = e.branch || dispatched;
    (u32::from(unknown), u32::from(e.tag != Confidence::Exact), 1)
}

pub(super) fn add(a: Cost, b: Cost) -> Cost {
    (a.0 + b.0, a.1 + b.1, a.2 + b.2)
}

impl Search {
    /// The fns reached from `from` over `pass`'s edges, in the order their best chains
    /// are settled; each one's chain is then [`Search::chain`]. The search stops at sinks
    /// and at other roots (`is_root`), and does not enter `#[allow_sync]` fns.
    pub(super) fn best(
        &mut self,
        map: &DefMap<'_>,
        g: &CallGraph,
        (from, is_root): (FnId, &[bool]),
        pass: Pass,
    ) -> Vec<FnId> {
        self.generation += 1;
        let mut order = Vec::new();
        let mut seq = 0u64;
        let mut heap = BinaryHeap::from([Reverse(((0, 0, 0), seq, from))]);
        self.stamp[from as usize] = self.generation;
        self.parent[from as usize] = NONE;
        self.cost[from as usize] = (0, 0, 0);
        while let Some(Reverse((c, _, f))) = heap.pop() {
            if c > self.cost[f as usize] {
                continue;
            }
            order.push(f);
            if f != from && (map.func(f).marks.sink.is_some() || is_root[f as usize]) {
                continue;
            }
            for &ei in &g.out[f as usize] {
                let e = &g.edges[ei as usize];
                let t = e.to as usize;
                if !pass.follows(map, e) || !self.links(map, e.to) {
                    continue;
                }
                let next = add(c, edge_cost(e));
                if self.stamp[t] == self.generation && next >= self.cost[t] {
                    continue;
                }
                self.stamp[t] = self.generation;
                self.parent[t] = ei;
                self.cost[t] = next;
                seq += 1;
                heap.push(Reverse((next, seq, e.to)));
            }
        }
        order
    }
}
