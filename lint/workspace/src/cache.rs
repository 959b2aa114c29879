//! The workspace stage's answer kept between runs, in the workspace's directory of the
//! target dir (`metadata-<options>.json` in [`super::cache_dir::cache_dir`], never beside
//! the sources): the
//! selected crates and the metadata of their packages and of the members, not the whole
//! graph cargo printed (on candle 3.4 MB of JSON, whose parsing was most of a hit's 45 ms).
//!
//! An entry is valid while every file it depends on has the content it had: the lock
//! file, the manifests of the workspace and of every path package (members and path
//! dependencies), cargo's configuration files and the toolchain files from the workspace
//! root up, and `$CARGO_HOME/config.toml`. An answer rebuilt by the offline fallback also
//! depends on what is on disk, so it records the modification times of cargo's registry
//! and git directories too (a `cargo fetch` invalidates it). The options (features,
//! `--no-deps`, `-p`, `--exclude`, the manifest, the environment that picks cargo) name
//! the entry's file; the lint's build (its version, its executable's size and time) is in it.
//! Anything unreadable is a miss; a cache that cannot be written is no error.

use super::{Selected, WorkspaceOptions};
use cargo_metadata::Metadata;
use serde::{Deserialize, Serialize};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

/// What one run of the workspace stage computed, as stored.
#[derive(Debug, Serialize, Deserialize)]
pub struct Entry {
    /// The lint's build ([`build`]): another build never reads this entry.
    version: String,
    /// Files the answer depends on, with a digest of their content (0 when absent).
    inputs: Vec<(PathBuf, u64)>,
    selected: Selected,
}

/// Where the entry of `opts` lives (its file, which may not exist yet).
#[derive(Debug, Clone)]
pub struct Slot {
    file: PathBuf,
    /// The target dir the slot is in (an answer naming another one is not stored here).
    target: PathBuf,
    root: PathBuf,
}

impl Slot {
    /// The slot of `opts`: the workspace root found from the manifest (its first ancestor
    /// whose `Cargo.toml` has a `[workspace]`), its target dir (`CARGO_TARGET_DIR`, else
    /// `<root>/target`). `None` without a manifest.
    pub fn of(opts: &WorkspaceOptions) -> Option<Slot> {
        let manifest = match &opts.manifest_path {
            Some(p) => nosync_lint_core::paths::normalize(&std::env::current_dir().ok()?.join(p)),
            None => find_manifest(&std::env::current_dir().ok()?)?,
        };
        let root = workspace_root(&manifest)?;
        let target = match std::env::var_os("CARGO_TARGET_DIR")
            .or_else(|| std::env::var_os("CARGO_BUILD_TARGET_DIR"))
        {
            Some(t) => nosync_lint_core::paths::normalize(&std::env::current_dir().ok()?.join(t)),
            None => root.join("target"),
        };
        let file = super::cache_dir::cache_dir(&target, &root).join(format!(
            "metadata-{:016x}.json",
            options_key(opts, &manifest)
        ));
        Some(Slot { file, target, root })
    }

    /// The stored answer, if every input is as it was.
    pub fn read(&self) -> Option<Selected> {
        let text = std::fs::read(&self.file).ok()?;
        let entry: Entry = serde_json::from_slice(&text).ok()?;
        let fresh = entry.version == build() && entry.inputs.iter().all(|(p, d)| digest(p) == *d);
        fresh.then_some(entry.selected)
    }

    /// The files an answer of cargo (`offline`: of the fallback) depends on, or none
    /// when the answer would not be looked for here.
    pub fn inputs(&self, metadata: &Metadata, offline: bool) -> Vec<PathBuf> {
        let root = nosync_lint_core::paths::normalize(metadata.workspace_root.as_std_path());
        let target = nosync_lint_core::paths::normalize(metadata.target_directory.as_std_path());
        if target != self.target || root != self.root {
            // Configured elsewhere (`.cargo/config.toml`, a workspace cargo found another
            // way): the next run would not look here.
            return Vec::new();
        }
        inputs(&root, metadata, offline)
    }

    /// Stores an answer whose inputs are `inputs` (silently not, when it cannot, or when
    /// there are none: see [`Slot::inputs`]).
    pub fn write(&self, inputs: Vec<PathBuf>, selected: &Selected) {
        if inputs.is_empty() {
            return;
        }
        let inputs = inputs
            .into_iter()
            .map(|p| {
                let d = digest(&p);
                (p, d)
            })
            .collect();
        let entry = EntryRef {
            version: &build(),
            inputs,
            selected,
        };
        let Some(dir) = self.file.parent() else {
            return;
        };
        let Ok(text) = serde_json::to_vec(&entry) else {
            return;
        };
        // Written aside and renamed, so that a concurrent run never reads half an entry.
        let tmp = self
            .file
            .with_extension(format!("tmp{}", std::process::id()));
        if std::fs::create_dir_all(dir).is_ok() && std::fs::write(&tmp, text).is_ok() {
            let _ = std::fs::rename(&tmp, &self.file);
        }
        let _ = std::fs::remove_file(&tmp);
        // A miss (cargo ran): the time to prune this target dir's caches.
        super::cache_dir::prune(dir);
    }
}

/// [`Entry`] as written, borrowing what it stores.
#[derive(Serialize)]
struct EntryRef<'a> {
    version: &'a str,
    inputs: Vec<(PathBuf, u64)>,
    selected: &'a Selected,
}

/// The files (and, for an offline answer, directories) the answer depends on.
fn inputs(root: &Path, m: &Metadata, offline: bool) -> Vec<PathBuf> {
    let mut files = vec![root.join("Cargo.toml"), root.join("Cargo.lock")];
    files.extend(
        m.packages
            .iter()
            .filter(|p| p.source.is_none())
            .map(|p| p.manifest_path.clone().into_std_path_buf()),
    );
    for dir in root.ancestors() {
        for name in [
            ".cargo/config.toml",
            ".cargo/config",
            "rust-toolchain.toml",
            "rust-toolchain",
        ] {
            files.push(dir.join(name));
        }
    }
    let home = super::cargo_home();
    files.push(home.join("config.toml"));
    files.push(home.join("config"));
    if offline {
        for dir in [
            "registry/index",
            "registry/src",
            "registry/cache",
            "git/checkouts",
            "git/db",
        ] {
            let dir = home.join(dir);
            let subdirs = std::fs::read_dir(&dir).into_iter().flatten().flatten();
            files.extend(subdirs.map(|e| e.path()));
            files.push(dir);
        }
    }
    files.sort();
    files.dedup();
    files
}

/// The lint's version and its executable's size and modification time: an entry holds
/// the selection this build computed, which another build may compute otherwise.
fn build() -> String {
    let exe = std::env::current_exe().and_then(std::fs::metadata);
    let stamp = exe.map(|m| (m.len(), m.modified().ok()));
    format!("{} {:?}", env!("CARGO_PKG_VERSION"), stamp.ok())
}

/// A digest of a file's content, or of a directory's modification time; 0 when absent.
fn digest(path: &Path) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => {
            let Ok(t) = m.modified() else { return 0 };
            t.hash(&mut h);
        }
        Ok(_) => {
            let Ok(bytes) = std::fs::read(path) else {
                return 0;
            };
            bytes.hash(&mut h);
        }
        Err(_) => return 0,
    }
    h.finish() | 1
}

/// The options that change cargo's answer, and the environment that picks cargo.
fn options_key(opts: &WorkspaceOptions, manifest: &Path) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    manifest.hash(&mut h);
    opts.features.hash(&mut h);
    (opts.all_features, opts.no_default_features, opts.no_deps).hash(&mut h);
    // The selection is stored, and `-p` / `--exclude` choose which members are checked.
    (&opts.packages, &opts.exclude).hash(&mut h);
    // `--target` filters cargo's graph for its platform.
    opts.target.hash(&mut h);
    for var in [
        "CARGO",
        "RUSTUP_TOOLCHAIN",
        "CARGO_HOME",
        "RUSTC",
        "CARGO_NET_OFFLINE",
    ] {
        std::env::var_os(var).hash(&mut h);
    }
    h.finish()
}

/// The nearest `Cargo.toml` at or above `dir` (as cargo looks for it).
fn find_manifest(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .map(|d| d.join("Cargo.toml"))
        .find(|p| p.is_file())
}

/// The first ancestor of `manifest`'s directory (itself included) whose `Cargo.toml` has a
/// `[workspace]` table; the manifest's own directory when none has.
fn workspace_root(manifest: &Path) -> Option<PathBuf> {
    let own = manifest.parent()?;
    let has_workspace = |dir: &Path| {
        let text = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap_or_default();
        text.contains("[workspace")
            && text
                .parse::<toml::Table>()
                .is_ok_and(|t| t.contains_key("workspace"))
    };
    Some(
        own.ancestors()
            .find(|d| has_workspace(d))
            .unwrap_or(own)
            .to_path_buf(),
    )
}
