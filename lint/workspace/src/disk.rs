//! What the offline fallback finds on disk: the lock file's versions, the local registry's
//! unpacked crates, cargo's git checkouts, path dependencies, and their manifests.

use super::manifest::{read_patches, source_key};
use super::offline::DepDecl;
use cargo_metadata::cargo_platform::{Cfg, Platform};
use cargo_metadata::semver::Version;
use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::str::FromStr;

pub(super) const CRATES_IO: &str = "registry+https://github.com/rust-lang/crates.io-index";

/// A `[[package]]` of `Cargo.lock`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Locked {
    pub name: String,
    pub version: Version,
    pub source: Option<String>,
    /// Its `dependencies` as the lock file writes them: `name`, `name version` or
    /// `name version (source)`.
    pub deps: Vec<String>,
}

/// Where dependencies' sources may already be.
#[derive(Debug, Default)]
pub struct Disk {
    cargo_home: PathBuf,
    lock: Vec<Locked>,
    /// Whether every `[[package]]` of the lock file was read (a name, a version, string
    /// dependencies): what the guess's restricted resolution requires.
    lock_complete: bool,
    /// The unpacked registries (`registry/src/<index>/`), in order.
    indices: Vec<PathBuf>,
    /// Their crates: name → (version, directory), listed the first time a version is
    /// looked for by requirement (a locked version is looked up by directory name).
    registry: std::sync::OnceLock<HashMap<String, Vec<(Version, PathBuf)>>>,
    /// Each index's directory names (`name-version`), listed the first time a locked
    /// version is looked up: one listing instead of a `stat` per lookup and index
    /// (2 000 lookups on candle).
    dir_names: std::sync::OnceLock<Vec<HashSet<OsString>>>,
    /// The host's target triple and `cfg`s, for `[target.'cfg(..)'.dependencies]`.
    host: Option<(String, Vec<Cfg>)>,
    /// The workspace root manifest's `[patch]`: (source, package) → the replacement, as
    /// declared in the root's directory.
    patches: Patches,
}

/// `[patch.<source>]` entries by (source key, package name); see [`source_key`].
pub(super) type Patches = HashMap<(String, String), (PathBuf, DepDecl)>;

impl Disk {
    /// Reads the workspace's `Cargo.lock` (if any), lists the local registry and asks
    /// rustc for the host's cfgs.
    pub fn scan(workspace_root: &Path, cargo_home: PathBuf) -> Disk {
        let (lock, lock_complete) = std::fs::read_to_string(workspace_root.join("Cargo.lock"))
            .map(|t| parse_lock(&t))
            .unwrap_or_default();
        let indices = read_dirs(&cargo_home.join("registry/src"));
        Disk {
            cargo_home,
            lock,
            lock_complete,
            indices,
            registry: std::sync::OnceLock::new(),
            dir_names: std::sync::OnceLock::new(),
            host: host_cfg(),
            patches: read_patches(workspace_root),
        }
    }

    pub fn cargo_home(&self) -> &Path {
        &self.cargo_home
    }

    /// The lock file's packages, when it was read whole.
    pub fn lock(&self) -> Option<&[Locked]> {
        (self.lock_complete && !self.lock.is_empty()).then_some(self.lock.as_slice())
    }

    /// Whether every registry and git package of the lock file is on disk (a directory
    /// probe each; git packages are few): when one is not, `cargo metadata --frozen`
    /// fails here, and the fallback will need the whole graph.
    pub fn lock_on_disk(&self) -> bool {
        self.lock.iter().all(|l| match l.source.as_deref() {
            Some(s) if s.starts_with("git+") => self.locate_git(s, &l.name).is_some(),
            Some(_) => self.registry_dir(&l.name, &l.version).is_some(),
            None => true,
        })
    }

    /// The unpacked registry crate `name` `version`'s manifest, if it is on disk.
    pub fn registry_manifest(&self, name: &str, version: &Version) -> Option<PathBuf> {
        self.registry_dir(name, version)
            .map(|d| d.join("Cargo.toml"))
    }

    /// `name` `version`'s directory in the first registry that has it (as
    /// [`list_registry`] would find it: the directory is named `name-version`).
    fn registry_dir(&self, name: &str, version: &Version) -> Option<PathBuf> {
        let dir_name = OsString::from(format!("{name}-{version}"));
        let listed = self
            .dir_names
            .get_or_init(|| self.indices.iter().map(|i| list_dir_names(i)).collect());
        let mut indices = self.indices.iter().zip(listed);
        let (index, _) = indices.find(|(_, names)| names.contains(&dir_name))?;
        Some(index.join(dir_name))
    }

    /// Whether a `[target.X.dependencies]` platform applies to the host (unknown host: yes).
    pub fn host_matches(&self, p: &Platform) -> bool {
        self.host
            .as_ref()
            .is_none_or(|(triple, cfgs)| p.matches(triple, cfgs))
    }

    /// The manifest of the package `d` names, declared by a package in `from_dir`: the
    /// root's `[patch]` for its source and name first, as cargo does.
    pub fn locate(&self, from_dir: &Path, d: &DepDecl) -> Option<PathBuf> {
        match self.patch_for(d) {
            Some((root, patch)) => self.locate_unpatched(root, patch),
            None => self.locate_unpatched(from_dir, d),
        }
    }

    /// The git source the package `d` names comes from (`None`: a path or registry
    /// package), after the root's `[patch]`: the package's id follows it.
    pub fn git_source<'d>(&'d self, d: &'d DepDecl) -> Option<&'d str> {
        self.patch_for(d).map_or(d, |(_, p)| p).git.as_deref()
    }

    /// The `[patch]` entry that replaces `d`, if any (a path dependency is never patched).
    fn patch_for(&self, d: &DepDecl) -> Option<(&Path, &DepDecl)> {
        if d.path.is_some() || self.patches.is_empty() {
            return None;
        }
        let source = d
            .git
            .as_deref()
            .map_or_else(|| "crates-io".to_owned(), source_key);
        let (root, patch) = self.patches.get(&(source, d.package.clone()))?;
        Some((root.as_path(), patch))
    }

    fn locate_unpatched(&self, from_dir: &Path, d: &DepDecl) -> Option<PathBuf> {
        if let Some(path) = &d.path {
            let manifest = from_dir.join(path).join("Cargo.toml");
            return manifest
                .is_file()
                .then(|| nosync_lint_core::paths::normalize(&manifest));
        }
        if let Some(url) = &d.git {
            return self.locate_git(url, &d.package);
        }
        let chosen = match self.locked_version(d) {
            Some(v) => self.registry_dir(&d.package, &v),
            None => {
                let listed = self.registry.get_or_init(|| list_registry(&self.indices));
                let on_disk = listed.get(&d.package).map(Vec::as_slice).unwrap_or(&[]);
                let matching = on_disk.iter().filter(|(v, _)| d.req.matches(v));
                matching
                    .max_by(|a, b| a.0.cmp(&b.0))
                    .map(|(_, dir)| dir.clone())
            }
        };
        chosen.map(|dir| dir.join("Cargo.toml"))
    }

    /// The version the lock file has for registry dependency `d` (the newest that matches).
    pub fn locked_version(&self, d: &DepDecl) -> Option<Version> {
        let registry = |l: &&Locked| {
            l.source
                .as_deref()
                .is_some_and(|s| s.starts_with("registry+"))
        };
        self.lock
            .iter()
            .filter(|l| l.name == d.package && d.req.matches(&l.version))
            .filter(registry)
            .map(|l| l.version.clone())
            .max()
    }

    /// A git dependency: the locked commit's checkout, else any checkout of the repository.
    fn locate_git(&self, url: &str, package: &str) -> Option<PathBuf> {
        let commit = self
            .lock
            .iter()
            .find(|l| {
                l.name == package && l.source.as_deref().is_some_and(|s| s.starts_with("git+"))
            })
            .and_then(|l| {
                l.source
                    .as_deref()?
                    .rsplit_once('#')
                    .map(|(_, c)| c.to_owned())
            });
        let repo = url
            .trim_start_matches("git+")
            .split(['?', '#'])
            .next()
            .unwrap_or(url);
        let repo_name = repo
            .trim_end_matches('/')
            .trim_end_matches(".git")
            .rsplit('/')
            .next()?;
        let checkouts = self.cargo_home.join("git/checkouts");
        let mut revs: Vec<PathBuf> = read_dirs(&checkouts)
            .into_iter()
            .filter(|d| {
                d.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(&format!("{repo_name}-")))
            })
            .flat_map(|d| read_dirs(&d))
            .filter(|rev| {
                commit.as_ref().is_none_or(|c| {
                    c.starts_with(&*rev.file_name().unwrap_or_default().to_string_lossy())
                })
            })
            .collect();
        revs.sort();
        revs.iter().find_map(|rev| find_package(rev, package, 3))
    }
}

/// The lock file's packages, and whether each was read (none is left out).
fn parse_lock(text: &str) -> (Vec<Locked>, bool) {
    let Ok(table) = toml::from_str::<toml::Table>(text) else {
        return (Vec::new(), false);
    };
    let Some(packages) = table.get("package").and_then(|p| p.as_array()) else {
        return (Vec::new(), false);
    };
    let locked: Vec<Locked> = packages.iter().filter_map(locked).collect();
    let complete = locked.len() == packages.len();
    (locked, complete)
}

fn locked(p: &toml::Value) -> Option<Locked> {
    let deps = match p.get("dependencies") {
        None => Vec::new(),
        Some(d) => d
            .as_array()?
            .iter()
            .map(|d| d.as_str().map(str::to_owned))
            .collect::<Option<_>>()?,
    };
    Some(Locked {
        name: p.get("name")?.as_str()?.to_owned(),
        version: Version::parse(p.get("version")?.as_str()?).ok()?,
        source: p.get("source").and_then(|s| s.as_str()).map(str::to_owned),
        deps,
    })
}

/// `registry/src/<index>/<name>-<version>/` directories, by name.
fn list_registry(indices: &[PathBuf]) -> HashMap<String, Vec<(Version, PathBuf)>> {
    let mut out: HashMap<String, Vec<(Version, PathBuf)>> = HashMap::new();
    for index in indices {
        for dir in read_dirs(index) {
            let file = dir
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            if let Some((name, version)) = split_name_version(&file) {
                out.entry(name).or_default().push((version, dir));
            }
        }
    }
    out
}

/// `tokio-util-0.7.1` → (`tokio-util`, 0.7.1): the first `-` followed by a version.
fn split_name_version(dir: &str) -> Option<(String, Version)> {
    dir.match_indices('-').find_map(|(i, _)| {
        let v = Version::parse(&dir[i + 1..]).ok()?;
        Some((dir[..i].to_owned(), v))
    })
}

fn read_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = dir_entries(dir).map(|e| e.path()).collect();
    dirs.sort();
    dirs
}

/// The names of the directories in `dir` (a link to one counts, as `is_dir` says).
fn list_dir_names(dir: &Path) -> HashSet<OsString> {
    dir_entries(dir).map(|e| e.file_name()).collect()
}

/// The entries of `dir` that are directories, each's type without a `stat` (4 000
/// entries in a registry), but a link's target's.
fn dir_entries(dir: &Path) -> impl Iterator<Item = std::fs::DirEntry> {
    let is_dir = |e: &std::fs::DirEntry| match e.file_type() {
        Ok(t) if !t.is_symlink() => t.is_dir(),
        _ => e.path().is_dir(),
    };
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(is_dir)
}

/// The manifest of package `name` at most `depth` directories below `dir`.
fn find_package(dir: &Path, name: &str, depth: usize) -> Option<PathBuf> {
    let manifest = dir.join("Cargo.toml");
    let here = std::fs::read_to_string(&manifest)
        .ok()
        .and_then(|t| toml::from_str::<toml::Table>(&t).ok());
    let pkg_name = here
        .as_ref()
        .and_then(|t| t.get("package")?.get("name")?.as_str().map(str::to_owned));
    if pkg_name.as_deref() == Some(name) {
        return Some(manifest);
    }
    if depth == 0 {
        return None;
    }
    read_dirs(dir)
        .iter()
        .filter(|d| !d.ends_with("target") && !d.ends_with(".git"))
        .find_map(|d| find_package(d, name, depth - 1))
}

fn host_cfg() -> Option<(String, Vec<Cfg>)> {
    let asked;
    let text = match super::host_cfg_text() {
        Some(text) => text,
        None => {
            let out = super::rustc().args(["--print", "cfg"]).output().ok()?;
            asked = String::from_utf8(out.stdout).ok()?;
            asked.as_str()
        }
    };
    let cfgs = text.lines().filter_map(|l| Cfg::from_str(l).ok()).collect();
    Some((super::host_triple()?.to_owned(), cfgs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_directories_split_at_the_version() {
        let split = |d: &str| split_name_version(d).map(|(n, v)| format!("{n} {v}"));
        assert_eq!(
            split("tokio-util-0.7.1").as_deref(),
            Some("tokio-util 0.7.1")
        );
        assert_eq!(
            split("foo-1.0.0-alpha.1").as_deref(),
            Some("foo 1.0.0-alpha.1")
        );
        assert_eq!(split("no-version"), None);
    }

    #[test]
    fn lock_packages_are_read_with_their_sources() {
        let lock = "version = 4\n[[package]]\nname = \"a\"\nversion = \"1.2.3\"\nsource = \"registry+x\"\n\n[[package]]\nname = \"m\"\nversion = \"0.1.0\"\n";
        let (got, complete) = parse_lock(lock);
        assert!(complete);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].source.as_deref(), Some("registry+x"));
        assert_eq!(got[1].version, Version::new(0, 1, 0));
    }
}
