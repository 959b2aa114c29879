//! A package's manifest as the offline fallback reads it from disk (a path, registry or git
//! dependency's `Cargo.toml`, with its workspace inheritance applied): its lib target, its
//! `[features]` with the implicit ones, its dependencies; and the root manifest's `[patch]`.

use super::dep::{DepDecl, source_key};
use super::disk::{CRATES_IO, Disk, Patches};
use cargo_metadata::cargo_platform::Platform;
use cargo_metadata::semver::{Version, VersionReq};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

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
        let deps = dependencies(&table, disk);
        Some(Manifest {
            lib: lib_target(&table, &name, &dir),
            version: version.unwrap_or(Version::new(0, 0, 0)),
            edition: pkg
                .get("edition")
                .and_then(|e| e.as_str())
                .unwrap_or("2015")
                .to_owned(),
            features: features(&table, &deps),
            deps,
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
        .then(|| (lib_name, nosync_lint_core::paths::normalize(&root), kinds))
}

/// The `[features]` table, with the implicit feature of each optional dependency (`deps`:
/// every platform's) that no feature names as `dep:x` (`x = ["dep:x"]`), as `cargo
/// metadata` lists them.
fn features(table: &toml::Table, deps: &[DepDecl]) -> BTreeMap<String, Vec<String>> {
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
    let implicit: Vec<String> = deps
        .iter()
        .filter(|d| d.optional && !named(&d.key) && !out.contains_key(&d.key))
        .map(|d| d.key.clone())
        .collect();
    for key in implicit {
        out.insert(key.clone(), vec![format!("dep:{key}")]);
    }
    out
}

/// The `[patch]` tables of the manifest in `root` (unreadable or absent: none).
/// Not read: `[patch]` in cargo's config files, `[replace]`, and a patch's version
/// requirement (cargo leaves a patch whose version does not match unused, with a warning).
pub(super) fn read_patches(root: &Path) -> Patches {
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

/// A package the resolver knows.
#[derive(Debug, Clone)]
pub struct Node {
    pub id: String,
    /// The package's name and version: cargo's order of packages (with the id).
    pub name: String,
    pub version: Version,
    pub kind: NodeKind,
    /// The lib target's crate name.
    pub lib: Option<String>,
    pub features: BTreeMap<String, Vec<String>>,
    pub deps: Vec<DepDecl>,
    pub manifest: PathBuf,
}

#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    /// A workspace member (its `Package` is already in the metadata).
    Member,
    /// Found on disk, with the `cargo_metadata::Package` JSON it contributes.
    Found(Value),
    /// Not parsed: a built-in crate (cudarc: its APIs are the built-in table, so its own
    /// dependencies do not matter) or a package not on disk. A package without targets,
    /// so that code naming it still resolves to it (`cudarc::..` to the built-in table).
    Unparsed(Value),
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
        let deps = dependencies(&table, &Disk::default());
        let f = features(&table, &deps);
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
}
