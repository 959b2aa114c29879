//! The guess's resolution, restricted to the packages that can change the selection.
//!
//! The offline fallback ([`offline::resolve`]) follows every dependency of the graph and
//! reads every package's manifest (2.4 s on burn-core). The selection ([`super::select`])
//! sees of that graph only the selected packages (members, path packages, packages that
//! depend on a GPU crate, packages published from the same repository as one of those),
//! their enabled features and dependency edges, and the lib targets of their direct
//! dependencies. A package's features and edges come from its own manifest and from what
//! its dependents ask of it, so they are exact when the resolution follows the
//! dependencies of the package and of every package that can depend on it, and no
//! others. The lock file gives that set without reading a manifest: every edge of the
//! resolution from a registry package leads to a locked registry version of a package
//! the lock file lists as that package's dependency (cargo locked a version satisfying
//! the requirement, and the fallback picks the highest locked one that does), so the
//! ancestors, by name, of the seeds (path and git packages, the GPU crates, the packages
//! of a GPU package's repository) in the lock file's graph are a superset of the
//! packages that can reach a seed in the resolution. The others are read as leaves (their
//! lib target, their `repository`) when a followed package depends on them, and not at
//! all otherwise.
//!
//! The same-repository seeds depend on which packages turn out GPU-dependent, so the
//! resolution runs first without them; the repositories of its GPU-dependent packages
//! (exact: every package that can reach a GPU crate is followed) name the candidates:
//! the lock file's other packages whose manifest text can contain one of those
//! repositories, whose `repository` is then read. When there are any, the resolution runs
//! again with them as seeds (the manifests already read are reused).
//!
//! Where the lock file cannot vouch for the graph the full resolution runs instead:
//! no lock file or one not read whole, a source other than a path, a git repository or a
//! `registry+` index (the fallback does not read the lock file's versions for those), a
//! registry package locked to depend on a path or git package (a `[patch]`: the fallback
//! resolves the registry's version instead, which the lock file does not describe), a
//! dependency the lock file does not list, and a package the resolution reaches from a
//! followed one that the lock file lacks (a stale lock file); for the guess, only when the
//! lock file has at most `guess::FULL_GUESS_MAX` packages (else there is no guess: the
//! whole graph costs more than the overlap saves). Weak `dep?/feat` features,
//! `dep/feat`, `dep:` and target-specific dependencies need nothing more: they act on a
//! package's own dependencies, which are followed for every package that can matter, and
//! the lock file lists a package's dependencies on every target. `package.links` plays no
//! part in the fallback's resolution. And when a package of the lock file is not on disk,
//! cargo will fail and the fallback will need the whole graph: the guess builds it (its
//! selection is the same), for the fallback to take.

use super::disk::{Disk, is_registry};
use super::offline::{self, Account, FeatureRequest, Manifests, Node, NodeKind};
use anyhow::Result;
use cargo_lock::package::SourceKind;
use cargo_lock::{Dependency, Package, SourceId};
use cargo_metadata::Metadata;
use cargo_metadata::semver::Version;
use std::collections::{HashMap, HashSet};

/// Where a package comes from, as far as the lock file tells them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Path,
    Git,
    Registry,
}

fn kind_of(source: Option<&str>) -> Option<Kind> {
    match source {
        None => Some(Kind::Path),
        Some(s) if s.starts_with("git+") => Some(Kind::Git),
        Some(s) if s.starts_with("registry+") => Some(Kind::Registry),
        Some(_) => None,
    }
}

/// A lock file package's [`Kind`] (`None`: a source the fallback does not read).
fn lock_kind(source: Option<&SourceId>) -> Option<Kind> {
    match source.map(SourceId::kind) {
        None => Some(Kind::Path),
        Some(SourceKind::Git(_)) => Some(Kind::Git),
        Some(_) if is_registry(source) => Some(Kind::Registry),
        Some(_) => None,
    }
}

/// A resolver node's package as the lock file would name it (`None`: not parsed).
fn key_of(node: &Node) -> Option<(String, Version, Kind)> {
    let kind = match &node.kind {
        NodeKind::Member => Kind::Path,
        NodeKind::Found(p) => kind_of(p["source"].as_str())?,
        NodeKind::Unparsed(_) => return None,
    };
    Some((node.name.clone(), node.version.clone(), kind))
}

/// The packages a restricted resolution follows, and those the lock file has.
#[derive(Debug)]
pub(crate) struct Relevant {
    followed: HashSet<(String, Version, Kind)>,
    locked: HashSet<(String, Version, Kind)>,
}

impl offline::Restriction for Relevant {
    /// Whether the resolution follows `node`'s dependencies (members and path and git
    /// packages always: they are seeds).
    fn expands(&self, node: &Node) -> bool {
        key_of(node).is_some_and(|k| k.2 != Kind::Registry || self.followed.contains(&k))
    }

    /// Whether the lock file has `node` (a package not parsed needs no entry).
    fn locks(&self, node: &Node) -> bool {
        key_of(node).is_none_or(|k| self.locked.contains(&k))
    }
}

/// The lock file's graph, by name: who may depend on a package of a given name.
struct LockGraph<'l> {
    lock: &'l [Package],
    dependents: HashMap<&'l str, Vec<usize>>,
}

impl<'l> LockGraph<'l> {
    /// The graph, or why the lock file cannot vouch for the resolution.
    fn of(lock: &'l [Package]) -> Result<LockGraph<'l>, String> {
        let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, l) in lock.iter().enumerate() {
            if lock_kind(l.source.as_ref()).is_none() {
                return Err(format!(
                    "{} {} has a source the fallback does not read",
                    l.name, l.version
                ));
            }
            by_name.entry(l.name.as_str()).or_default().push(i);
        }
        let mut dependents: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, l) in lock.iter().enumerate() {
            for dep in &l.dependencies {
                let targets = dep_targets(dep, lock, &by_name);
                if targets.is_empty() {
                    return Err(format!(
                        "{} {}: dependency `{dep}` is not in the lock file",
                        l.name, l.version
                    ));
                }
                let registry =
                    |j: &usize| lock_kind(lock[*j].source.as_ref()) == Some(Kind::Registry);
                if registry(&i) && !targets.iter().all(registry) {
                    return Err(format!(
                        "{} {} is locked to a patched `{}`",
                        l.name, l.version, dep.name
                    ));
                }
                dependents.entry(dep.name.as_str()).or_default().push(i);
            }
        }
        Ok(LockGraph { lock, dependents })
    }

    /// The seeds (path and git packages, the GPU crates, `extra`) and every package that
    /// may depend on one, directly or not.
    fn relevant(&self, extra: &[usize]) -> Relevant {
        let seed = |l: &Package| {
            lock_kind(l.source.as_ref()) != Some(Kind::Registry)
                || super::GPU_CRATES.contains(&l.name.as_str())
        };
        let mut on: Vec<bool> = self.lock.iter().map(seed).collect();
        for &i in extra {
            on[i] = true;
        }
        let mut work: Vec<usize> = (0..on.len()).filter(|&i| on[i]).collect();
        while let Some(i) = work.pop() {
            for &p in self
                .dependents
                .get(self.lock[i].name.as_str())
                .into_iter()
                .flatten()
            {
                if !on[p] {
                    on[p] = true;
                    work.push(p);
                }
            }
        }
        let key = |l: &Package| {
            let kind = lock_kind(l.source.as_ref()).unwrap_or(Kind::Registry);
            (l.name.to_string(), l.version.clone(), kind)
        };
        Relevant {
            followed: self
                .lock
                .iter()
                .zip(&on)
                .filter(|(_, on)| **on)
                .map(|(l, _)| key(l))
                .collect(),
            locked: self.lock.iter().map(key).collect(),
        }
    }
}

/// The lock file's packages a dependency of one of them is (its name and version, and its
/// source when it has one).
fn dep_targets(
    dep: &Dependency,
    lock: &[Package],
    by_name: &HashMap<&str, Vec<usize>>,
) -> Vec<usize> {
    let source = |j: usize| dep.source.is_none() || lock[j].source == dep.source;
    by_name
        .get(dep.name.as_str())
        .into_iter()
        .flatten()
        .copied()
        .filter(|&j| lock[j].version == dep.version && source(j))
        .collect()
}

/// The guess's resolution of `m` (from `cargo metadata --no-deps`): restricted when the
/// lock file can vouch for it, with no report then (its `found` and `missing` would be
/// those of the part it read); else the fallback's own, with its report, unless the lock
/// file has more than `full_max` packages (`Err`: why). A resolution that fails is an
/// `Err` too.
pub(crate) fn resolve(
    m: Metadata,
    req: &FeatureRequest,
    disk: &Disk,
    full_max: Option<usize>,
) -> Result<(Metadata, Option<Account>), String> {
    // A package of the lock file is not on disk: cargo cannot answer offline, the fallback
    // will, and it needs the whole graph, which the guess builds now for it to take
    // (`Offline`), whatever its size (its selection is the restricted one's).
    if disk.lock().is_some() && !disk.lock_on_disk() {
        return full(m, req, disk).map_err(|e| format!("{e:#}"));
    }
    resolve_as_lock_allows(m, req, disk, full_max)
}

/// [`resolve`] whether or not the lock file's packages are all on disk.
fn resolve_as_lock_allows(
    m: Metadata,
    req: &FeatureRequest,
    disk: &Disk,
    full_max: Option<usize>,
) -> Result<(Metadata, Option<Account>), String> {
    let graph = disk
        .lock()
        .ok_or_else(|| "no lock file read whole".to_owned());
    let restricted = graph.and_then(LockGraph::of).and_then(|graph| {
        let r = restricted(m.clone(), req, disk, &graph).map_err(|e| format!("{e:#}"))?;
        r.ok_or_else(|| "a package the resolution reaches is not in the lock file".to_owned())
    });
    let why = match restricted {
        Ok(m) => return Ok((m, None)),
        Err(why) => why,
    };
    let packages = disk.lock().map_or(0, <[Package]>::len);
    if full_max.is_some_and(|max| packages > max) {
        return Err(format!(
            "the lock file cannot restrict the guess ({why}) and has {packages} packages"
        ));
    }
    full(m, req, disk).map_err(|e| format!("{e:#}"))
}

/// The restricted resolution (`None`: the lock file lacks a package it reaches).
fn restricted(
    m: Metadata,
    req: &FeatureRequest,
    disk: &Disk,
    graph: &LockGraph<'_>,
) -> Result<Option<Metadata>> {
    let mut manifests = Manifests::new();
    let relevant = graph.relevant(&[]);
    let first = offline::resolve_with(m.clone(), req, disk, Some(&relevant), &mut manifests)?;
    if first.broken.is_some() {
        return Ok(None);
    }
    let extra = same_repository(graph, &relevant, &first.metadata, disk, &mut manifests);
    if extra.is_empty() {
        return Ok(Some(first.metadata));
    }
    let relevant = graph.relevant(&extra);
    let again = offline::resolve_with(m, req, disk, Some(&relevant), &mut manifests)?;
    Ok(again.broken.is_none().then_some(again.metadata))
}

fn full(m: Metadata, req: &FeatureRequest, disk: &Disk) -> Result<(Metadata, Option<Account>)> {
    let (m, report) = offline::resolve(m, req, disk)?;
    Ok((m, Some(report)))
}

/// The lock file's registry packages not followed in `resolved` that are published from
/// the repository of one of its GPU-dependent packages: those whose manifest text can
/// name one (its owner and name segments, in any case), and whose `repository` does.
fn same_repository(
    graph: &LockGraph<'_>,
    relevant: &Relevant,
    resolved: &Metadata,
    disk: &Disk,
    manifests: &mut Manifests,
) -> Vec<usize> {
    let repos = super::select::gpu_repositories(resolved);
    if repos.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (i, l) in graph.lock.iter().enumerate() {
        let key = (l.name.to_string(), l.version.clone(), Kind::Registry);
        if lock_kind(l.source.as_ref()) != Some(Kind::Registry) || relevant.followed.contains(&key)
        {
            continue;
        }
        let Some(path) = disk.registry_manifest(l.name.as_str(), &l.version) else {
            continue;
        };
        if !std::fs::read_to_string(&path).is_ok_and(|t| may_name(&t, &repos)) {
            continue;
        }
        let manifest = manifests
            .entry(path)
            .or_insert_with_key(|p| super::manifest::Manifest::read(p, disk));
        let repo = manifest
            .as_ref()
            .and_then(|m| m.repository())
            .and_then(super::select::repository_key);
        if repo.is_some_and(|r| repos.contains(&r)) {
            out.push(i);
        }
    }
    out
}

/// Whether a manifest's text can hold a URL whose [`super::repository_key`] is one of
/// `repos` (`host/owner/name`, lowercase): its lowercase text contains the owner and the
/// name, or it has an escape that could spell them otherwise (`\u`, `\U`, a line-ending
/// backslash), or a key is not ASCII (a final sigma lowercases by context).
fn may_name(text: &str, repos: &HashSet<String>) -> bool {
    let escapes = text.match_indices('\\').any(|(i, _)| {
        matches!(
            text.as_bytes().get(i + 1),
            Some(b'u' | b'U' | b' ' | b'\t' | b'\r' | b'\n')
        )
    });
    if escapes || repos.iter().any(|r| !r.is_ascii()) {
        return true;
    }
    // Not ASCII lowercase: a non-ASCII character can lowercase to an ASCII one (K, the
    // Kelvin sign), as it did in the key.
    let lower = text.to_lowercase();
    repos
        .iter()
        .any(|r| r.split('/').skip(1).all(|segment| lower.contains(segment)))
}

#[cfg(test)]
mod tests;
