//! Which crates are analysed, from cargo's (or the fallback's) answer: the members and
//! the packages that can reach a GPU crate, each lib and the members' other targets
//! with their features, extern names and origins, and the metadata kept of them.

use super::{
    BUILTIN_CRATES, CrateSpec, DepTarget, GPU_CRATES, MetadataTable, Selected, Versions, Workspace,
    WorkspaceOptions, offline,
};
use cargo_metadata::{Metadata, Package, PackageId};
use nosync_lint_core::diagnostics::Origin;
use std::collections::{HashMap, HashSet};

/// The packages to analyse, in metadata order, and the members whose roots are checked,
/// with the metadata of those packages and the members.
pub(super) fn select(
    mut m: Metadata,
    opts: &WorkspaceOptions,
    fallback: Option<(String, offline::Account)>,
) -> Selected {
    let ws = selection(&m, opts);
    let keep = kept(&m, &ws);
    m.packages.retain(|p| keep.contains(p.id.repr.as_str()));
    m.resolve = None;
    Selected {
        crates: ws.crates,
        config_tables: ws.config_tables,
        metadata: m,
        fallback,
    }
}

/// [`select`], leaving `m` whole (the guess keeps the graph for the fallback): only the
/// kept packages are copied.
pub(super) fn select_shared(m: &mut Metadata, opts: &WorkspaceOptions) -> Selected {
    let ws = selection(m, opts);
    let keep = kept(m, &ws);
    let packages = m
        .packages
        .iter()
        .filter(|p| keep.contains(p.id.repr.as_str()));
    let packages: Vec<Package> = packages.cloned().collect();
    // The rest of the metadata is small: copied without the packages and the graph.
    let (all, resolve) = (std::mem::take(&mut m.packages), m.resolve.take());
    let mut metadata = m.clone();
    (m.packages, m.resolve) = (all, resolve);
    metadata.packages = packages;
    Selected {
        crates: ws.crates,
        config_tables: ws.config_tables,
        metadata,
        fallback: None,
    }
}

/// The ids of the packages whose metadata a selection keeps: the members and the analysed.
pub(super) fn kept(m: &Metadata, ws: &Workspace) -> HashSet<String> {
    let members = m.workspace_members.iter().map(|p| p.repr.clone());
    let analysed = ws.crates.iter().map(|c| c.origin.package_id.clone());
    members.chain(analysed).collect()
}

pub(super) fn selection(m: &Metadata, opts: &WorkspaceOptions) -> Workspace {
    let members: HashSet<&PackageId> = m.workspace_members.iter().collect();
    let by_id: HashMap<&PackageId, &Package> = m.packages.iter().map(|p| (&p.id, p)).collect();
    let deps_of = dep_graph(m);
    let mut gpu = gpu_dependent(m, &deps_of, &by_id);
    gpu.extend(same_repository(m, &gpu));
    let analysed: Vec<&Package> = m
        .packages
        .iter()
        .filter(|p| !BUILTIN_CRATES.contains(&p.name.as_str()))
        .filter(|p| {
            members.contains(&p.id)
                || (!opts.no_deps && (p.source.is_none() || gpu.contains(&p.id)))
        })
        .collect();
    let checked = |p: &Package| {
        members.contains(&p.id)
            && (opts.packages.is_empty() || opts.packages.iter().any(|n| *n == *p.name))
            && !opts.exclude.iter().any(|n| *n == *p.name)
    };
    let mut ws = Workspace::default();
    if has_config_table(&m.workspace_metadata) {
        ws.config_tables.push((
            m.workspace_root.join("Cargo.toml").into_std_path_buf(),
            MetadataTable::Workspace,
        ));
    }
    let lib_index = add_libs(&mut ws, &analysed, m, &checked);
    add_other_targets(&mut ws, &analysed, m, &checked, &lib_index);
    resolve_deps(&mut ws, &analysed, m, &deps_of, &lib_index);
    ws
}

/// Extern names of each package's dependencies: (name, package id).
pub(super) fn dep_graph(m: &Metadata) -> HashMap<PackageId, Vec<(String, PackageId)>> {
    let mut out = HashMap::new();
    if let Some(resolve) = &m.resolve {
        for node in &resolve.nodes {
            let deps = node
                .deps
                .iter()
                .map(|d| (d.name.clone(), d.pkg.clone()))
                .collect();
            out.insert(node.id.clone(), deps);
        }
    } else {
        // --no-deps: only dependencies between workspace members are known.
        for p in &m.packages {
            let deps = p
                .dependencies
                .iter()
                .filter_map(|d| {
                    let target = m.packages.iter().find(|q| *q.name == d.name)?;
                    let name = d
                        .rename
                        .clone()
                        .unwrap_or_else(|| d.name.clone())
                        .replace('-', "_");
                    Some((name, target.id.clone()))
                })
                .collect();
            out.insert(p.id.clone(), deps);
        }
    }
    out
}

/// Packages published from the same repository as a GPU-dependent one (cubecl-runtime
/// beside cubecl-cuda): one codebase, whose GPU parts are reached through the others'
/// traits (`ComputeClient::read` dispatches to `CudaServer`), so they are analysed too.
pub(super) fn same_repository(m: &Metadata, gpu: &HashSet<PackageId>) -> Vec<PackageId> {
    let repo = |p: &Package| p.repository.as_deref().and_then(repository_key);
    let gpu_repos = repositories(m, gpu);
    m.packages
        .iter()
        .filter(|p| !gpu.contains(&p.id) && repo(p).is_some_and(|r| gpu_repos.contains(&r)))
        .map(|p| p.id.clone())
        .collect()
}

/// The repositories of the GPU-dependent packages `gpu` (the built-in crates' aside).
pub(super) fn repositories(m: &Metadata, gpu: &HashSet<PackageId>) -> HashSet<String> {
    m.packages
        .iter()
        .filter(|p| gpu.contains(&p.id) && !BUILTIN_CRATES.contains(&p.name.as_str()))
        .filter_map(|p| p.repository.as_deref().and_then(repository_key))
        .collect()
}

/// The repositories whose packages [`same_repository`] selects in `m`.
pub(super) fn gpu_repositories(m: &Metadata) -> HashSet<String> {
    let by_id: HashMap<&PackageId, &Package> = m.packages.iter().map(|p| (&p.id, p)).collect();
    repositories(m, &gpu_dependent(m, &dep_graph(m), &by_id))
}

/// `https://github.com/tracel-ai/cubecl/tree/main/crates/x` → `github.com/tracel-ai/cubecl`.
pub(super) fn repository_key(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let rest = rest.strip_prefix("www.").unwrap_or(rest);
    let parts: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).take(3).collect();
    (parts.len() == 3).then(|| parts.join("/").trim_end_matches(".git").to_lowercase())
}

/// Packages that depend, directly or transitively, on a GPU crate.
pub(super) fn gpu_dependent(
    m: &Metadata,
    deps_of: &HashMap<PackageId, Vec<(String, PackageId)>>,
    by_id: &HashMap<&PackageId, &Package>,
) -> HashSet<PackageId> {
    let mut memo: HashMap<PackageId, bool> = HashMap::new();
    for p in &m.packages {
        let mut stack = vec![(p.id.clone(), false)];
        while let Some((id, expanded)) = stack.pop() {
            if memo.contains_key(&id) && !expanded {
                continue;
            }
            let kids = deps_of.get(&id).map(Vec::as_slice).unwrap_or(&[]);
            if expanded {
                let hit = kids.iter().any(|(_, k)| {
                    memo.get(k).copied().unwrap_or(false)
                        || by_id
                            .get(k)
                            .is_some_and(|p| GPU_CRATES.contains(&p.name.as_str()))
                });
                memo.insert(id, hit);
            } else {
                memo.insert(id.clone(), false);
                stack.push((id, true));
                stack.extend(
                    kids.iter()
                        .filter(|(_, k)| !memo.contains_key(k))
                        .map(|(_, k)| (k.clone(), false)),
                );
            }
        }
    }
    memo.into_iter()
        .filter(|(_, v)| *v)
        .map(|(k, _)| k)
        .collect()
}

pub(super) fn origin(p: &Package, t: &cargo_metadata::Target) -> Origin {
    Origin {
        package_id: p.id.repr.clone(),
        package_name: p.name.to_string(),
        manifest_path: p.manifest_path.clone().into_std_path_buf(),
        target_name: t.name.clone(),
        target_kind: t.kind.iter().map(|k| k.to_string()).collect(),
        target_src_path: t.src_path.clone().into_std_path_buf(),
    }
}

pub(super) fn enabled_features(p: &Package, m: &Metadata) -> HashSet<String> {
    if let Some(node) = m
        .resolve
        .as_ref()
        .and_then(|r| r.nodes.iter().find(|n| n.id == p.id))
    {
        return node.features.iter().map(|f| f.to_string()).collect();
    }
    // No resolve graph (--no-deps): the defaults, expanded through the feature table.
    let mut on: HashSet<String> = HashSet::new();
    let mut stack: Vec<String> = vec!["default".to_owned()];
    while let Some(f) = stack.pop() {
        if let Some(implied) = p.features.get(&f)
            && on.insert(f)
        {
            stack.extend(implied.iter().filter(|i| !i.contains(['/', ':'])).cloned());
        }
    }
    on
}

pub(super) fn is_lib(t: &cargo_metadata::Target) -> bool {
    t.kind.iter().any(|k| {
        matches!(
            k,
            cargo_metadata::TargetKind::Lib
                | cargo_metadata::TargetKind::RLib
                | cargo_metadata::TargetKind::DyLib
                | cargo_metadata::TargetKind::CDyLib
                | cargo_metadata::TargetKind::StaticLib
                | cargo_metadata::TargetKind::ProcMacro
        )
    })
}

pub(super) fn spec(
    p: &Package,
    t: &cargo_metadata::Target,
    m: &Metadata,
    check: bool,
) -> CrateSpec {
    CrateSpec {
        name: t.name.replace('-', "_"),
        root: t.src_path.clone().into_std_path_buf(),
        features: enabled_features(p, m),
        deps: Vec::new(),
        check_roots: check,
        origin: origin(p, t),
        versions: Versions {
            own: Some(p.version.to_string()),
            cudarc: None,
        },
    }
}

/// Whether a manifest's `metadata` has the lint's table, or a key that looks like a
/// misspelling of it (read too, so that the config stage says "did you mean").
fn has_config_table(metadata: &serde_json::Value) -> bool {
    let keys = metadata.as_object().into_iter().flat_map(|o| o.keys());
    keys.into_iter()
        .any(|k| nosync_lint_core::diagnostics::suggest::config_table_like(k))
}

pub(super) fn add_libs(
    ws: &mut Workspace,
    pkgs: &[&Package],
    m: &Metadata,
    checked: &dyn Fn(&Package) -> bool,
) -> HashMap<PackageId, usize> {
    let mut lib_index = HashMap::new();
    for p in pkgs {
        if checked(p) && has_config_table(&p.metadata) {
            ws.config_tables.push((
                p.manifest_path.clone().into_std_path_buf(),
                MetadataTable::Package,
            ));
        }
        if let Some(t) = p.targets.iter().find(|t| is_lib(t)) {
            lib_index.insert(p.id.clone(), ws.crates.len());
            ws.crates.push(spec(p, t, m, checked(p)));
        }
    }
    lib_index
}

/// Bins, examples, tests and benches of checked members (dependencies: lib only).
pub(super) fn add_other_targets(
    ws: &mut Workspace,
    pkgs: &[&Package],
    m: &Metadata,
    checked: &dyn Fn(&Package) -> bool,
    lib_index: &HashMap<PackageId, usize>,
) {
    for p in pkgs.iter().filter(|p| checked(p)) {
        for t in p
            .targets
            .iter()
            .filter(|t| !is_lib(t) && !t.is_kind(cargo_metadata::TargetKind::CustomBuild))
        {
            let mut s = spec(p, t, m, true);
            if let Some(&lib) = lib_index.get(&p.id) {
                s.deps
                    .push((ws.crates[lib].name.clone(), DepTarget::Analysed(lib)));
            }
            ws.crates.push(s);
        }
    }
}

pub(super) fn resolve_deps(
    ws: &mut Workspace,
    pkgs: &[&Package],
    m: &Metadata,
    deps_of: &HashMap<PackageId, Vec<(String, PackageId)>>,
    lib_index: &HashMap<PackageId, usize>,
) {
    let by_id: HashMap<&PackageId, &Package> = m.packages.iter().map(|p| (&p.id, p)).collect();
    let pkg_of_crate: Vec<Option<PackageId>> = ws
        .crates
        .iter()
        .map(|c| {
            pkgs.iter()
                .find(|p| p.id.repr == c.origin.package_id)
                .map(|p| p.id.clone())
        })
        .collect();
    for (i, pid) in pkg_of_crate.iter().enumerate() {
        let Some(pid) = pid else { continue };
        for (name, dep) in deps_of.get(pid).map(Vec::as_slice).unwrap_or(&[]) {
            // The offline fallback's cudarc without a lock file is `0.0.0`: unknown.
            let cudarc = by_id.get(dep).filter(|p| p.name.as_str() == "cudarc");
            if let Some(p) =
                cudarc.filter(|p| p.version != cargo_metadata::semver::Version::new(0, 0, 0))
            {
                ws.crates[i].versions.cudarc = Some(p.version.to_string());
            }
            let target = match lib_index.get(dep) {
                Some(&lib) => DepTarget::Analysed(lib),
                None => {
                    let real = by_id.get(dep).map_or_else(|| name.clone(), |p| lib_name(p));
                    DepTarget::External(real)
                }
            };
            ws.crates[i].deps.push((name.clone(), target));
        }
    }
}

pub(super) fn lib_name(p: &Package) -> String {
    p.targets
        .iter()
        .find(|t| is_lib(t))
        .map_or_else(|| p.name.replace('-', "_"), |t| t.name.replace('-', "_"))
}
