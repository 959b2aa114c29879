//! The cargo package and target each diagnostic is attributed to, in the shape of cargo's
//! JSON messages: cargo's own values when its metadata has the target, else cargo's defaults.
//!
//! Diagnostics without an [`Origin`] (configuration, baseline and workspace-level ones) are
//! attributed to the workspace's root package, or, in a virtual workspace, to its first member
//! (see [`workspace_origin`]): consumers need a package id, and the workspace manifest is where
//! such problems are fixed.

use crate::diagnostics::Origin;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The package of one diagnostic, as cargo's `compiler-message` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    pub package_id: String,
    pub manifest_path: PathBuf,
    pub target: Target,
}

/// cargo's `target` object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Target {
    pub kind: Vec<String>,
    pub crate_types: Vec<String>,
    pub name: String,
    pub src_path: String,
    pub edition: String,
    pub doc: bool,
    pub doctest: bool,
    pub test: bool,
}

/// The package of a diagnostic whose origin (its own, or the workspace's) is `origin`.
pub(crate) fn package(origin: &Origin, metadata: Option<&cargo_metadata::Metadata>) -> Package {
    Package {
        package_id: origin.package_id.clone(),
        manifest_path: origin.manifest_path.clone(),
        target: target(origin, metadata),
    }
}

/// cargo's `target` object for `origin`: cargo's own values when the metadata has the target,
/// else cargo's defaults for the target's kind (edition: the package's, or 2015, cargo's default
/// when a manifest names none).
pub fn target(origin: &Origin, metadata: Option<&cargo_metadata::Metadata>) -> Target {
    let package = metadata.and_then(|m| m.packages.iter().find(|p| p.id.repr == origin.package_id));
    let target = package.and_then(|p| {
        p.targets
            .iter()
            .find(|t| t.name == origin.target_name && kinds(t) == origin.target_kind)
    });
    match target {
        Some(t) => Target {
            kind: kinds(t),
            crate_types: t.crate_types.iter().map(ToString::to_string).collect(),
            name: t.name.clone(),
            src_path: t.src_path.to_string(),
            edition: t.edition.to_string(),
            doc: t.doc,
            doctest: t.doctest,
            test: t.test,
        },
        None => target_defaults(origin, package.map(|p| p.edition.to_string())),
    }
}

/// cargo's defaults for a target of `origin`'s kind.
fn target_defaults(origin: &Origin, edition: Option<String>) -> Target {
    let kind = origin.target_kind.first().map_or("lib", String::as_str);
    let (doc, doctest, test) = match kind {
        "lib" | "rlib" | "dylib" | "proc-macro" => (true, true, true),
        "bin" => (true, false, true),
        "test" => (false, false, true),
        _ => (false, false, false),
    };
    let crate_types = match kind {
        "bin" | "test" | "bench" | "example" | "custom-build" => vec!["bin".to_owned()],
        _ => origin.target_kind.clone(),
    };
    Target {
        kind: origin.target_kind.clone(),
        crate_types,
        name: origin.target_name.clone(),
        src_path: path_text(&origin.target_src_path),
        edition: edition.unwrap_or_else(|| "2015".to_owned()),
        doc,
        doctest,
        test,
    }
}

fn kinds(target: &cargo_metadata::Target) -> Vec<String> {
    target.kind.iter().map(ToString::to_string).collect()
}

/// The origin given to diagnostics that have none: the root package of the workspace (its
/// library, else its first target), else its first member; without metadata, a package id
/// naming the manifest's directory.
pub fn workspace_origin(
    metadata: Option<&cargo_metadata::Metadata>,
    manifest_path: &Path,
) -> Origin {
    // The package of the workspace's root manifest (whichever manifest `cargo metadata`
    // was given), else the first member.
    let package = metadata.and_then(|m| {
        let root_manifest = m.workspace_root.join("Cargo.toml");
        let members = m.workspace_packages();
        members
            .iter()
            .find(|p| p.manifest_path == root_manifest)
            .or_else(|| members.first())
            .copied()
    });
    let Some(package) = package else {
        let dir = manifest_path.parent().unwrap_or(Path::new("."));
        return Origin {
            package_id: format!("path+file://{}#workspace", path_text(dir)),
            package_name: "workspace".to_owned(),
            manifest_path: manifest_path.to_owned(),
            target_name: "workspace".to_owned(),
            target_kind: vec!["lib".to_owned()],
            target_src_path: manifest_path.to_owned(),
        };
    };
    let target = package
        .targets
        .iter()
        .find(|t| t.is_lib())
        .or_else(|| package.targets.first());
    Origin {
        package_id: package.id.repr.clone(),
        package_name: package.name.to_string(),
        manifest_path: package.manifest_path.clone().into_std_path_buf(),
        target_name: target.map_or_else(|| package.name.to_string(), |t| t.name.clone()),
        target_kind: target.map_or_else(|| vec!["lib".to_owned()], kinds),
        target_src_path: target.map_or_else(
            || package.manifest_path.clone().into_std_path_buf(),
            |t| t.src_path.clone().into_std_path_buf(),
        ),
    }
}

/// A path as cargo's JSON carries it: with `/` separators on every platform for relative
/// paths.
pub(crate) fn path_text(path: &Path) -> String {
    let text = path.to_string_lossy();
    if path.is_relative() && std::path::MAIN_SEPARATOR != '/' {
        text.replace(std::path::MAIN_SEPARATOR, "/")
    } else {
        text.into_owned()
    }
}
