//! The fallback when `cargo metadata` cannot resolve the dependency graph (offline with
//! an empty cache, a yanked requirement, a git dependency that cannot be fetched): the
//! graph is rebuilt from what is already on disk, as cargo would have resolved it.
//!
//! The input is `cargo metadata --no-deps` (members, their targets, `[features]` and
//! declared dependencies, all without the network). Features are applied as cargo
//! applies them: the defaults unless `--no-default-features`, `--features` (also
//! `pkg/feat`) and `--all-features` on the selected members, then every feature's
//! implications, `dep:` and implicit optional-dependency features, `dep/feat` and weak
//! `dep?/feat` (which, as in `cargo metadata`'s graph, brings its dependency into the
//! graph without naming it among the package's features), and each dependency's
//! `features = [..]` and `default-features`.
//! Dependencies are found on disk: the `Cargo.lock`'s version when there is one, else the
//! highest version in the local registry that satisfies the requirement; path
//! dependencies in place; git dependencies in cargo's checkouts. The result is a
//! [`Metadata`] with a resolve graph, so selection works exactly as after a full run.

mod output;
mod start;

pub use super::dep::DepDecl;
use super::disk::Disk;
use super::manifest::Manifest;
pub use super::manifest::{Node, NodeKind};
use anyhow::Result;

use cargo_metadata::{Metadata, Package};
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;

/// Which packages a restricted resolution follows (the guess's `restrict::Relevant`): the
/// resolver asks, the layer above it answers.
pub trait Restriction {
    /// Whether the resolution follows `node`'s dependencies.
    fn expands(&self, node: &Node) -> bool;
    /// Whether the lock file has `node`.
    fn locks(&self, node: &Node) -> bool;
}

/// What the fallback analysed and what it could not find.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Account {
    /// Each member with its enabled features.
    pub members: Vec<(String, Vec<String>)>,
    /// Dependencies found on disk, as `name version`.
    pub found: BTreeSet<String>,
    /// Dependencies not on disk, as `name req`.
    pub missing: BTreeSet<String>,
    /// Why the lock file was not read, when it exists and could not be.
    #[serde(default)]
    pub lock_unread: Option<super::disk::LockUnread>,
}

/// What the user asked for on the command line.
#[derive(Debug, Clone, Default)]
pub struct FeatureRequest {
    pub features: Vec<String>,
    pub all_features: bool,
    pub no_default_features: bool,
}

enum Act {
    Feature(usize, String),
    Dep(usize, usize),
}

struct Resolver<'d> {
    disk: &'d Disk,
    /// The packages whose dependencies are followed (all when `None`).
    only: Option<&'d dyn Restriction>,
    /// Manifests already read, by path (`None`: unreadable).
    manifests: Manifests,
    /// Why the restriction to `only` cannot be exact (a node the lock file lacks).
    broken: Option<String>,
    nodes: Vec<Node>,
    /// Per node: whether its dependencies are followed.
    expanded: Vec<bool>,
    by_manifest: HashMap<PathBuf, usize>,
    enabled: Vec<BTreeSet<String>>,
    /// Per node: enabled dependency (index into its `deps`) → the node it leads to.
    deps_on: Vec<BTreeMap<usize, Option<usize>>>,
    weak: Vec<(usize, String, String)>,
    /// Dependencies not on disk: the node standing for each, and `name req`.
    missing: Vec<(usize, String)>,
    work: Vec<Act>,
}

/// Rebuilds `m` (from `cargo metadata --no-deps`) into metadata with a resolve graph.
pub fn resolve(m: Metadata, req: &FeatureRequest, disk: &Disk) -> Result<(Metadata, Account)> {
    let r = resolve_with(m, req, disk, None, &mut Manifests::new())?;
    Ok((r.metadata, r.report))
}

/// Manifests read by a resolution, by path, for the next one to reuse.
pub type Manifests = HashMap<PathBuf, Option<Manifest>>;

/// What [`resolve_with`] made.
#[derive(Debug)]
pub struct Resolved {
    pub metadata: Metadata,
    pub report: Account,
    /// Set when the resolution was restricted and the restriction cannot be exact.
    pub broken: Option<String>,
}

/// [`resolve`], following the dependencies of `only`'s packages only when it is given
/// (the others are read, for their lib target and `repository`, but are leaves), and
/// reusing and filling `manifests`.
pub fn resolve_with(
    mut m: Metadata,
    req: &FeatureRequest,
    disk: &Disk,
    only: Option<&dyn Restriction>,
    manifests: &mut Manifests,
) -> Result<Resolved> {
    let mut r = Resolver::new(disk, only, std::mem::take(manifests));
    let members: Vec<&Package> = m.workspace_packages();
    for p in &members {
        let node = start::member_node(p, disk);
        if let Some(only) = only
            && !only.locks(&node)
        {
            r.broken = Some(format!("member `{}` is not in the lock file", node.name));
        }
        r.add(node, true);
    }
    let selected: Vec<usize> = match m.root_package() {
        Some(root) => members
            .iter()
            .position(|p| p.id == root.id)
            .into_iter()
            .collect(),
        None => (0..members.len()).collect(),
    };
    let names: Vec<String> = members.iter().map(|p| p.name.to_string()).collect();
    start::request(&mut r, req, &selected, &names)?;
    for n in 0..members.len() {
        r.start(n);
    }
    r.run();
    let reach = r.on_host(names.len());
    let report = r.account(&names, &reach);
    let broken = r.broken.take();
    *manifests = std::mem::take(&mut r.manifests);
    let (packages, nodes) = r.into_metadata_parts(&reach)?;
    m.packages.extend(packages);
    // In cargo's order (by package id: name, version, then source), which selection keeps.
    m.packages
        .sort_by(|a, b| (&a.name, &a.version, &a.id).cmp(&(&b.name, &b.version, &b.id)));
    m.resolve = Some(serde_json::from_value(
        json!({ "nodes": nodes, "root": null }),
    )?);
    Ok(Resolved {
        metadata: m,
        report,
        broken,
    })
}

impl<'d> Resolver<'d> {
    fn new(disk: &'d Disk, only: Option<&'d dyn Restriction>, manifests: Manifests) -> Self {
        Resolver {
            disk,
            only,
            manifests,
            broken: None,
            nodes: Vec::new(),
            expanded: Vec::new(),
            by_manifest: HashMap::new(),
            enabled: Vec::new(),
            deps_on: Vec::new(),
            weak: Vec::new(),
            missing: Vec::new(),
            work: Vec::new(),
        }
    }

    fn add(&mut self, node: Node, expanded: bool) -> usize {
        let i = self.nodes.len();
        self.by_manifest.insert(node.manifest.clone(), i);
        self.nodes.push(node);
        self.expanded.push(expanded);
        self.enabled.push(BTreeSet::new());
        self.deps_on.push(BTreeMap::new());
        i
    }

    /// Queues node `n`'s dependencies that are always on (not optional; dev only for members).
    fn start(&mut self, n: usize) {
        let member = self.nodes[n].kind == NodeKind::Member;
        for (i, d) in self.nodes[n].deps.iter().enumerate() {
            if !d.optional && (member || !d.dev) {
                self.work.push(Act::Dep(n, i));
            }
        }
    }

    fn run(&mut self) {
        while let Some(act) = self.work.pop() {
            match act {
                Act::Feature(n, f) => self.feature(n, f),
                Act::Dep(n, i) => self.dep(n, i),
            }
        }
    }

    fn feature(&mut self, n: usize, f: String) {
        if !self.enabled[n].insert(f.clone()) {
            return;
        }
        match self.nodes[n].features.get(&f).cloned() {
            Some(values) => values.iter().for_each(|v| self.value(n, v)),
            // An optional dependency's implicit feature.
            None => self.value(n, &format!("dep:{f}")),
        }
    }

    /// One entry of a feature's list: `feat`, `dep:x`, `x/feat` or `x?/feat`.
    fn value(&mut self, n: usize, v: &str) {
        if let Some(key) = v.strip_prefix("dep:") {
            self.enable_key(n, key);
        } else if let Some((key, feat)) = v.split_once('/') {
            match key.strip_suffix('?') {
                Some(weak) => {
                    // `cargo metadata`'s graph has the dependency, though no feature of
                    // `n` names it (its dependency resolver reads `x?/feat` as `x/feat`,
                    // rust-lang/cargo#10801): so has the fallback's.
                    self.enable_key(n, weak);
                    self.weak.push((n, weak.to_owned(), feat.to_owned()));
                    self.apply_weak(n);
                }
                None => {
                    self.enable_key(n, key);
                    // An optional dependency's implicit feature comes on with it, as in
                    // cargo (`x/feat` lists `x` among the features when `x` has one).
                    let node = &self.nodes[n];
                    let optional = node.deps.iter().any(|d| d.optional && d.key == key);
                    if optional && node.features.contains_key(key) {
                        self.work.push(Act::Feature(n, key.to_owned()));
                    }
                    self.weak.push((n, key.to_owned(), feat.to_owned()));
                    self.apply_weak(n);
                }
            }
        } else {
            self.work.push(Act::Feature(n, v.to_owned()));
        }
    }

    fn enable_key(&mut self, n: usize, key: &str) {
        let hits: Vec<usize> = (0..self.nodes[n].deps.len())
            .filter(|&i| self.nodes[n].deps[i].key == key)
            .collect();
        self.work.extend(hits.into_iter().map(|i| Act::Dep(n, i)));
    }

    /// `x/feat` and `x?/feat` of node `n` whose dependency `x` is on: `feat` on `x`.
    fn apply_weak(&mut self, n: usize) {
        let mut acts = Vec::new();
        for (_, key, feat) in self.weak.iter().filter(|w| w.0 == n) {
            for (&i, &t) in &self.deps_on[n] {
                if let Some(t) = t
                    && self.nodes[n].deps[i].key == *key
                {
                    acts.push(Act::Feature(t, feat.clone()));
                }
            }
        }
        self.work.extend(acts);
    }

    fn dep(&mut self, n: usize, i: usize) {
        // A leaf of a restricted resolution: its features are set, its dependencies unread.
        if !self.expanded[n] || self.deps_on[n].contains_key(&i) {
            return;
        }
        let d = self.nodes[n].deps[i].clone();
        let target = self.locate(n, &d);
        self.deps_on[n].insert(i, target);
        let Some(t) = target else { return };
        if d.default_features {
            self.work.push(Act::Feature(t, "default".to_owned()));
        }
        self.work
            .extend(d.features.iter().map(|f| Act::Feature(t, f.clone())));
        self.apply_weak(n);
    }

    /// The node `d` of node `n` leads to, loading it from disk the first time; a
    /// dependency not on disk leads to a [`NodeKind::Missing`] node.
    fn locate(&mut self, n: usize, d: &DepDecl) -> Option<usize> {
        let dir = self.nodes[n]
            .manifest
            .parent()
            .map(PathBuf::from)
            .unwrap_or_default();
        let builtin = super::BUILTIN_CRATES.contains(&d.package.as_str());
        let (name, version) = (self.nodes[n].name.clone(), self.nodes[n].version.clone());
        let from = Some((name.as_str(), &version));
        let found = if builtin {
            None
        } else {
            self.disk.locate((&dir, from), d)
        };
        let unparsed = || {
            let version = builtin.then(|| self.disk.locked_version(from, d)).flatten();
            start::unparsed_node(d, version)
        };
        let manifest = found.clone().unwrap_or_else(|| unparsed().manifest);
        if let Some(&t) = self.by_manifest.get(&manifest) {
            return Some(t);
        }
        let loaded = found.and_then(|m| self.read(m));
        let Some(loaded) = loaded else {
            let t = self.add(unparsed(), false);
            if !builtin {
                self.missing.push((t, format!("{} {}", d.package, d.req)));
            }
            return Some(t);
        };
        let git = self.disk.git_source(d);
        let node = loaded.into_node(git, self.disk.cargo_home());
        let expand = match self.only {
            None => true,
            Some(only) => {
                if !only.locks(&node) && self.broken.is_none() {
                    self.broken = Some(format!(
                        "{} {} is not in the lock file",
                        node.name, node.version
                    ));
                }
                only.expands(&node)
            }
        };
        let t = self.add(node, expand);
        if expand {
            self.start(t);
        }
        Some(t)
    }

    /// The manifest at `path`, read once per resolution (and across those sharing the cache).
    fn read(&mut self, path: PathBuf) -> Option<Manifest> {
        let disk = self.disk;
        if self.only.is_none() {
            // The full resolution reads each manifest once: nothing to keep.
            return Manifest::read(&path, disk);
        }
        self.manifests
            .entry(path)
            .or_insert_with_key(|p| Manifest::read(p, disk))
            .clone()
    }
}
