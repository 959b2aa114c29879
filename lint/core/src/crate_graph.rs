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
