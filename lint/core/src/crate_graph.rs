//! The crate graph the analysis reads: each crate to analyse, its root file, features and
//! the extern names of its dependencies. Plain data: the workspace crate computes it from
//! `cargo metadata`, tests and fuzz targets write it by hand, and `resolve` reads it.

use crate::diagnostics::Origin;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::path::PathBuf;

/// Where an extern crate name leads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum DepTarget {
    /// The lib target of an analysed package (index into the analysed crates).
    Analysed(usize),
    /// A crate that is not parsed, by its real crate name (`cudarc`, `serde`).
    External(String),
}

/// One crate (a target of a package) to analyse.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrateSpec {
    /// The crate name as code spells it (`candle_core`).
    pub name: String,
    pub root: PathBuf,
    pub features: HashSet<String>,
    /// Extern names in scope (`cudarc`, a renamed `cu`, the package's own lib for bins).
    pub deps: Vec<(String, DepTarget)>,
    /// Whether `#[no_sync]` roots of this crate are checked (selected members).
    pub check_roots: bool,
    pub origin: Origin,
    /// The versions that choose which library models hold for the crate.
    pub versions: Versions,
}

/// A crate's package version and the version of the cudarc package it depends on (cargo
/// metadata's): the shipped models hold for some versions of their library only
/// (`known::models`), and one build may hold two cudarc versions (mistral.rs: 0.19 and 0.17).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Versions {
    /// The package's version (`0.9.2`).
    pub own: Option<String>,
    /// The version of the `cudarc` this crate depends on directly, if it does.
    pub cudarc: Option<String>,
}

/// Which `[*.metadata]` table of a manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum MetadataTable {
    Workspace,
    Package,
}

/// The name each crate's items carry in canonical paths (`candle_core::tensor::Tensor`): its
/// crate name, unless another package of `crates` has that name too (two versions of
/// candle-core in one graph). Then the newest version keeps the name and each other takes
/// `name@version` (`candle_core@0.6.0`), so that no type, method or impl of one version
/// is taken for the other's, and a chain through the older one says so.
pub fn path_names(crates: &[CrateSpec]) -> Vec<String> {
    use cargo_metadata::semver::Version;
    let mut packages: std::collections::HashMap<&str, Vec<(&str, Option<&str>)>> =
        std::collections::HashMap::new();
    for c in crates {
        let list = packages.entry(&c.name).or_default();
        let id = c.origin.package_id.as_str();
        if !list.iter().any(|(p, _)| *p == id) {
            list.push((id, c.versions.own.as_deref()));
        }
    }
    let parse = |v: Option<&str>| v.and_then(|v| Version::parse(v).ok());
    crates
        .iter()
        .map(|c| {
            let list = &packages[c.name.as_str()];
            // The newest (the first of the newest, where versions tie or do not parse).
            let newest = (0..list.len())
                .rev()
                .max_by(|&a, &b| parse(list[a].1).cmp(&parse(list[b].1)))
                .unwrap_or(0);
            let at = list.iter().position(|(p, _)| *p == c.origin.package_id);
            match at {
                Some(i) if i != newest => {
                    let version = list[i].1.unwrap_or("unknown");
                    let same = list.iter().filter(|(_, v)| *v == list[i].1).count();
                    if same > 1 {
                        format!("{}@{version}#{i}", c.name)
                    } else {
                        format!("{}@{version}", c.name)
                    }
                }
                _ => c.name.clone(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn krate(name: &str, package: &str, version: Option<&str>) -> CrateSpec {
        let mut c = crate::test_support::spec(name, PathBuf::from(format!("/{package}/lib.rs")));
        c.origin.package_id = package.to_owned();
        c.versions.own = version.map(str::to_owned);
        c
    }

    /// The newest of a name keeps it, a lib and its bins (one package) share it, and two
    /// packages at one version are told apart by their place.
    #[test]
    fn only_the_older_versions_of_a_shared_name_are_renamed() {
        let crates = [
            krate("candle_core", "cc 0.6.0", Some("0.6.0")),
            krate("candle_core", "cc 0.7.2", Some("0.7.2")),
            krate("app", "app", Some("0.1.0")),
            krate("app", "app", Some("0.1.0")),
            krate("gpu", "gpu a", Some("1.0.0")),
            krate("gpu", "gpu b", Some("1.0.0")),
            krate("x", "x 1", None),
            krate("x", "x 2", Some("0.1.0")),
        ];
        assert_eq!(
            path_names(&crates),
            [
                "candle_core@0.6.0",
                "candle_core",
                "app",
                "app",
                "gpu",
                "gpu@1.0.0#1",
                "x@unknown",
                "x"
            ]
        );
    }
}
