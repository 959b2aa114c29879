//! What each root's search could not see: the unresolved calls below it, by crate, so that
//! "no findings" can be told from "could not see" (`-v` and the JSON statistics).

use super::{Pass, Search};
use crate::callgraph::CallGraph;
use crate::resolve::{DefMap, FnId};
use rayon::prelude::*;
use std::collections::{BTreeMap, HashSet};

/// A root and the unresolved calls its search reaches (its own body's included, another
/// root's left to that root), by crate index, in crate order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unseen {
    pub root: FnId,
    pub by_crate: Vec<(usize, usize)>,
}

impl Unseen {
    /// Every unresolved call below the root.
    pub fn total(&self) -> usize {
        self.by_crate.iter().map(|(_, n)| n).sum()
    }
}

/// [`Unseen`] for each of `roots`, in their order: every edge followed, name-only ones
/// included, as the search for findings does last. A root whose search panics is left out
/// (its findings' search reports the panic).
pub fn unresolved_below(map: &DefMap<'_>, g: &CallGraph, roots: &[FnId]) -> Vec<Unseen> {
    let mut is_root = vec![false; map.fns.len()];
    for &r in roots {
        is_root[r as usize] = true;
    }
    let is_root = &is_root[..];
    let fresh = || Search::new(map.fns.len());
    let found: Vec<Option<Unseen>> = roots
        .par_iter()
        .map_init(fresh, |s, &root| {
            let out = crate::panics::catch(|| below(map, g, s, (root, is_root)));
            if out.is_err() {
                *s = fresh();
            }
            out.ok()
        })
        .collect();
    found.into_iter().flatten().collect()
}

fn below(
    map: &DefMap<'_>,
    g: &CallGraph,
    s: &mut Search,
    (root, is_root): (FnId, &[bool]),
) -> Unseen {
    let mut counts: BTreeMap<usize, usize> = BTreeMap::new();
    let mut sites = HashSet::new();
    for f in s.run(map, g, (root, is_root), Pass::NameOnly) {
        if f != root && is_root[f as usize] {
            continue;
        }
        let krate = map.modules[map.func(f).module as usize].krate;
        for u in &g.unresolved[f as usize] {
            if sites.insert(u.site) {
                *counts.entry(krate).or_default() += 1;
            }
        }
    }
    Unseen {
        root,
        by_crate: counts.into_iter().collect(),
    }
}
