//! Which crates a crate can call: itself and the transitive closure of its analysed
//! dependencies (cargo metadata's resolved graph, as `DepTarget::Analysed` edges), and
//! whether cudarc is among its dependencies (its built-in sinks are then callable).
//! Guesses (name-only edges) go only where a call can go, so that they never depend on
//! which unrelated crates happen to be analysed.

use super::*;
use std::collections::HashSet;

/// What the code of one crate can call.
#[derive(Debug, Default, Clone)]
pub struct Reach {
    /// Analysed crates: this one and its dependency closure.
    pub crates: HashSet<usize>,
    /// Whether cudarc is a dependency of this crate or of one in `crates`.
    pub cudarc: bool,
}

/// The reach of every crate (a work list per crate, each crate visited once).
pub(super) fn closure(crates: &[CrateData]) -> Vec<Reach> {
    (0..crates.len())
        .map(|c| {
            let mut r = Reach::default();
            let mut work = vec![c];
            while let Some(k) = work.pop() {
                if !r.crates.insert(k) {
                    continue;
                }
                r.cudarc |= crates[k].name == "cudarc";
                for d in crates[k].deps.values() {
                    match d {
                        DepTarget::Analysed(i) if *i < crates.len() => work.push(*i),
                        DepTarget::Analysed(_) => {}
                        DepTarget::External(real) => r.cudarc |= real == "cudarc",
                    }
                }
            }
            r
        })
        .collect()
}

impl DefMap<'_> {
    /// Whether code in module `from` can call fn `f`: `f` is in a crate `from`'s crate
    /// depends on (or in that crate), or is a cudarc fn and cudarc is a dependency.
    pub fn can_call(&self, from: ModId, f: FnId) -> bool {
        let krate = self.modules[from as usize].krate;
        let Some(r) = self.reach.get(krate) else {
            return true;
        };
        let fd = self.func(f);
        if fd.ir.is_none() {
            return r.cudarc;
        }
        r.crates.contains(&self.modules[fd.module as usize].krate)
    }
}
