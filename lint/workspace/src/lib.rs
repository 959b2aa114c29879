//! Workspace discovery through `cargo metadata`: which crates are analysed, their root
//! files, enabled features and the extern names of their dependencies.
//!
//! Analysed: the workspace members, path dependencies, registry/git dependencies that
//! depend (transitively) on `cudarc` or `nosync`, and the packages published from the same
//! repository as one of those (cubecl-runtime beside cubecl-cuda). cudarc itself is never parsed:
//! its blocking APIs come from a built-in table. `--no-deps` keeps members only. When
//! cargo cannot resolve dependencies (offline, a yanked requirement, an unreachable git
//! dependency), [`offline`] rebuilds the graph from `cargo metadata --no-deps` and what
//! is on disk, with the requested features applied as cargo would, and a
//! `workspace-fallback` warning says what was and was not analysed.
//!
//! Cargo is asked cheapest first. `cargo metadata --frozen` (`--offline --locked`)
//! succeeds only when `Cargo.lock` pins every package of the graph and each is already on
//! disk, and then its answer is the one cargo gives online: `--locked` refuses any change
//! to the lock file, so every package is the locked version (cargo's resolver keeps a
//! locked version while it satisfies its requirement, and `cargo metadata` is no `cargo
//! update`: it never moves a lock file that needs no change), and every manifest cargo
//! reads (features, targets, dependencies) is the downloaded crate or git commit the lock
//! file names, which an online run reads too. When it fails, something is missing or the
//! lock file is stale (a dependency added, a requirement changed), and cargo is asked as
//! the user would ask it: it updates the lock file and downloads what it needs. That
//! attempt does not retry a network error unless the environment says so
//! (`CARGO_NET_RETRY`): without a network cargo's three retries wait 11 s (mistral.rs)
//! before the fallback can start.

#![deny(clippy::print_stdout, clippy::print_stderr)]
// Its doc comments are for the lint's developers and name private items on purpose (`cargo doc
// --document-private-items` renders them all); the crate is not meant to be used on its own.
#![allow(rustdoc::private_intra_doc_links)]

pub mod cache;
pub mod cache_dir;
mod cargo;
mod dep;
mod disk;
mod guess;
mod inherit;
mod manifest;
pub mod offline;
mod restrict;
mod select;

pub use cargo::{CargoFailed, is_status_line};

/// One cfg of `rustc --print cfg`: `unix` is `("unix", None)`, `target_os="linux"` is
/// `("target_os", Some("linux"))`.
pub type TargetCfgPair = (String, Option<String>);

/// The cfgs of the build's target (`opts.target`, else the host), as `(name, value)`
/// pairs from `rustc --print cfg` (`--target` added when one is given), asked once per
/// process and target. `Ok(None)` when rustc cannot tell the host's; `Err` (rustc's
/// words) when it refuses the given target.
pub fn target_cfgs(opts: &WorkspaceOptions) -> Result<Option<Vec<TargetCfgPair>>, String> {
    use cargo_metadata::cargo_platform::Cfg;
    use std::str::FromStr;
    let Some(text) = cargo::target_cfg_text(opts.target.as_deref())? else {
        return Ok(None);
    };
    let pair = |cfg: Cfg| match cfg {
        Cfg::Name(name) => (name.to_string(), None),
        Cfg::KeyPair(name, value) => (name.to_string(), Some(value)),
    };
    let cfgs = text.lines().filter_map(|l| Cfg::from_str(l).ok());
    Ok(Some(cfgs.map(pair).collect()))
}
pub use guess::guess;

use cargo::{Ask, metadata};
use select::{is_lib, select, select_shared};

use anyhow::Result;
use cargo_metadata::Metadata;
pub use nosync_lint_core::crate_graph::{CrateSpec, DepTarget, MetadataTable, Versions};
use nosync_lint_core::diagnostics::{Code, Diagnostic, Span};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Crates the lint never parses: their behaviour comes from built-in tables.
pub const BUILTIN_CRATES: &[&str] = &["cudarc"];
/// Dependencies that make a registry crate worth analysing.
const GPU_CRATES: &[&str] = &["cudarc", "nosync"];

/// What to analyse, as the command line says it.
#[derive(Debug, Clone, Default)]
pub struct WorkspaceOptions {
    pub manifest_path: Option<PathBuf>,
    pub features: Vec<String>,
    pub all_features: bool,
    pub no_default_features: bool,
    pub no_deps: bool,
    /// `-p`: members whose roots are checked (all members when empty).
    pub packages: Vec<String>,
    pub exclude: Vec<String>,
    /// Whether `cargo metadata`'s answer may come from, and goes to, the cache in the
    /// target dir (`cache.rs`; `--no-cache` turns it off).
    pub cache: bool,
    /// `--target`: the triple the build is for (the host's when `None`): the platform
    /// cargo's graph is filtered for, and the cfgs `#[cfg]` predicates see.
    pub target: Option<String>,
}

/// The analysed workspace.
#[derive(Debug, Default)]
pub struct Workspace {
    pub root: PathBuf,
    pub crates: Vec<CrateSpec>,
    /// The manifests that have a `[workspace.metadata.nosync-lint]` table or (selected
    /// members) a `[package.metadata.nosync-lint]` one, and which (`config` reads them).
    pub config_tables: Vec<(PathBuf, MetadataTable)>,
    /// What `cargo metadata` said of the members and the analysed packages (the
    /// renderers take cargo's target objects from it; the rest of the graph is dropped).
    pub metadata: Option<Metadata>,
    /// Whether it came from the cache.
    pub cached: bool,
}

/// What the stage computes from cargo's answer, as the cache keeps it: the selection
/// (crate roots as cargo wrote them, normalised when loaded, so that a symlink changed
/// since is seen), the metadata of the packages it kept, and the fallback's account.
#[derive(Debug, Serialize, Deserialize)]
pub struct Selected {
    crates: Vec<CrateSpec>,
    config_tables: Vec<(PathBuf, MetadataTable)>,
    metadata: Metadata,
    fallback: Option<(String, offline::Account)>,
}

/// Runs `cargo metadata` and selects the crates to analyse.
/// Cargo's status lines (`    Updating crates.io index`, `    Blocking waiting for file
/// lock`) go to `progress` as cargo prints them, so a slow `cargo metadata` is not silent.
pub fn load(
    opts: &WorkspaceOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<(Workspace, Vec<Diagnostic>)> {
    load_with(opts, progress, &mut ())
}

/// What may run beside cargo, for [`load_with`]: started when cargo is about to be asked
/// (the cache missed; never on a hit), and asked for the offline fallback's graph when
/// cargo fails, in case it has made it already ([`guess`] makes it first).
pub trait Overlap {
    fn before_cargo(&mut self);
    /// The graph [`fallback`] would build now, if it is known.
    fn offline(&mut self) -> Option<Offline> {
        None
    }
}

impl Overlap for () {
    fn before_cargo(&mut self) {}
}

/// The offline fallback's graph and account (`cargo metadata --no-deps`, the disk and the
/// offline resolution), as [`guess`] made it.
#[derive(Debug)]
pub struct Offline {
    metadata: Metadata,
    report: offline::Account,
}

/// [`load`], with `overlap` started once when cargo is about to be asked (the cache
/// missed), so that work can overlap cargo's (the engine analyses [`guess`]'s selection
/// then); never on a cache hit.
pub fn load_with(
    opts: &WorkspaceOptions,
    progress: &mut dyn FnMut(&str),
    overlap: &mut dyn Overlap,
) -> Result<(Workspace, Vec<Diagnostic>)> {
    let slot = opts.cache.then(|| cache::Slot::of(opts)).flatten();
    let cached = slot.as_ref().and_then(cache::Slot::read);
    let hit = cached.is_some();
    let selected = match cached {
        Some(selected) => selected,
        None => {
            overlap.before_cargo();
            let (m, fallen_back) = run_cargo(opts, progress, overlap)?;
            let inputs = slot.as_ref().map(|s| s.inputs(&m, fallen_back.is_some()));
            let selected = select(m, opts, fallen_back);
            if let (Some(slot), Some(inputs)) = (&slot, inputs) {
                slot.write(inputs, &selected);
            }
            selected
        }
    };
    let (ws, fallback) = finish(selected, opts, hit)?;
    let metadata = ws.metadata.as_ref();
    let diags = fallback
        .zip(metadata)
        .map(|((said, report), m)| fallback_warnings(m, &CargoFailed(said), &report))
        .unwrap_or_default();
    Ok((ws, diags))
}

/// The workspace of a selection (crate roots normalised), and the fallback's account.
fn finish(
    selected: Selected,
    opts: &WorkspaceOptions,
    cached: bool,
) -> Result<(Workspace, Option<(String, offline::Account)>)> {
    let Selected {
        mut crates,
        config_tables,
        metadata,
        fallback,
    } = selected;
    check_packages(&metadata, opts)?;
    for c in &mut crates {
        c.root = nosync_lint_core::paths::normalize(&c.root);
    }
    let ws = Workspace {
        root: metadata.workspace_root.clone().into_std_path_buf(),
        crates,
        config_tables,
        metadata: Some(metadata),
        cached,
    };
    Ok((ws, fallback))
}

/// `cargo metadata`, or the offline fallback's graph (with what cargo said and what it
/// found) when cargo cannot resolve the dependencies.
fn run_cargo(
    opts: &WorkspaceOptions,
    progress: &mut dyn FnMut(&str),
    overlap: &mut dyn Overlap,
) -> Result<(Metadata, Option<(String, offline::Account)>)> {
    if opts.no_deps {
        return Ok((metadata(opts, Ask::NoDeps, progress)?, None));
    }
    if let Ok(m) = metadata(opts, Ask::Frozen, progress) {
        return Ok((m, None));
    }
    match metadata(opts, Ask::Online, progress) {
        Ok(m) => Ok((m, None)),
        Err(e) => {
            // The same graph as the guess's when it made one (same inputs, same function).
            let (m, report) = match overlap.offline() {
                Some(o) => (o.metadata, o.report),
                None => fallback(opts, &e, progress)?,
            };
            Ok((m, Some((e.0, report))))
        }
    }
}

/// `-p NAME` must name a workspace member (as cargo requires).
fn check_packages(m: &Metadata, opts: &WorkspaceOptions) -> Result<()> {
    let members: Vec<&str> = m
        .workspace_packages()
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    match opts
        .packages
        .iter()
        .find(|p| !members.contains(&p.as_str()))
    {
        Some(p) => anyhow::bail!(
            "package `{p}` is not a member of the workspace (members: {})",
            members.join(", ")
        ),
        None => Ok(()),
    }
}

/// The graph rebuilt offline after `cargo metadata` failed with `e`.
fn fallback(
    opts: &WorkspaceOptions,
    e: &CargoFailed,
    progress: &mut dyn FnMut(&str),
) -> Result<(Metadata, offline::Account)> {
    let said = &e.0;
    let (m, disk, req) = offline_start(opts, progress)?;
    offline::resolve(m, &req, &disk).map_err(|err| {
        anyhow::anyhow!("{err} (`cargo metadata` failed, so the lint resolved the workspace itself; cargo said: {said})")
    })
}

/// What the offline resolution starts from: `cargo metadata --no-deps`, what is on disk,
/// the features asked for.
fn offline_start(
    opts: &WorkspaceOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<(Metadata, disk::Disk, offline::FeatureRequest), CargoFailed> {
    let m = metadata(opts, Ask::NoDeps, progress)?;
    let root = m.workspace_root.as_std_path();
    let disk = disk::Disk::scan(root, cargo_home(), manifest::read_patches(root));
    let req = offline::FeatureRequest {
        features: opts.features.clone(),
        all_features: opts.all_features,
        no_default_features: opts.no_default_features,
    };
    Ok((m, disk, req))
}

/// Where cargo keeps its registry and git checkouts, as cargo finds it (`CARGO_HOME`, else
/// `~/.cargo`); empty when there is no home directory.
fn cargo_home() -> PathBuf {
    home::cargo_home().unwrap_or_default()
}

/// The fallback's warning, and the lock file's when it could not be read.
fn fallback_warnings(m: &Metadata, e: &CargoFailed, r: &offline::Account) -> Vec<Diagnostic> {
    let lock = r.lock_unread.as_ref().map(lock_warning);
    std::iter::once(fallback_warning(m, e, r))
        .chain(lock)
        .collect()
}

/// Where and why the fallback could not read the lock file, and what it did instead.
fn lock_warning(unread: &disk::LockUnread) -> Diagnostic {
    Diagnostic::new(
        Code::WorkspaceFallback,
        "`Cargo.lock` could not be read; dependency versions come from the local registry instead",
        unread.span.clone(),
    )
    .with_label(unread.error.clone())
    .with_note(
        "each dependency is the newest version on disk that its requirement accepts; \
         the rest of the workspace is analysed",
        None,
    )
    .with_help("resolve the lock file's conflict, or delete it for cargo to write it again")
}

fn fallback_warning(m: &Metadata, e: &CargoFailed, r: &offline::Account) -> Diagnostic {
    let manifest = m.workspace_root.join("Cargo.toml").into_std_path_buf();
    let span = Span::start_of(PathBuf::from("Cargo.toml"));
    let members: Vec<String> = r
        .members
        .iter()
        .map(|(name, features)| match features.as_slice() {
            [] => format!("`{name}` (no features)"),
            f => format!("`{name}` ({})", f.join(", ")),
        })
        .collect();
    let mut d = Diagnostic::new(
        Code::WorkspaceFallback,
        "cargo could not resolve the dependency graph; it was rebuilt from what is on disk",
        span,
    )
    .with_note(format!("cargo said: {}", e.0), None)
    .with_note(
        format!(
            "analysed the members with these features: {}",
            members.join("; ")
        ),
        None,
    )
    .with_note(
        format!("dependencies found on disk: {}", listed(&r.found)),
        None,
    );
    if !r.missing.is_empty() {
        let note = format!("not on disk, so not analysed: {}", listed(&r.missing));
        d = d.with_note(note, None);
    }
    d.with_help(format_args!(
        "once `cargo metadata --manifest-path {}` works, the lint uses cargo's own resolution",
        manifest.display()
    ))
}

/// At most 12 names, then how many more.
fn listed(names: &std::collections::BTreeSet<String>) -> String {
    let shown: Vec<&str> = names.iter().take(12).map(String::as_str).collect();
    match names.len() {
        0 => "none".to_owned(),
        n if n <= 12 => shown.join(", "),
        n => format!("{}, and {} more", shown.join(", "), n - 12),
    }
}

#[cfg(test)]
mod tests;
