//! The edge's part of a run around the core: the configuration and the caches read
//! before it ([`run`]), the caches written and the workspace's diagnostics and metadata
//! attached after it ([`complete`]). What the core reads of the workspace stage is
//! [`Inputs`], so that two runs on equal inputs are the same run (`speculate.rs`).

use super::caches::{BODIES, CacheWriter, EXPANSIONS, LoweredSlot, STAMPS, WALKS};
use super::no_deps::{self, Unread};
use super::{Analysis, analyze_crates_incremental};
use crate::config::{self, Config};
use crate::diagnostics::sort;
use crate::diagnostics::{Code, Diagnostic, Level};
use crate::incremental::{FileCaches, Incremental};
use crate::levels::LevelOverrides;
use crate::parse::cfg::TargetCfg;
use crate::pipeline::{self, Input};
use crate::source::{DiskLoader, LoweredCache, SharedCache, SourceMap};
use crate::workspace::{CrateSpec, MetadataTable, Workspace, WorkspaceOptions};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// Everything a run reads of the workspace stage's answer besides the options (which are
/// the same for every run of one command): the workspace root (the `SourceMap`'s root,
/// the printed paths), the crates (names, roots after normalisation, features, extern
/// names, which roots are checked, origins), the manifests whose tables the config reads,
/// and the target dir (where the caches are). Not the metadata: it is attached to the
/// result after the core ([`complete`]), as are the workspace's diagnostics.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Inputs {
    pub root: PathBuf,
    pub crates: Vec<CrateSpec>,
    pub config_tables: Vec<(PathBuf, MetadataTable)>,
    pub target_dir: Option<PathBuf>,
    /// The members' dependencies that are not analysed (`--no-deps` drops the configured
    /// paths into them: `no_deps.rs`).
    pub unread: Vec<Unread>,
}

impl Inputs {
    pub(super) fn of(ws: &Workspace) -> Inputs {
        Inputs {
            root: ws.root.clone(),
            crates: ws.crates.clone(),
            config_tables: ws.config_tables.clone(),
            target_dir: ws
                .metadata
                .as_ref()
                .map(|m| m.target_directory.clone().into_std_path_buf()),
            unread: no_deps::unread_deps(ws),
        }
    }
}

/// A run of the core as the edge prepares it: the analysis, the config's diagnostics,
/// the caches as the run left them and the writer of those it handed back (which may hold
/// the cache of lowered files), the slots of the caches of bodies, expansions and stamps,
/// and the edge's times.
#[derive(Debug)]
pub(super) struct Ran {
    pub analysis: Analysis,
    config_diags: Vec<Diagnostic>,
    incr: Incremental,
    pub writer: Arc<CacheWriter>,
    bodies_slot: Option<LoweredSlot>,
    expansions_slot: Option<LoweredSlot>,
    stamps_slot: Option<LoweredSlot>,
    config_time: Duration,
    read_time: Duration,
}

/// Reads the configuration and the caches and runs the core on `inputs`; the cache of
/// lowered files is held by the loader when `hold`, and `ahead`'s entries (lowered by a
/// run on other inputs) are found by key. `Err` when the `--config` file cannot be read.
pub(super) fn run(
    inputs: &Inputs,
    opts: &super::Options,
    hold: bool,
    ahead: Option<LoweredCache>,
) -> anyhow::Result<Ran> {
    run_until(inputs, opts, hold, ahead, None)
}

/// [`run`], called off when `cancel` is set: the core stops at its next stage (what it
/// lowered by then is held all the same), and the result is not an answer. A run that
/// read a file whose text was not the one its stamp vouched for (the file changed on disk
/// meanwhile: [`Incremental::stale`]) runs again reading every file, its caches not stored.
pub(super) fn run_until(
    inputs: &Inputs,
    opts: &super::Options,
    hold: bool,
    ahead: Option<LoweredCache>,
    cancel: Option<Arc<AtomicBool>>,
) -> anyhow::Result<Ran> {
    let ran = run_once(inputs, opts, hold, ahead, cancel.clone(), true)?;
    if !ran.incr.stale() {
        return Ok(ran);
    }
    // The stale run's cache writes end before the next run writes the same files (each
    // goes through one temporary name per process), and its tables are freed first.
    ran.writer.join();
    drop(ran);
    run_once(inputs, opts, hold, None, cancel, false)
}

/// One run of [`run_until`]; `stamps`: with the stamp table (when the caches are used).
fn run_once(
    inputs: &Inputs,
    opts: &super::Options,
    hold: bool,
    ahead: Option<LoweredCache>,
    cancel: Option<Arc<AtomicBool>>,
    stamps: bool,
) -> anyhow::Result<Ran> {
    let start = Instant::now();
    let (mut cfg, sources, config_diags) = load_config(inputs, opts)?;
    if opts.workspace.no_deps {
        no_deps::drop_unread(&mut cfg, &inputs.unread);
    }
    let config_time = start.elapsed();
    let start = Instant::now();
    let slot = (inputs.target_dir.as_deref())
        .filter(|_| opts.workspace.cache)
        .and_then(|target| LoweredSlot::of(target, &inputs.root));
    let [mut lowered, bodies, expansions, walks, stamp_table] = read_caches(slot.as_ref());
    if let Some(found) = ahead {
        let cache = lowered.get_or_insert_with(LoweredCache::read_only);
        cache.add_ahead(found);
    }
    let writer = Arc::new(CacheWriter::new(slot.clone(), hold));
    let mut incr = Incremental {
        files: FileCaches::new(stamp_table.filter(|_| stamps), lowered),
        bodies: bodies.map(SharedCache::new),
        expansions: expansions.map(SharedCache::new),
        walks,
        cancel,
        keep: Some(writer.clone()),
    };
    let bodies_slot = slot.as_ref().map(|s| s.named(BODIES));
    let expansions_slot = slot.as_ref().map(|s| s.named(EXPANSIONS));
    let stamps_slot = slot.as_ref().map(|s| s.named(STAMPS));
    let read_time = start.elapsed();
    let target = target_cfg(&opts.workspace)?;
    let made = made(opts, &cfg, Code::UnresolvedCallInNoSync);
    let switches = pipeline::Options {
        // `--no-deps` counts them (`chains-leave-workspace`).
        unresolved_calls: opts.pipeline.unresolved_calls && (opts.workspace.no_deps || made),
        ..opts.pipeline
    };
    let input = Input {
        target: &target,
        ..Input::new(inputs.root.clone(), inputs.crates.clone(), sources, &cfg)
    };
    let analysis = analyze_crates_incremental(input, &switches, &DiskLoader, &mut incr);
    Ok(Ran {
        analysis,
        config_diags,
        incr,
        writer,
        bodies_slot,
        expansions_slot,
        stamps_slot,
        config_time,
        read_time,
    })
}

/// The cfgs of the build's target (`--target`, else the host), from rustc; every target
/// predicate taken as true when rustc cannot tell the host's. `Err` when rustc refuses the
/// given target.
fn target_cfg(opts: &WorkspaceOptions) -> anyhow::Result<TargetCfg> {
    match crate::workspace::target_cfgs(opts) {
        Ok(Some(cfgs)) => Ok(TargetCfg::new(cfgs)),
        Ok(None) => Ok(TargetCfg::default()),
        Err(said) => {
            let target = opts.target.as_deref().unwrap_or("the host");
            anyhow::bail!(
                "cannot read the cfgs of target `{target}`: {said} (from `rustc --print cfg`)"
            )
        }
    }
}

/// Whether diagnostics of `code` are made: always, unless the caller reports only what the
/// levels leave ([`super::Options::levels`]) and the config's levels, then the caller's,
/// allow the code.
fn made(opts: &super::Options, cfg: &Config, code: Code) -> bool {
    let Some(given) = &opts.levels else {
        return true;
    };
    let mut levels = LevelOverrides::default();
    for l in &cfg.levels {
        levels.push(l.target, l.level);
    }
    levels.extend(given);
    levels.level_of(code) != Level::Allow
}

/// The caches of `slot`'s build, read in parallel (they are read before the core starts):
/// lowered files, lazy bodies, expansions, walks, stamps. None without a slot (`--no-cache`).
fn read_caches(slot: Option<&LoweredSlot>) -> [Option<LoweredCache>; 5] {
    let Some(slot) = slot else {
        return Default::default();
    };
    let names = [BODIES, EXPANSIONS, WALKS, STAMPS];
    let read = |name: &str| slot.named(name).read();
    std::thread::scope(|scope| {
        let spawned = names.map(|name| {
            let thread = std::thread::Builder::new();
            thread
                .spawn_scoped(scope, move || read(name))
                .map_err(|_| name)
        });
        let lowered = slot.read();
        // A thread that could not start, or panicked: that cache read here, or empty.
        let [bodies, expansions, walks, stamps] = spawned.map(|s| match s {
            Ok(handle) => handle.join().unwrap_or_default(),
            Err(name) => read(name),
        });
        [
            Some(lowered),
            Some(bodies),
            Some(expansions),
            Some(walks),
            Some(stamps),
        ]
    })
}

/// The configuration of `inputs`' manifests and the `--config` file, read into a new
/// `SourceMap` of the workspace root, with its diagnostics.
fn load_config(
    inputs: &Inputs,
    opts: &super::Options,
) -> anyhow::Result<(Config, SourceMap, Vec<Diagnostic>)> {
    let files = &DiskLoader;
    let mut sources = SourceMap::new(&inputs.root);
    let (mut cfg, mut diags) = (Config::default(), Vec::new());
    for (manifest, table) in &inputs.config_tables {
        config::load_manifest(manifest, *table, &mut cfg, files, &mut sources, &mut diags);
    }
    if let Some(path) = &opts.config {
        config::load_file(path, &mut cfg, files, &mut sources, &mut diags)?;
    }
    Ok((cfg, sources, diags))
}

/// The answer of `ran`: its caches written (a held cache of lowered files too), the
/// workspace's metadata and diagnostics (with the root manifest they point into) and the
/// config's attached, `phases` (the edge's, before the config) first.
pub(super) fn complete(
    ran: Ran,
    ws: Workspace,
    ws_diags: Vec<Diagnostic>,
    mut phases: Vec<(&'static str, Duration)>,
) -> Analysis {
    let Ran {
        analysis: mut a,
        mut incr,
        writer,
        ..
    } = ran;
    let start = Instant::now();
    writer.release();
    a.stats.bodies_cached = write_shared(ran.bodies_slot.as_ref(), incr.bodies.take());
    let made = incr.expansions.take();
    a.stats.expansions_cached = write_shared(ran.expansions_slot.as_ref(), made);
    a.stats.texts_read = Some(a.sources.texts_read());
    if let (Some(slot), Some(table)) = (&ran.stamps_slot, incr.files.stamps.take()) {
        slot.write(&table);
    }
    if let Some(slot) = &ran.stamps_slot {
        slot.mark_used();
    }
    let write_time = writer.join() + start.elapsed();
    a.stats
        .phases
        .push(("lowered cache", ran.read_time + write_time));
    if !ws_diags.is_empty() {
        // Workspace-level warnings point into the root's files (`Cargo.toml`, `Cargo.lock`):
        // show their text. (Read after the core, whose inputs are thus the same whether
        // cargo failed or not.)
        let files: std::collections::BTreeSet<&Path> =
            ws_diags.iter().map(|d| d.primary.file.as_path()).collect();
        for file in files {
            let _ = a.sources.load(&DiskLoader, &ws.root.join(file));
        }
        a.stats.files = a.sources.files().len();
        a.stats.lines = a.sources.files().iter().map(|f| f.lines()).sum();
    }
    a.metadata = ws.metadata;
    a.diagnostics.extend(ws_diags);
    a.diagnostics.extend(ran.config_diags);
    sort(&mut a.diagnostics);
    phases.push(("config", ran.config_time));
    a.stats.phases.splice(0..0, phases);
    a
}

/// Writes a cache the core filled into `slot`: how many entries it gave, of how many used.
fn write_shared(slot: Option<&LoweredSlot>, cache: Option<SharedCache>) -> Option<(usize, usize)> {
    let (slot, cache) = (slot?, cache?.into_inner());
    let (used, added) = cache.counts();
    slot.write(&cache);
    Some((used.saturating_sub(added), used))
}
