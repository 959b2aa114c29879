//! What a resolution hands back: the packages the host's dependencies reach, the
//! fallback's account of them, and the packages and resolve nodes of the metadata, in
//! cargo's order.

use super::{Account, NodeKind, Resolver};
use anyhow::Result;
use cargo_metadata::Package;
use serde_json::{Value, json};

impl Resolver<'_> {
    /// Per node: whether the host's dependencies reach it from a member (the graph of
    /// `cargo metadata --filter-platform`).
    pub(super) fn on_host(&self, members: usize) -> Vec<bool> {
        let mut on = vec![false; self.nodes.len()];
        let mut work: Vec<usize> = (0..members.min(on.len())).collect();
        while let Some(n) = work.pop() {
            if std::mem::replace(&mut on[n], true) {
                continue;
            }
            let host =
                |(&i, t): (&usize, &Option<usize>)| (*t).filter(|_| self.nodes[n].deps[i].host);
            work.extend(self.deps_on[n].iter().filter_map(host));
        }
        on
    }

    pub(super) fn account(&self, names: &[String], reach: &[bool]) -> Account {
        Account {
            members: names
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    (
                        n.clone(),
                        self.enabled[i]
                            .iter()
                            .filter(|f| self.nodes[i].features.contains_key(*f))
                            .cloned()
                            .collect(),
                    )
                })
                .collect(),
            found: self.nodes[names.len()..]
                .iter()
                .zip(&reach[names.len()..])
                .filter(|(_, on)| **on)
                .filter_map(|(n, _)| match &n.kind {
                    NodeKind::Found(p) => Some(format!(
                        "{} {}",
                        p["name"].as_str()?,
                        p["version"].as_str()?
                    )),
                    _ => None,
                })
                .collect(),
            missing: (self.missing.iter())
                .filter(|(n, _)| reach[*n])
                .map(|(_, m)| m.clone())
                .collect(),
            lock_unread: self.disk.lock_unread().cloned(),
        }
    }

    /// The packages found or missing (as `Package`s) and the resolve graph's nodes.
    pub(super) fn into_metadata_parts(self, reach: &[bool]) -> Result<(Vec<Package>, Vec<Value>)> {
        let mut packages = Vec::new();
        let mut nodes = Vec::new();
        for (i, node) in self.nodes.iter().enumerate().filter(|(i, _)| reach[*i]) {
            if let NodeKind::Found(p) | NodeKind::Unparsed(p) = &node.kind {
                packages.push(serde_json::from_value::<Package>(p.clone())?);
            }
            let mut deps: Vec<(usize, Value)> = self.deps_on[i]
                .iter()
                .filter_map(|(&d, &t)| Some((d, t?)))
                .filter(|&(d, _)| node.deps[d].host)
                .map(|(d, t)| {
                    let decl = &node.deps[d];
                    // The extern name: the rename, else the lib target's crate name.
                    let name = match &self.nodes[t].lib {
                        Some(lib) if decl.key == decl.package => lib.clone(),
                        _ => decl.key.replace('-', "_"),
                    };
                    (
                        t,
                        json!({ "name": name, "pkg": self.nodes[t].id, "dep_kinds": [] }),
                    )
                })
                .collect();
            // As cargo lists them: by package (name, version, id), once each (a crate that
            // is a normal and a build or dev dependency is one edge). By id, not by index:
            // the order the nodes were found in differs between a full and a restricted
            // resolution (`restrict`), the ids do not.
            let order = |(t, d): &(usize, Value)| {
                let n = &self.nodes[*t];
                let id = n.id.clone();
                (
                    n.name.clone(),
                    n.version.clone(),
                    id,
                    *t,
                    d["name"].to_string(),
                )
            };
            deps.sort_by_key(order);
            deps.dedup_by(|a, b| a.0 == b.0 && a.1["name"] == b.1["name"]);
            let deps: Vec<Value> = deps.into_iter().map(|(_, d)| d).collect();
            let dependencies: Vec<&str> = deps.iter().filter_map(|d| d["pkg"].as_str()).collect();
            let features: Vec<&String> = self.enabled[i]
                .iter()
                .filter(|f| node.features.contains_key(*f))
                .collect();
            nodes.push(json!({ "id": node.id, "deps": deps, "dependencies": dependencies, "features": features }));
        }
        Ok((packages, nodes))
    }
}
