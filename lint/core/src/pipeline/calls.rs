//! How the call sites of the walked fns were resolved, per crate: the call-resolution
//! rate `-v` prints. A call site counts once (a call dispatched to several impls, or
//! walked again in a specialised node, is one site), by its surest edge: exact, inferred,
//! name-only; a site with no edge and an unresolved call is unresolved. Calls the lint
//! knows need no edge (std's, cudarc's that block nothing) and values' drops are not
//! counted.

use crate::callgraph::CallGraph;
use crate::crate_graph::CrateSpec;
use crate::diagnostics::Confidence;
use crate::parse::ir::SpanIr;
use crate::resolve::DefMap;
use std::collections::{HashMap, HashSet};

/// One crate's call sites, by how their callee was found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CrateCalls {
    /// The crate's name as code spells it.
    pub krate: String,
    pub exact: usize,
    pub inferred: usize,
    pub name_only: usize,
    pub unresolved: usize,
}

impl CrateCalls {
    /// Every call site counted.
    pub fn total(&self) -> usize {
        self.exact + self.inferred + self.name_only + self.unresolved
    }

    /// The share of call sites resolved exactly or by inference (a name-only edge is a
    /// guess), in percent; `None` without call sites.
    pub fn resolved_percent(&self) -> Option<f64> {
        let total = self.total();
        (total > 0).then(|| 100.0 * (self.exact + self.inferred) as f64 / total as f64)
    }

    fn add(&mut self, other: &CrateCalls) {
        self.exact += other.exact;
        self.inferred += other.inferred;
        self.name_only += other.name_only;
        self.unresolved += other.unresolved;
    }
}

/// The call sites of `graph`'s walked fns, per crate (in crate order, crates without a
/// counted site left out; two crates of one name told apart by their versions), then
/// their sum as a last entry named `all`.
pub(crate) fn by_crate(
    map: &DefMap<'_>,
    graph: &CallGraph,
    crates: &[CrateSpec],
) -> Vec<CrateCalls> {
    let krate = |f| map.modules[map.func(f).module as usize].krate;
    // The surest tag of each call site (`Exact` < `Inferred` < `NameOnly`).
    let mut sites: HashMap<(usize, SpanIr), Confidence> = HashMap::new();
    for e in graph.edges.iter().filter(|e| e.dropped.is_none()) {
        let tag = sites.entry((krate(e.from), e.site)).or_insert(e.tag);
        *tag = (*tag).min(e.tag);
    }
    let mut counts = vec![CrateCalls::default(); crates.len()];
    for (&(k, _), tag) in &sites {
        let c = &mut counts[k];
        match tag {
            Confidence::Exact => c.exact += 1,
            Confidence::Inferred => c.inferred += 1,
            Confidence::NameOnly => c.name_only += 1,
        }
    }
    let mut unresolved: HashSet<(usize, SpanIr)> = HashSet::new();
    for (f, calls) in graph.unresolved.iter().enumerate() {
        for u in calls {
            let k = krate(f as u32);
            if !sites.contains_key(&(k, u.site)) && unresolved.insert((k, u.site)) {
                counts[k].unresolved += 1;
            }
        }
    }
    let mut all = CrateCalls {
        krate: "all".to_owned(),
        ..CrateCalls::default()
    };
    let mut out = Vec::new();
    for (c, spec) in counts.iter_mut().zip(crates) {
        if c.total() > 0 {
            all.add(c);
            let twins = crates.iter().filter(|o| o.name == spec.name).count();
            c.krate = match (twins > 1, version(&spec.origin.package_id)) {
                (true, Some(v)) => format!("{} {v}", spec.name),
                _ => spec.name.clone(),
            };
            out.push(std::mem::take(c));
        }
    }
    out.push(all);
    out
}

/// One root whose search reaches unresolved calls: how many, and in which crates.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RootUnseen {
    /// The root's path (`demo::train::step`).
    pub root: String,
    pub unresolved: usize,
    /// (crate, unresolved calls in it), in crate order; a crate held at two versions is
    /// named with its version, as in [`by_crate`].
    pub crates: Vec<(String, usize)>,
}

/// The roots whose search reaches unresolved calls, in root order (`-v`: a root without
/// findings and without any is one the lint saw all of).
pub(crate) fn unseen_by_root(
    map: &DefMap<'_>,
    graph: &CallGraph,
    (roots, crates): (&[crate::resolve::FnId], &[CrateSpec]),
) -> Vec<RootUnseen> {
    let name = |k: usize| {
        let spec = &crates[k];
        let twins = crates.iter().filter(|o| o.name == spec.name).count();
        match (twins > 1, version(&spec.origin.package_id)) {
            (true, Some(v)) => format!("{} {v}", spec.name),
            _ => spec.name.clone(),
        }
    };
    let unseen = crate::analysis::unresolved_below(map, graph, roots);
    (unseen.into_iter().filter(|u| u.total() > 0))
        .map(|u| RootUnseen {
            root: map.func(u.root).path.clone(),
            unresolved: u.total(),
            crates: u.by_crate.iter().map(|&(k, n)| (name(k), n)).collect(),
        })
        .collect()
}

/// The version in cargo's package id (`registry+https://..#float8@0.7.0`, `path+file://..#0.1.0`).
fn version(package_id: &str) -> Option<&str> {
    let (_, tail) = package_id.rsplit_once('#')?;
    Some(tail.rsplit_once('@').map_or(tail, |(_, v)| v))
}
