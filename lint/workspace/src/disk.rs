//! What the offline fallback finds on disk: the lock file's versions, the local registry's
//! unpacked crates, cargo's git checkouts, path dependencies, and their manifests.

use super::dep::{DepDecl, source_key};
use cargo_lock::package::SourceKind;
use cargo_lock::{Lockfile, Package, SourceId};
use cargo_metadata::cargo_platform::{Cfg, Platform};
use cargo_metadata::semver::Version;
use nosync_lint_core::diagnostics::Span;
use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::str::FromStr;

pub(super) const CRATES_IO: &str = "registry+https://github.com/rust-lang/crates.io-index";

/// The package that declares a dependency, by name and version (`None`: not known).
pub(crate) type Dependent<'a> = Option<(&'a str, &'a Version)>;

/// A lock file the fallback could not read: where, and what the parser said. Its
/// packages' versions then come from the local registry (the newest that matches).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LockUnread {
    /// In `Cargo.lock`, relative to the workspace root.
    pub span: Span,
    pub error: String,
}

/// Where dependencies' sources may already be.
#[derive(Debug, Default)]
pub struct Disk {
    cargo_home: PathBuf,
    /// The lock file's packages (none when there is none or it could not be read).
    lock: Vec<Package>,
    lock_unread: Option<LockUnread>,
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
    /// rustc for the host's cfgs; `patches`: the root manifest's `[patch]` tables
    /// (`manifest::read_patches`).
    pub fn scan(workspace_root: &Path, cargo_home: PathBuf, patches: Patches) -> Disk {
        let read =
            std::fs::read_to_string(workspace_root.join("Cargo.lock")).map(|t| parse_lock(&t));
        let (lock, lock_unread) = match read {
            Ok(Ok(lock)) => (lock, None),
            Ok(Err(unread)) => (Vec::new(), Some(unread)),
            Err(_) => (Vec::new(), None),
        };
        let indices = read_dirs(&cargo_home.join("registry/src"));
        Disk {
            cargo_home,
            lock,
            lock_unread,
            indices,
            registry: std::sync::OnceLock::new(),
            dir_names: std::sync::OnceLock::new(),
            host: host_cfg(),
            patches,
        }
    }

    pub fn cargo_home(&self) -> &Path {
        &self.cargo_home
    }

    /// The lock file's packages, when it has some and was read.
    pub fn lock(&self) -> Option<&[Package]> {
        (!self.lock.is_empty()).then_some(self.lock.as_slice())
    }

    /// Why the lock file could not be read, when it exists and could not be.
    pub fn lock_unread(&self) -> Option<&LockUnread> {
        self.lock_unread.as_ref()
    }

    /// Whether every registry and git package of the lock file is on disk (a directory
    /// probe each; git packages are few): when one is not, `cargo metadata --frozen`
    /// fails here, and the fallback will need the whole graph.
    pub fn lock_on_disk(&self) -> bool {
        self.lock.iter().all(|l| match &l.source {
            Some(s) if s.is_git() => self.locate_git(s.url().as_str(), l.name.as_str()).is_some(),
            Some(_) => self.registry_dir(l.name.as_str(), &l.version).is_some(),
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

    /// The manifest of the package `d` names, declared by package `from` (its directory,
    /// name and version): the root's `[patch]` for its source and name first, as cargo does.
    pub fn locate(&self, from: (&Path, Dependent<'_>), d: &DepDecl) -> Option<PathBuf> {
        match self.patch_for(d) {
            Some((root, patch)) => self.locate_unpatched((root, from.1), patch),
            None => self.locate_unpatched(from, d),
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

    fn locate_unpatched(
        &self,
        (from_dir, from): (&Path, Dependent<'_>),
        d: &DepDecl,
    ) -> Option<PathBuf> {
        if let Some(path) = &d.path {
            let manifest = from_dir.join(path).join("Cargo.toml");
            return manifest
                .is_file()
                .then(|| nosync_lint_core::paths::normalize(&manifest));
        }
        if let Some(url) = &d.git {
            return self.locate_git(url, &d.package);
        }
        let chosen = match self.locked_version(from, d) {
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

    /// The version the lock file has for registry dependency `d` of package `from`: the one
    /// `from`'s lock entry lists (where the lock holds two versions that match, as when two
    /// crates of a graph lock two candle-cores), else the newest that matches.
    pub fn locked_version(&self, from: Dependent<'_>, d: &DepDecl) -> Option<Version> {
        let registry = |l: &&Package| is_registry(l.source.as_ref());
        let entry = from.and_then(|(name, version)| {
            (self.lock.iter()).find(|l| l.name.as_str() == name && l.version == *version)
        });
        let listed = entry.and_then(|e| {
            let deps = e.dependencies.iter();
            deps.filter(|l| l.name.as_str() == d.package && d.req.matches(&l.version))
                .filter(|l| is_registry(l.source.as_ref()))
                .map(|l| l.version.clone())
                .max()
        });
        listed.or_else(|| {
            self.lock
                .iter()
                .filter(|l| l.name.as_str() == d.package && d.req.matches(&l.version))
                .filter(registry)
                .map(|l| l.version.clone())
                .max()
        })
    }

    /// A git dependency: the locked commit's checkout, else any checkout of the repository.
    fn locate_git(&self, url: &str, package: &str) -> Option<PathBuf> {
        let commit = self
            .lock
            .iter()
            .find(|l| l.name.as_str() == package && l.source.as_ref().is_some_and(SourceId::is_git))
            .and_then(|l| l.source.as_ref()?.precise());
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

/// Whether a lock file source is a `registry+` index (not a sparse, local or directory
/// one, whose versions the fallback does not read from the lock file).
pub(super) fn is_registry(source: Option<&SourceId>) -> bool {
    source.is_some_and(|s| *s.kind() == SourceKind::Registry)
}

/// The lock file's packages, each dependency resolved to a package's name, version and
/// source; or where and why it cannot be read: it is read whole or not at all. Parsed
/// through `toml` (`cargo_lock::Lockfile::from_str` does the same) to keep the error's place.
fn parse_lock(text: &str) -> Result<Vec<Package>, LockUnread> {
    toml::from_str::<Lockfile>(text)
        .map(|lock| lock.packages)
        .map_err(|e| {
            let at = e.span().unwrap_or(0..0);
            LockUnread {
                span: Span::in_text("Cargo.lock".into(), text, at),
                error: e.message().trim_end().to_owned(),
            }
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
    let text = match super::cargo::host_cfg_text() {
        Some(text) => text,
        None => {
            let out = super::cargo::rustc()
                .args(["--print", "cfg"])
                .output()
                .ok()?;
            asked = String::from_utf8(out.stdout).ok()?;
            asked.as_str()
        }
    };
    let cfgs = text.lines().filter_map(|l| Cfg::from_str(l).ok()).collect();
    Some((super::cargo::host_triple()?.to_owned(), cfgs))
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

    /// Every form of a dependency (`name`, `name version`, `name version (source)`) is
    /// resolved to its package; git sources keep their commit.
    #[test]
    fn lock_packages_are_read_with_their_dependencies_and_sources() {
        let lock = r#"version = 4

[[package]]
name = "app"
version = "0.1.0"
dependencies = [
 "cudarc",
 "half 2.4.1",
 "half 1.8.3",
 "gitdep 0.2.0 (git+https://github.com/o/gitdep?branch=main#0123abcd)",
]

[[package]]
name = "cudarc"
version = "0.19.0"
source = "registry+https://github.com/rust-lang/crates.io-index"
checksum = "ab8e2d1af8c1d4e1f1a0b5ab7e0cdfd51f1f1e0e6e5c4d9e0a4b0b2c1d3e4f50"

[[package]]
name = "gitdep"
version = "0.2.0"
source = "git+https://github.com/o/gitdep?branch=main#0123abcd"

[[package]]
name = "half"
version = "1.8.3"
source = "registry+https://github.com/rust-lang/crates.io-index"

[[package]]
name = "half"
version = "2.4.1"
source = "registry+https://github.com/rust-lang/crates.io-index"
"#;
        let lock = parse_lock(lock).expect("a lock file cargo writes");
        let shown: Vec<String> = lock
            .iter()
            .map(|p| {
                let deps: Vec<String> = p.dependencies.iter().map(ToString::to_string).collect();
                let source = p.source.as_ref().map(ToString::to_string);
                format!("{} {} {source:?} {deps:?}", p.name, p.version)
            })
            .collect();
        let crates_io = "(registry+https://github.com/rust-lang/crates.io-index)";
        let git = "(git+https://github.com/o/gitdep?branch=main#0123abcd)";
        assert_eq!(
            shown,
            [
                format!(
                    "app 0.1.0 None [\"cudarc 0.19.0 {crates_io}\", \"half 2.4.1 {crates_io}\", \
                     \"half 1.8.3 {crates_io}\", \"gitdep 0.2.0 {git}\"]"
                ),
                format!(
                    "cudarc 0.19.0 Some(\"{}\") []",
                    &crates_io[1..crates_io.len() - 1]
                ),
                format!("gitdep 0.2.0 Some(\"{}\") []", &git[1..git.len() - 1]),
                format!(
                    "half 1.8.3 Some(\"{}\") []",
                    &crates_io[1..crates_io.len() - 1]
                ),
                format!(
                    "half 2.4.1 Some(\"{}\") []",
                    &crates_io[1..crates_io.len() - 1]
                ),
            ]
        );
        assert_eq!(
            lock[2].source.as_ref().and_then(SourceId::precise),
            Some("0123abcd")
        );
        assert!(is_registry(lock[1].source.as_ref()));
    }

    /// A lock file with a merge conflict is not read at all (none of its versions is
    /// trusted), and says where it stops.
    #[test]
    fn a_lock_file_with_a_merge_conflict_is_unread_with_its_place() {
        let lock = "version = 4\n\n[[package]]\nname = \"a\"\n<<<<<<< HEAD\nversion = \"1.0.0\"\n=======\nversion = \"1.1.0\"\n>>>>>>> other\n";
        let unread = parse_lock(lock).expect_err("conflict markers are not TOML");
        assert_eq!(
            unread,
            LockUnread {
                span: Span {
                    file: "Cargo.lock".into(),
                    byte_start: 44,
                    byte_end: 44,
                    line_start: 5,
                    column_start: 9,
                    line_end: 5,
                    column_end: 9,
                },
                error: "key with no value, expected `=`".to_owned(),
            }
        );
    }

    /// A lock file that is TOML but not one cargo writes (a package without a version).
    #[test]
    fn a_lock_file_cargo_did_not_write_is_unread() {
        let lock = "version = 4\n[[package]]\nname = \"a\"\n";
        let unread = parse_lock(lock).expect_err("a package needs a version");
        assert_eq!(
            (unread.span.line_start, unread.error.as_str()),
            (2, "missing field `version`")
        );
    }
}
