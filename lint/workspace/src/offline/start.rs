//! Where a resolution starts: the members as nodes of the graph, the command line's
//! features on the selected ones (checked as cargo checks them), and the node standing
//! for a dependency that is not parsed.

use super::{Act, DepDecl, FeatureRequest, Node, NodeKind, Resolver};
use crate::disk::Disk;
use anyhow::{Result, bail};
use cargo_metadata::semver::Version;
use cargo_metadata::{DependencyKind, Package};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The command line's features on the selected members, checked as cargo checks them.
pub(super) fn request(
    r: &mut Resolver<'_>,
    req: &FeatureRequest,
    sel: &[usize],
    names: &[String],
) -> Result<()> {
    for n in 0..names.len() {
        if !(req.no_default_features && sel.contains(&n)) {
            r.work.push(Act::Feature(n, "default".to_owned()));
        }
    }
    if req.all_features {
        for &n in sel {
            let node = &r.nodes[n];
            let optional = node
                .deps
                .iter()
                .filter(|d| d.optional)
                .map(|d| d.key.clone());
            let all: Vec<String> = node.features.keys().cloned().chain(optional).collect();
            r.work.extend(all.into_iter().map(|f| Act::Feature(n, f)));
        }
    }
    let mut unknown = Vec::new();
    for f in req
        .features
        .iter()
        .flat_map(|f| f.split([',', ' ']))
        .filter(|f| !f.is_empty())
    {
        let (targets, feat): (Vec<usize>, &str) = match f.split_once('/') {
            Some((pkg, feat)) => (
                names.iter().position(|n| n == pkg).into_iter().collect(),
                feat,
            ),
            None => (sel.to_vec(), f),
        };
        let has = |n: &usize| {
            r.nodes[*n].features.contains_key(feat)
                || r.nodes[*n].deps.iter().any(|d| d.optional && d.key == feat)
        };
        let hits: Vec<usize> = targets.into_iter().filter(has).collect();
        if hits.is_empty() {
            unknown.push(f.to_owned());
        }
        r.work
            .extend(hits.into_iter().map(|n| Act::Feature(n, feat.to_owned())));
    }
    if !unknown.is_empty() {
        bail!(
            "none of the selected packages contains these features: {}",
            unknown.join(", ")
        );
    }
    Ok(())
}

pub(super) fn member_node(p: &Package, disk: &Disk) -> Node {
    let deps = p
        .dependencies
        .iter()
        .map(|d| DepDecl {
            host: d.target.as_ref().is_none_or(|t| disk.host_matches(t)),
            key: d.rename.clone().unwrap_or_else(|| d.name.clone()),
            package: d.name.clone(),
            req: d.req.clone(),
            optional: d.optional,
            default_features: d.uses_default_features,
            features: d.features.clone(),
            dev: d.kind == DependencyKind::Development,
            path: d.path.clone().map(|p| p.into_std_path_buf()),
            git: d
                .source
                .as_ref()
                .map(|s| s.repr.clone())
                .filter(|s| s.starts_with("git+")),
        })
        .collect();
    Node {
        id: p.id.repr.clone(),
        name: p.name.to_string(),
        version: p.version.clone(),
        kind: NodeKind::Member,
        lib: p
            .targets
            .iter()
            .find(|t| crate::is_lib(t))
            .map(|t| t.name.replace('-', "_")),
        features: p.features.clone(),
        deps,
        manifest: p.manifest_path.clone().into_std_path_buf(),
    }
}

/// A dependency that is not parsed (built in, or not on disk), as a package without targets;
/// its version is the lock file's (`version`: cudarc's picks the models that hold for the
/// crates that depend on it, as cargo's answer would), else `0.0.0`, which no model reads.
pub(super) fn unparsed_node(d: &DepDecl, version: Option<Version>) -> Node {
    let id = format!("unparsed+{}#{}@{}", d.package, d.package, d.req);
    let version = version.unwrap_or(Version::new(0, 0, 0));
    let package = json!({
        "name": d.package, "version": version.to_string(), "id": id, "source": "unparsed",
        "dependencies": [], "targets": [], "features": {}, "manifest_path": "",
    });
    Node {
        id,
        name: d.package.clone(),
        version,
        kind: NodeKind::Unparsed(package),
        lib: None,
        features: BTreeMap::new(),
        deps: Vec::new(),
        manifest: PathBuf::from(format!("<unparsed {} {}>", d.package, d.req)),
    }
}
