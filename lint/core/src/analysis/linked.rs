//! Which crates a root's program can hold. A fn of a crate that no program calling the root
//! links is never reached from it: a search from a root in crate R follows no call into
//! such a crate, even where the call graph dispatches to every impl of a trait. The
//! programs that call R are built from R or from a crate that depends on R, so they link
//! the crates those depend on: the dependency closures of R and of its dependents (an
//! application's root, which nothing depends on, reaches its own dependencies only; a
//! library's root, every crate built beside a user of it).

use crate::crate_graph::DepTarget;
use crate::resolve::DefMap;
use std::collections::VecDeque;

/// For each analysed crate, whether a program that calls into crate `root` can link it.
pub(super) fn linked_crates(map: &DefMap<'_>, root: usize) -> Vec<bool> {
    let n = map.crates.len();
    let deps: Vec<Vec<usize>> = (map.crates.iter())
        .map(|c| {
            let analysed = c.deps.values().filter_map(|d| match d {
                DepTarget::Analysed(i) if *i < n => Some(*i),
                _ => None,
            });
            analysed.collect()
        })
        .collect();
    let mut users = vec![Vec::new(); n];
    for (c, ds) in deps.iter().enumerate() {
        for &d in ds {
            users[d].push(c);
        }
    }
    let tops = reach(&users, [root]);
    reach(&deps, (0..n).filter(|&c| tops[c]))
}

/// The nodes reached from `starts` (themselves included) over `next`.
fn reach(next: &[Vec<usize>], starts: impl IntoIterator<Item = usize>) -> Vec<bool> {
    let mut seen = vec![false; next.len()];
    let mut queue: VecDeque<usize> = starts.into_iter().collect();
    for &s in &queue {
        seen[s] = true;
    }
    while let Some(c) = queue.pop_front() {
        for &d in &next[c] {
            if !seen[d] {
                seen[d] = true;
                queue.push_back(d);
            }
        }
    }
    seen
}
