//! What the offline fallback finds on disk: the lock file's versions, the local registry's
//! unpacked crates, cargo's git checkouts, path dependencies, and their manifests.

use super::offline::{DepDecl, Node, NodeKind};
use cargo_metadata::cargo_platform::{Cfg, Platform};
use cargo_metadata::semver::{Version, VersionReq};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::str::FromStr;

const CRATES_IO: &str = "registry+https://github.com/rust-lang/crates.io-index";

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
    /// The host's target triple and `cfg`s, for `[target.'cfg(..)'.dependencies]`.
    host: Option<(String, Vec<Cfg>)>,
    /// The workspace root manifest's `[patch]`: (source, package) → the replacement, as
    /// declared in the root's directory.
    patches: Patches,
}

/// `[patch.<source>]` entries by (source key, package name); see [`source_key`].
type Patches = HashMap<(String, String), (PathBuf, DepDecl)>;

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
        let dir_name = format!("{name}-{version}");
        self.indices
            .iter()
            .map(|index| index.join(&dir_name))
            .find(|dir| dir.is_dir())
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
                .then(|| crate::paths::normalize(&manifest));
        }
        if let Some(url) = &d.git {
            return self.locate_git(url, &d.package);
        }
        let locked = self
            .lock
            .iter()
            .filter(|l| l.name == d.package && d.req.matches(&l.version))
            .filter(|l| {
                l.source
                    .as_deref()
                    .is_some_and(|s| s.starts_with("registry+"))
            })
            .map(|l| l.version.clone());
        let chosen = match locked.max() {
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
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    // The entry's type without a `stat` each (4 000 entries in a registry), but a
    // link's target's.
    let is_dir = |e: &std::fs::DirEntry| match e.file_type() {
        Ok(t) if !t.is_symlink() => t.is_dir(),
        _ => e.path().is_dir(),
    };
    let mut dirs: Vec<PathBuf> = entries.flatten().filter(is_dir).map(|e| e.path()).collect();
    dirs.sort();
    dirs
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
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = std::process::Command::new(rustc)
        .args(["--print", "cfg"])
        .output()
        .ok()?;
    let cfgs = String::from_utf8(out.stdout)
        .ok()?
        .lines()
        .filter_map(|l| Cfg::from_str(l).ok())
        .collect();
    Some((super::host_triple()?.to_owned(), cfgs))
}

/// A dependency's manifest, read for the fallback.
#[derive(Debug, Clone)]
pub struct Manifest {
    path: PathBuf,
    name: String,
    version: Version,
    edition: String,
    features: BTreeMap<String, Vec<String>>,
    deps: Vec<DepDecl>,
    /// The lib target: crate name, root file, cargo's kinds (`lib`, `proc-macro`, ..).
    lib: Option<(String, PathBuf, Vec<String>)>,
    /// `package.repository` (a registry crate's is a plain string), which selection reads
    /// for the packages published beside a GPU-dependent one.
    repository: Option<String>,
}

impl Manifest {
    /// Reads and parses `path`; `None` if it is unreadable or names no package.
    pub fn read(path: &Path, disk: &Disk) -> Option<Manifest> {
        let text = std::fs::read_to_string(path).ok()?;
        let mut table: toml::Table = toml::from_str(&text).ok()?;
        if text.contains("workspace") {
            super::inherit::apply(&mut table, path);
        }
        let pkg = table.get("package")?.as_table()?;
        let name = pkg.get("name")?.as_str()?.to_owned();
        let version = pkg
            .get("version")
            .and_then(|v| v.as_str())
            .and_then(|v| Version::parse(v).ok());
        let dir = path.parent()?.to_path_buf();
        Some(Manifest {
            lib: lib_target(&table, &name, &dir),
            version: version.unwrap_or(Version::new(0, 0, 0)),
            edition: pkg
                .get("edition")
                .and_then(|e| e.as_str())
                .unwrap_or("2015")
                .to_owned(),
            features: features(&table),
            deps: dependencies(&table, disk),
            path: path.to_path_buf(),
            repository: pkg
                .get("repository")
                .and_then(|r| r.as_str())
                .map(str::to_owned),
            name,
        })
    }

    /// `package.repository`.
    pub fn repository(&self) -> Option<&str> {
        self.repository.as_deref()
    }

    /// The resolver's node, with the `cargo_metadata::Package` JSON it contributes.
    pub fn into_node(self, git: Option<&str>, cargo_home: &Path) -> Node {
        let dir = self.path.parent().unwrap_or(Path::new("")).to_path_buf();
        let source = match git {
            Some(url) => Value::from(url),
            None if self.path.starts_with(cargo_home) => Value::from(CRATES_IO),
            None => Value::Null,
        };
        let id = match source.as_str() {
            Some(s) => format!("{s}#{}@{}", self.name, self.version),
            // Cargo's form: the name is left out when the directory is named after it.
            None if dir.file_name().is_some_and(|n| *n == *self.name) => {
                format!("path+file://{}#{}", dir.display(), self.version)
            }
            None => format!(
                "path+file://{}#{}@{}",
                dir.display(),
                self.name,
                self.version
            ),
        };
        let targets: Vec<Value> = self.lib.iter().map(|(lib, root, kinds)| {
            json!({ "name": lib, "kind": kinds, "crate_types": kinds, "src_path": root, "edition": self.edition })
        }).collect();
        let package = json!({
            "name": self.name, "version": self.version.to_string(), "id": id, "source": source,
            "dependencies": [], "targets": targets, "features": self.features,
            "manifest_path": self.path, "edition": self.edition, "repository": self.repository,
        });
        Node {
            id,
            name: self.name,
            version: self.version,
            kind: NodeKind::Found(package),
            lib: self.lib.map(|(l, _, _)| l),
            features: self.features,
            deps: self.deps,
            manifest: self.path,
        }
    }
}

fn lib_target(
    table: &toml::Table,
    name: &str,
    dir: &Path,
) -> Option<(String, PathBuf, Vec<String>)> {
    let lib = table.get("lib").and_then(|l| l.as_table());
    let get = |k: &str| lib.and_then(|l| l.get(k));
    let lib_name = get("name")
        .and_then(|n| n.as_str())
        .unwrap_or(name)
        .replace('-', "_");
    let root = get("path")
        .and_then(|p| p.as_str())
        .map_or_else(|| dir.join("src/lib.rs"), |p| dir.join(p));
    // Cargo's kinds: `proc-macro`, else the crate types, else `lib`.
    let proc_macro = get("proc-macro").or_else(|| get("proc_macro"));
    let types = get("crate-type").or_else(|| get("crate_type"));
    let kinds: Vec<String> = match (proc_macro.and_then(|p| p.as_bool()), types) {
        (Some(true), _) => vec!["proc-macro".to_owned()],
        (_, Some(toml::Value::Array(types))) => types
            .iter()
            .filter_map(|t| Some(t.as_str()?.to_owned()))
            .collect(),
        _ => vec!["lib".to_owned()],
    };
    root.is_file()
        .then(|| (lib_name, crate::paths::normalize(&root), kinds))
}

/// The `[features]` table, with the implicit feature of each optional dependency that no
/// feature names as `dep:x` (`x = ["dep:x"]`), as `cargo metadata` lists them.
fn features(table: &toml::Table) -> BTreeMap<String, Vec<String>> {
    let declared = table.get("features").and_then(|f| f.as_table());
    let mut out: BTreeMap<String, Vec<String>> = declared
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            let list = v.as_array().map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            });
            (k.clone(), list.unwrap_or_default())
        })
        .collect();
    let named = |key: &str| {
        let dep = format!("dep:{key}");
        out.values().flatten().any(|v| *v == dep)
    };
    let implicit: Vec<String> = optional_keys(table)
        .into_iter()
        .filter(|k| !named(k) && !out.contains_key(k))
        .collect();
    for key in implicit {
        out.insert(key.clone(), vec![format!("dep:{key}")]);
    }
    out
}

/// The keys of the optional dependencies, of every platform (`[dependencies]`,
/// `[build-dependencies]`, and their `[target.X.*]` tables).
fn optional_keys(table: &toml::Table) -> Vec<String> {
    const KINDS: [&str; 3] = ["dependencies", "build-dependencies", "build_dependencies"];
    let targets = table.get("target").and_then(|t| t.as_table());
    let scopes = std::iter::once(table).chain(
        targets
            .into_iter()
            .flatten()
            .filter_map(|(_, t)| t.as_table()),
    );
    let optional = |v: &toml::Value| v.get("optional").and_then(|o| o.as_bool()) == Some(true);
    scopes
        .flat_map(|t| KINDS.iter().filter_map(|k| t.get(*k)?.as_table()))
        .flat_map(|deps| {
            deps.iter()
                .filter(|(_, v)| optional(v))
                .map(|(k, _)| k.clone())
        })
        .collect()
}

/// The `[patch]` tables of the manifest in `root` (unreadable or absent: none).
/// Not read: `[patch]` in cargo's config files, `[replace]`, and a patch's version
/// requirement (cargo leaves a patch whose version does not match unused, with a warning).
fn read_patches(root: &Path) -> Patches {
    let text = std::fs::read_to_string(root.join("Cargo.toml")).unwrap_or_default();
    let table: toml::Table = text.parse().unwrap_or_default();
    let Some(patch) = table.get("patch").and_then(|p| p.as_table()) else {
        return Patches::new();
    };
    let mut out = Patches::new();
    for (source, entries) in patch {
        let key = match source.as_str() {
            "crates-io" => "crates-io".to_owned(),
            url => source_key(url),
        };
        for (name, v) in entries.as_table().into_iter().flatten() {
            if let Some(decl) = dep_decl(name, v) {
                let package = decl.package.clone();
                out.insert((key.clone(), package), (root.to_path_buf(), decl));
            }
        }
    }
    out
}

/// A git source as `[patch]` keys and dependencies compare it: without the `git+` of a
/// dependency's source, its `?rev=..` or `#commit`, a trailing `/` or `.git`, in lower
/// case (cargo canonicalises GitHub URLs so).
fn source_key(url: &str) -> String {
    let url = url.strip_prefix("git+").unwrap_or(url);
    let url = url
        .split(['?', '#'])
        .next()
        .unwrap_or(url)
        .trim_end_matches('/');
    url.strip_suffix(".git").unwrap_or(url).to_ascii_lowercase()
}

/// Normal dependencies, including `[target.X.dependencies]` that apply to the host.
fn dependencies(table: &toml::Table, disk: &Disk) -> Vec<DepDecl> {
    // Build dependencies too: cargo's resolve graph has them (and unifies their features).
    const KINDS: [&str; 3] = ["dependencies", "build-dependencies", "build_dependencies"];
    // Other platforms' too, not on the host (`DepDecl::host`): their features count.
    let mut tables: Vec<(&toml::Table, bool)> = KINDS
        .iter()
        .filter_map(|k| Some((table.get(*k)?.as_table()?, true)))
        .collect();
    if let Some(targets) = table.get("target").and_then(|t| t.as_table()) {
        for (spec, t) in targets {
            let Ok(platform) = Platform::from_str(spec) else {
                continue;
            };
            let host = disk.host_matches(&platform);
            tables.extend(
                KINDS
                    .iter()
                    .filter_map(|k| Some((t.get(*k)?.as_table()?, host))),
            );
        }
    }
    let decls = tables.iter().flat_map(|(t, host)| {
        t.iter()
            .filter_map(move |(k, v)| dep_decl(k, v).map(|d| DepDecl { host: *host, ..d }))
    });
    decls.collect()
}

fn dep_decl(key: &str, v: &toml::Value) -> Option<DepDecl> {
    let t = v.as_table();
    let get = |k: &str| t.and_then(|t| t.get(k));
    let req = match v {
        toml::Value::String(s) => s.as_str(),
        _ => get("version").and_then(|v| v.as_str()).unwrap_or("*"),
    };
    let flag = |k: &str, default: bool| get(k).and_then(|v| v.as_bool()).unwrap_or(default);
    Some(DepDecl {
        key: key.to_owned(),
        package: get("package")
            .and_then(|p| p.as_str())
            .unwrap_or(key)
            .to_owned(),
        req: VersionReq::parse(req).unwrap_or(VersionReq::STAR),
        optional: flag("optional", false),
        default_features: flag("default-features", flag("default_features", true)),
        features: get("features")
            .and_then(|f| f.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default(),
        dev: false,
        host: true,
        path: get("path").and_then(|p| p.as_str()).map(PathBuf::from),
        git: get("git")
            .and_then(|g| g.as_str())
            .map(|g| format!("git+{g}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optional_dependencies_have_implicit_features_unless_named_with_dep() {
        let table: toml::Table = r#"
            [features]
            cuda = ["cudarc", "dep:kernels", "ug?/cuda"]
            [dependencies]
            cudarc = { version = "0.19", optional = true }
            kernels = { path = "k", optional = true }
            ug = { path = "ug", optional = true }
            [target.'cfg(windows)'.dependencies]
            winapi = { version = "0.3", optional = true }
        "#
        .parse()
        .unwrap();
        let f = features(&table);
        let shown: Vec<String> = f.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
        assert_eq!(
            shown,
            [
                r#"cuda=["cudarc", "dep:kernels", "ug?/cuda"]"#,
                r#"cudarc=["dep:cudarc"]"#,
                r#"ug=["dep:ug"]"#,
                r#"winapi=["dep:winapi"]"#,
            ]
        );
    }

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
