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

pub mod cache;
mod disk;
mod guess;
mod inherit;
mod manifest;
pub mod offline;
mod restrict;

pub use guess::guess;

use crate::diagnostics::{Code, Diagnostic, Origin, Span};
use anyhow::Result;
use cargo_metadata::{CargoOpt, Metadata, MetadataCommand, Package, PackageId};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
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
    /// target dir ([`cache`]; `--no-cache` turns it off).
    pub cache: bool,
}

/// Where an extern crate name leads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum DepTarget {
    /// The lib target of an analysed package (index into [`Workspace::crates`]).
    Analysed(usize),
    /// A crate that is not parsed, by its real crate name (`cudarc`, `serde`).
    External(String),
}

/// One crate (a target of a package) to analyse.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrateSpec {
    /// The crate name as code spells it (`candle_core`).
    pub name: String,
    pub root: PathBuf,
    pub features: HashSet<String>,
    /// Extern names in scope (`cudarc`, a renamed `cu`, the package's own lib for bins).
    pub deps: Vec<(String, DepTarget)>,
    /// Whether `#[no_sync]` roots of this crate are checked (selected members).
    pub check_roots: bool,
    pub origin: Origin,
}

/// Which `[*.metadata]` table of a manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum MetadataTable {
    Workspace,
    Package,
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
    fallback: Option<(String, offline::Report)>,
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
    report: offline::Report,
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
        .map(|((said, report), m)| fallback_warning(m, &CargoFailed(said), &report))
        .into_iter()
        .collect();
    Ok((ws, diags))
}

/// The workspace of a selection (crate roots normalised), and the fallback's account.
fn finish(
    selected: Selected,
    opts: &WorkspaceOptions,
    cached: bool,
) -> Result<(Workspace, Option<(String, offline::Report)>)> {
    let Selected {
        mut crates,
        config_tables,
        metadata,
        fallback,
    } = selected;
    check_packages(&metadata, opts)?;
    for c in &mut crates {
        c.root = crate::paths::normalize(&c.root);
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
) -> Result<(Metadata, Option<(String, offline::Report)>)> {
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

/// How `cargo metadata` is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ask {
    /// `--no-deps`: the members alone, never the network.
    NoDeps,
    /// `--frozen` (`--offline --locked`): the lock file as it is and what is already
    /// downloaded; it fails when the lock file would change or something is missing.
    Frozen,
    /// As the user would run it, except that a network error is not retried unless the
    /// environment says so (`CARGO_NET_RETRY`): without a network, cargo's three
    /// retries wait 11 s before the fallback could start.
    Online,
}

fn metadata(
    opts: &WorkspaceOptions,
    ask: Ask,
    progress: &mut dyn FnMut(&str),
) -> Result<Metadata, CargoFailed> {
    let mut cmd = MetadataCommand::new();
    if let Some(p) = &opts.manifest_path {
        cmd.manifest_path(p);
    }
    if opts.all_features {
        cmd.features(CargoOpt::AllFeatures);
    }
    if opts.no_default_features {
        cmd.features(CargoOpt::NoDefaultFeatures);
    }
    if !opts.features.is_empty() {
        let split = opts
            .features
            .iter()
            .flat_map(|f| f.split([',', ' ']))
            .filter(|f| !f.is_empty());
        cmd.features(CargoOpt::SomeFeatures(split.map(str::to_owned).collect()));
    }
    let mut other = Vec::new();
    if ask == Ask::NoDeps {
        cmd.no_deps();
    } else if let Some(host) = host_triple() {
        other.extend(["--filter-platform".to_owned(), host.to_owned()]);
    }
    if ask == Ask::Frozen {
        other.push("--frozen".to_owned());
    }
    if ask == Ask::Online && std::env::var_os("CARGO_NET_RETRY").is_none() {
        cmd.env("CARGO_NET_RETRY", "0");
    }
    cmd.other_options(other);
    exec(&cmd, progress)
}

/// `cargo metadata` failed; cargo's own words (its `error:` line and what follows).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CargoFailed(pub String);

impl std::fmt::Display for CargoFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let said = self.0.strip_prefix("error: ").unwrap_or(&self.0);
        write!(f, "{said} (from `cargo metadata`)")
    }
}

impl std::error::Error for CargoFailed {}

/// Runs the metadata command, passing cargo's status lines to `progress` as they come.
fn exec(cmd: &MetadataCommand, progress: &mut dyn FnMut(&str)) -> Result<Metadata, CargoFailed> {
    use std::io::{BufRead, Read};
    let failed = |what: &str, e: &dyn std::fmt::Display| CargoFailed(format!("{what}: {e}"));
    let mut command = cmd.cargo_command();
    command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = command
        .spawn()
        .map_err(|e| failed("cannot run cargo", &e))?;
    let stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        stdout
            .map(|mut s| s.read_to_string(&mut text))
            .transpose()
            .map(|_| text)
    });
    let mut said = String::new();
    if let Some(stderr) = child.stderr.take() {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if is_status_line(&line) {
                progress(&line);
            }
            said.push_str(&line);
            said.push('\n');
        }
    }
    let status = child
        .wait()
        .map_err(|e| failed("cargo did not finish", &e))?;
    let out = reader.join().ok().and_then(Result::ok).unwrap_or_default();
    if !status.success() {
        return Err(CargoFailed(cargo_error(&said)));
    }
    MetadataCommand::parse(out).map_err(|e| failed("cannot read cargo's output", &e))
}

/// Cargo's right-aligned status lines (`    Updating ..`), not its warnings or errors.
pub fn is_status_line(line: &str) -> bool {
    let word = line.trim_start();
    line.len() > word.len()
        && word.split(' ').next().is_some_and(|w| {
            w.len() > 1
                && w.starts_with(|c: char| c.is_ascii_uppercase())
                && w[1..].chars().all(|c| c.is_ascii_lowercase())
        })
}

/// The graph rebuilt offline after `cargo metadata` failed with `e`.
fn fallback(
    opts: &WorkspaceOptions,
    e: &CargoFailed,
    progress: &mut dyn FnMut(&str),
) -> Result<(Metadata, offline::Report)> {
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
    let disk = disk::Disk::scan(m.workspace_root.as_std_path(), cargo_home());
    let req = offline::FeatureRequest {
        features: opts.features.clone(),
        all_features: opts.all_features,
        no_default_features: opts.no_default_features,
    };
    Ok((m, disk, req))
}

fn cargo_home() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap_or_default()
}

/// Cargo's own `error:` line (and what it says under it), not its progress lines.
fn cargo_error(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let Some(start) = lines.iter().position(|l| l.starts_with("error")) else {
        let last = lines.iter().rev().find(|l| !l.is_empty());
        return last.copied().unwrap_or("").to_owned();
    };
    // The error line and what cargo says right under it, up to a blank line or "Caused by".
    let said: Vec<&str> = lines[start..]
        .iter()
        .take_while(|l| !l.is_empty() && !l.starts_with("Caused by"))
        .take(3)
        .copied()
        .collect();
    said.join("; ")
}

/// What rustc says about the host, asked once per process.
struct Host {
    /// Its target triple.
    triple: Option<String>,
    /// Its `--print cfg` lines, when the same process printed them.
    cfg: Option<String>,
}

fn host() -> &'static Host {
    static HOST: std::sync::OnceLock<Host> = std::sync::OnceLock::new();
    HOST.get_or_init(ask_host)
}

/// The host's target triple (`rustc --print host-tuple`, else `rustc -vV`).
fn host_triple() -> Option<&'static str> {
    host().triple.as_deref()
}

/// The host's `rustc --print cfg` output, when the process that told the triple printed
/// it too (a rustc that knows `--print host-tuple`); else the caller asks rustc itself.
fn host_cfg_text() -> Option<&'static str> {
    host().cfg.as_deref()
}

fn rustc() -> std::process::Command {
    std::process::Command::new(std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()))
}

/// One rustc process for the triple and the cfgs (each process costs ~20 ms of CPU
/// through the rustup proxy); an older rustc, which does not know `host-tuple`, fails,
/// and `-vV` tells the triple alone.
fn ask_host() -> Host {
    let both = rustc()
        .args(["--print", "host-tuple", "--print", "cfg"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .and_then(|out| String::from_utf8(out.stdout).ok());
    let split = both.as_deref().and_then(|text| {
        let (triple, cfg) = text.split_once('\n')?;
        let plain = !triple.is_empty() && !triple.contains(['=', ' ', '"']);
        plain.then(|| (triple.trim_end_matches('\r').to_owned(), cfg.to_owned()))
    });
    match split {
        Some((triple, cfg)) => Host {
            triple: Some(triple),
            cfg: Some(cfg),
        },
        None => Host {
            triple: ask_host_triple(),
            cfg: None,
        },
    }
}

fn ask_host_triple() -> Option<String> {
    let out = rustc().arg("-vV").output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_owned)
}

fn fallback_warning(m: &Metadata, e: &CargoFailed, r: &offline::Report) -> Diagnostic {
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

/// The packages to analyse, in metadata order, and the members whose roots are checked,
/// with the metadata of those packages and the members.
fn select(
    mut m: Metadata,
    opts: &WorkspaceOptions,
    fallback: Option<(String, offline::Report)>,
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
fn select_shared(m: &mut Metadata, opts: &WorkspaceOptions) -> Selected {
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
fn kept(m: &Metadata, ws: &Workspace) -> HashSet<String> {
    let members = m.workspace_members.iter().map(|p| p.repr.clone());
    let analysed = ws.crates.iter().map(|c| c.origin.package_id.clone());
    members.chain(analysed).collect()
}

fn selection(m: &Metadata, opts: &WorkspaceOptions) -> Workspace {
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
    if m.workspace_metadata.get("nosync-lint").is_some() {
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
fn dep_graph(m: &Metadata) -> HashMap<PackageId, Vec<(String, PackageId)>> {
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
fn same_repository(m: &Metadata, gpu: &HashSet<PackageId>) -> Vec<PackageId> {
    let repo = |p: &Package| p.repository.as_deref().and_then(repository_key);
    let gpu_repos = repositories(m, gpu);
    m.packages
        .iter()
        .filter(|p| !gpu.contains(&p.id) && repo(p).is_some_and(|r| gpu_repos.contains(&r)))
        .map(|p| p.id.clone())
        .collect()
}

/// The repositories of the GPU-dependent packages `gpu` (the built-in crates' aside).
fn repositories(m: &Metadata, gpu: &HashSet<PackageId>) -> HashSet<String> {
    m.packages
        .iter()
        .filter(|p| gpu.contains(&p.id) && !BUILTIN_CRATES.contains(&p.name.as_str()))
        .filter_map(|p| p.repository.as_deref().and_then(repository_key))
        .collect()
}

/// The repositories whose packages [`same_repository`] selects in `m`.
fn gpu_repositories(m: &Metadata) -> HashSet<String> {
    let by_id: HashMap<&PackageId, &Package> = m.packages.iter().map(|p| (&p.id, p)).collect();
    repositories(m, &gpu_dependent(m, &dep_graph(m), &by_id))
}

/// `https://github.com/tracel-ai/cubecl/tree/main/crates/x` → `github.com/tracel-ai/cubecl`.
fn repository_key(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let rest = rest.strip_prefix("www.").unwrap_or(rest);
    let parts: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).take(3).collect();
    (parts.len() == 3).then(|| parts.join("/").trim_end_matches(".git").to_lowercase())
}

/// Packages that depend, directly or transitively, on a GPU crate.
fn gpu_dependent(
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

fn origin(p: &Package, t: &cargo_metadata::Target) -> Origin {
    Origin {
        package_id: p.id.repr.clone(),
        package_name: p.name.to_string(),
        manifest_path: p.manifest_path.clone().into_std_path_buf(),
        target_name: t.name.clone(),
        target_kind: t.kind.iter().map(|k| k.to_string()).collect(),
        target_src_path: t.src_path.clone().into_std_path_buf(),
    }
}

fn enabled_features(p: &Package, m: &Metadata) -> HashSet<String> {
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

fn is_lib(t: &cargo_metadata::Target) -> bool {
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

fn spec(p: &Package, t: &cargo_metadata::Target, m: &Metadata, check: bool) -> CrateSpec {
    CrateSpec {
        name: t.name.replace('-', "_"),
        root: t.src_path.clone().into_std_path_buf(),
        features: enabled_features(p, m),
        deps: Vec::new(),
        check_roots: check,
        origin: origin(p, t),
    }
}

fn add_libs(
    ws: &mut Workspace,
    pkgs: &[&Package],
    m: &Metadata,
    checked: &dyn Fn(&Package) -> bool,
) -> HashMap<PackageId, usize> {
    let mut lib_index = HashMap::new();
    for p in pkgs {
        if checked(p) && p.metadata.get("nosync-lint").is_some() {
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
fn add_other_targets(
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

fn resolve_deps(
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

fn lib_name(p: &Package) -> String {
    p.targets
        .iter()
        .find(|t| is_lib(t))
        .map_or_else(|| p.name.replace('-', "_"), |t| t.name.replace('-', "_"))
}

#[cfg(test)]
mod tests;
