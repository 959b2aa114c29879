//! The pipeline, stage by stage: workspace → config → parse → macro expansion →
//! resolve → call graph → analysis. [`analyze`] is the edge: it runs cargo metadata and
//! reads from the disk ([`DiskLoader`]); [`analyze_crates`] is the core over given crates
//! and a [`Loader`], which is all it sees of files (tests give it files in memory).

use crate::config::{self, Config};
use crate::diagnostics::{Diagnostic, Span};
use crate::parse::cfg::CfgCtx;
use crate::source::{DiskLoader, Loader, LoweredCache, SharedCache, SourceMap};
use crate::workspace::{self, CrateSpec, WorkspaceOptions};
use crate::{analysis, callgraph, net, parse, resolve};
use std::collections::HashMap;
use std::path::PathBuf;

mod ahead;
use std::time::{Duration, Instant};

/// What to analyse and how.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub workspace: WorkspaceOptions,
    /// `--config FILE`.
    pub config: Option<PathBuf>,
    /// Lower every fn body with its file, not only when a root reaches it: the switch that
    /// lets the tests check that laziness changes no output (`NOSYNC_LINT_EAGER=1`, read by
    /// the CLI).
    pub eager_bodies: bool,
    /// Walk every fn body into the call graph, not only those the search from the roots
    /// reads: the switch that lets the tests check that demand-driven walking changes no
    /// output (`--walk-every-fn`, hidden).
    pub walk_every_fn: bool,
    /// Lower the members' files while `cargo metadata` runs ([`ahead`]); the CLI turns it
    /// on unless `NOSYNC_LINT_AHEAD=0` (on a loaded machine it slows cargo down as much as
    /// it saves; on a quiet one it saves a third of candle's cold run).
    pub lower_ahead: bool,
}

/// Figures `-v` prints.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    pub crates: usize,
    pub files: usize,
    pub lines: usize,
    /// Analysed fns with a body (specialised nodes not counted).
    pub fns: usize,
    /// Of those, the ones the call graph walked; and the specialised nodes it walked.
    pub fns_walked: usize,
    pub specialised_walked: usize,
    /// The edges and unresolved calls of the walked fns.
    pub edges_exact: usize,
    pub edges_inferred: usize,
    pub edges_name_only: usize,
    pub unresolved: usize,
    pub macro_expansions: usize,
    pub macro_failures: usize,
    pub roots: usize,
    pub phases: Vec<(&'static str, Duration)>,
    /// With the cache of lowered files: how many files came from it, of how many lowered.
    pub lowered_cached: Option<(usize, usize)>,
    /// With the cache of lazy fn bodies: how many bodies came from it, of how many lowered.
    pub bodies_cached: Option<(usize, usize)>,
    /// With the cache of `macro_rules!` expansions: how many came from it, of how many
    /// (invocation, definition) pairs tried.
    pub expansions_cached: Option<(usize, usize)>,
}

/// The result of a run: diagnostics (sorted), figures, the sources they point into, and
/// what the renderers need from the earlier stages (computed once, here).
#[derive(Debug, Default)]
pub struct Analysis {
    pub root: PathBuf,
    pub diagnostics: Vec<Diagnostic>,
    pub stats: Stats,
    pub sources: SourceMap,
    pub crates: Vec<CrateSpec>,
    /// The configuration's `levels` entries `(code, level, where the code is written)`, in
    /// the order read, all valid (applied by the level overrides, config first, then the
    /// command line).
    pub config_levels: Vec<ConfigLevel>,
    /// `cargo metadata` as the workspace stage kept it (the members and the analysed
    /// packages, without the resolve graph); `None` for crates given directly
    /// ([`analyze_crates`]).
    pub metadata: Option<cargo_metadata::Metadata>,
}

/// One `levels` entry of the configuration: code (or `warnings`), level, location.
pub type ConfigLevel = (crate::levels::Target, crate::diagnostics::Level, Span);

/// Runs `cargo metadata`, reads the configuration, and analyses the selected crates;
/// cargo's status lines go to `progress`.
pub fn analyze(opts: &Options, progress: &mut dyn FnMut(&str)) -> anyhow::Result<Analysis> {
    let start = Instant::now();
    // Lowering ahead only while cargo runs: on a cache hit there is nothing to overlap.
    let mut ahead = None;
    let mut start_ahead = || {
        if opts.lower_ahead {
            ahead = Some(ahead::Ahead::start(&opts.workspace, opts.eager_bodies));
        }
    };
    let loaded = workspace::load_with(&opts.workspace, progress, &mut start_ahead);
    let lowered_ahead = ahead.and_then(ahead::Ahead::finish);
    let (ws, mut diags) = loaded?;
    let files = &DiskLoader;
    let metadata_time = start.elapsed();
    let metadata_phase = if ws.cached {
        "metadata (cache hit)"
    } else {
        "metadata"
    };
    let start = Instant::now();
    let mut sources = SourceMap::new(&ws.root);
    if !diags.is_empty() {
        // Workspace-level warnings point into the root manifest: show its text.
        let _ = sources.load(files, &ws.root.join("Cargo.toml"));
    }
    let mut cfg = Config::default();
    for (manifest, table) in &ws.config_tables {
        config::load_manifest(manifest, *table, &mut cfg, files, &mut sources, &mut diags);
    }
    if let Some(path) = &opts.config {
        config::load_file(path, &mut cfg, files, &mut sources, &mut diags)?;
    }
    let config_time = start.elapsed();
    let start = Instant::now();
    let slot = opts
        .workspace
        .cache
        .then(|| LoweredSlot::of(ws.metadata.as_ref()?))
        .flatten();
    let mut lowered = slot.as_ref().map(LoweredSlot::read);
    if let Some(found) = lowered_ahead {
        lowered
            .get_or_insert_with(LoweredCache::read_only)
            .add_ahead(found);
    }
    sources.set_lowered(lowered);
    let bodies_slot = slot.as_ref().map(|s| s.named("bodies.bin"));
    sources.set_bodies(bodies_slot.as_ref().map(|s| SharedCache::new(s.read())));
    let expansions_slot = slot.as_ref().map(|s| s.named("expansions.bin"));
    sources.set_expansions(expansions_slot.as_ref().map(|s| SharedCache::new(s.read())));
    let read_time = start.elapsed();
    let core = Core {
        config: &cfg,
        eager_bodies: opts.eager_bodies,
        walk_every_fn: opts.walk_every_fn,
    };
    let loader = CachingDisk {
        slot,
        written: std::sync::Mutex::new(None),
    };
    let mut a = analyze_crates_with(ws.root, ws.crates, core, &loader, sources);
    let start = Instant::now();
    a.stats.bodies_cached = write_shared(bodies_slot.as_ref(), a.sources.take_bodies());
    let made = a.sources.take_expansions();
    a.stats.expansions_cached = write_shared(expansions_slot.as_ref(), made);
    let write_time = loader.join() + start.elapsed();
    a.stats
        .phases
        .push(("lowered cache", read_time + write_time));
    a.metadata = ws.metadata;
    a.diagnostics.extend(diags);
    sort(&mut a.diagnostics);
    a.stats.phases.insert(0, (metadata_phase, metadata_time));
    a.stats.phases.insert(1, ("config", config_time));
    Ok(a)
}

/// Where the cache of lowered files lives (`<target>/nosync-lint/lowered.bin`), and the
/// build of the lint that may read it: its version and its executable's size and time,
/// so that a rebuilt lint never reads what another build lowered.
#[derive(Debug, Clone)]
struct LoweredSlot {
    file: PathBuf,
    build: u128,
}

impl LoweredSlot {
    /// `None` when the running executable cannot be identified (then nothing is cached).
    fn of(metadata: &cargo_metadata::Metadata) -> Option<LoweredSlot> {
        let exe = std::env::current_exe().ok()?;
        let meta = std::fs::metadata(&exe).ok()?;
        let time = meta
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?;
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        h.update(crate::VERSION.as_bytes());
        h.update(exe.as_os_str().as_encoded_bytes());
        h.update(&meta.len().to_le_bytes());
        h.update(&time.as_nanos().to_le_bytes());
        let dir = metadata.target_directory.as_std_path().join("nosync-lint");
        Some(LoweredSlot {
            file: dir.join("lowered.bin"),
            build: h.digest128(),
        })
    }

    /// The slot of another cache beside this one (the same build).
    fn named(&self, name: &str) -> LoweredSlot {
        LoweredSlot {
            file: self.file.with_file_name(name),
            build: self.build,
        }
    }

    /// The stored cache; an empty one when there is none, or it is unreadable or foreign.
    fn read(&self) -> LoweredCache {
        let bytes = std::fs::read(&self.file).unwrap_or_default();
        LoweredCache::from_bytes(bytes, self.build)
    }

    /// Stores `cache` when it changed (silently not, when it cannot), written aside and
    /// renamed so that a concurrent run never reads half of it.
    fn write(&self, cache: &LoweredCache) {
        let Some(dir) = self.file.parent().filter(|_| cache.changed()) else {
            return;
        };
        let tmp = self
            .file
            .with_extension(format!("tmp{}", std::process::id()));
        let written = std::fs::create_dir_all(dir).and_then(|()| {
            let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
            cache.write_to(self.build, &mut out)?;
            out.into_inner()
                .map_err(std::io::IntoInnerError::into_error)?;
            std::fs::rename(&tmp, &self.file)
        });
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

/// The disk, and the slot of the cache of lowered files: the core hands the cache back
/// when it has lowered its last file, and it is written on a thread of its own meanwhile
/// the analysis goes on (its entries freed once written).
#[derive(Debug)]
struct CachingDisk {
    slot: Option<LoweredSlot>,
    written: std::sync::Mutex<Option<std::thread::JoinHandle<Duration>>>,
}

impl Loader for CachingDisk {
    fn read(&self, path: &std::path::Path) -> std::io::Result<String> {
        DiskLoader.read(path)
    }

    fn file(&self, path: &std::path::Path) -> Option<PathBuf> {
        DiskLoader.file(path)
    }

    fn store_lowered(&self, cache: LoweredCache) {
        let Some(slot) = self.slot.clone() else {
            return;
        };
        let write = move || {
            let start = Instant::now();
            slot.write(&cache);
            start.elapsed()
        };
        let Ok(mut written) = self.written.lock() else {
            return;
        };
        // A thread that cannot start: not written (the next run lowers the files again).
        *written = std::thread::Builder::new().spawn(write).ok();
    }
}

impl CachingDisk {
    /// Waits for the cache to be written; the time that took.
    fn join(&self) -> Duration {
        let handle = self.written.lock().ok().and_then(|mut w| w.take());
        handle.and_then(|h| h.join().ok()).unwrap_or_default()
    }
}

/// The analysis of `crates` on a pool whose threads have large stacks. Every file is read
/// through `files` (and added to `sources`, which may hold some already).
pub fn analyze_crates(
    root: PathBuf,
    crates: Vec<CrateSpec>,
    cfg: &Config,
    files: &dyn Loader,
    sources: SourceMap,
) -> Analysis {
    let core = Core {
        config: cfg,
        eager_bodies: false,
        walk_every_fn: false,
    };
    analyze_crates_with(root, crates, core, files, sources)
}

/// What the core is given besides the crates and files: the config, whether every fn
/// body is lowered with its file ([`Options::eager_bodies`]) and whether every fn is
/// walked into the call graph ([`Options::walk_every_fn`]).
#[derive(Debug, Clone, Copy)]
pub struct Core<'c> {
    pub config: &'c Config,
    pub eager_bodies: bool,
    pub walk_every_fn: bool,
}

/// [`analyze_crates`] with the core's options.
pub fn analyze_crates_with(
    root: PathBuf,
    crates: Vec<CrateSpec>,
    cfg: Core<'_>,
    files: &dyn Loader,
    sources: SourceMap,
) -> Analysis {
    // Large stacks are virtual memory: cap the thread count so that the reservation
    // stays modest on many-core machines.
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(MAX_THREADS));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .stack_size(parse::STACK_SIZE)
        .build();
    let fallback_root = root.clone();
    let run = || match pool {
        Ok(pool) => pool.install(move || core(root, crates, cfg, files, sources)),
        Err(_) => single_thread(root, crates, cfg, files, sources),
    };
    // The stages have nets of their own; this one catches what falls between them.
    net::catch(run).unwrap_or_else(|caught| {
        let at = Span::start_of(PathBuf::from("Cargo.toml"));
        let lost = "nothing was reported";
        Analysis {
            root: fallback_root,
            diagnostics: vec![caught.diagnostic("analysing", "the workspace", lost, at)],
            ..Analysis::default()
        }
    })
}

/// Most analysis threads.
const MAX_THREADS: usize = 16;

/// Without a pool: one thread with a large stack (still no deep recursion on the
/// caller's stack), or the caller's thread as a last resort.
fn single_thread(
    root: PathBuf,
    crates: Vec<CrateSpec>,
    cfg: Core<'_>,
    files: &dyn Loader,
    sources: SourceMap,
) -> Analysis {
    // The inputs go through a slot, so that they come back if the thread cannot start.
    let slot = std::sync::Mutex::new(Some((root, crates, sources)));
    let take = || slot.lock().ok().and_then(|mut s| s.take());
    let ran = std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .stack_size(parse::STACK_SIZE)
            .spawn_scoped(scope, || take().map(|(r, c, s)| core(r, c, cfg, files, s)));
        match spawned.map(|handle| handle.join()) {
            Ok(Ok(analysis)) => analysis,
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            Err(_) => None,
        }
    });
    // `None` is unreachable: the thread either ran or never started (the inputs are back).
    ran.or_else(|| take().map(|(r, c, s)| core(r, c, cfg, files, s)))
        .unwrap_or_default()
}

fn core(
    root: PathBuf,
    crates: Vec<CrateSpec>,
    opts: Core<'_>,
    files: &dyn Loader,
    mut sources: SourceMap,
) -> Analysis {
    let (cfg, eager) = (opts.config, opts.eager_bodies);
    let mut stats = Stats {
        crates: crates.len(),
        ..Stats::default()
    };
    let mut timer = Instant::now();
    let mut lap = |stats: &mut Stats, name: &'static str| {
        stats.phases.push((name, timer.elapsed()));
        timer = Instant::now();
    };
    let cfgs: Vec<CfgCtx> = ahead::cfgs_of(&crates);
    let roots: Vec<(PathBuf, usize)> = crates
        .iter()
        .enumerate()
        .map(|(i, c)| (c.root.clone(), i))
        .collect();
    let (mut parsed, mut diags) = parse::parse_all(&roots, &cfgs, files, &mut sources, eager);
    lap(&mut stats, "parse");
    let at = sources.first_span();
    let what = |c: &crate::net::Caught| {
        let lost = "the invocations not expanded yet are analysed as written";
        c.diagnostic("expanding", "`macro_rules!` invocations", lost, at.clone())
    };
    let expanded = net::guard(&mut diags, what, || {
        resolve::macros::expand_all(&mut parsed, &cfgs, &crates, files, &mut sources)
    });
    let (expansions, d) = expanded.unwrap_or_default();
    diags.extend(d);
    stats.macro_expansions = expansions.expanded;
    stats.macro_failures = expansions.failed;
    // Every file is lowered: the cache goes back to the loader (and its memory with it).
    if let Some(cache) = sources.take_lowered() {
        let (used, added) = cache.counts();
        stats.lowered_cached = Some((used.saturating_sub(added), used));
        files.store_lowered(cache);
    }
    let (mut map, d) = resolve::build(&crates, &parsed, &sources);
    diags.extend(d);
    let (root_fns, d) = resolve::configured::apply(&mut map, cfg, &sources);
    diags.extend(d);
    lap(&mut stats, "resolve");
    stats.fns = map.fns.iter().filter(|f| f.ir.is_some()).count();
    let walk = match opts.walk_every_fn {
        true => callgraph::Walk::Every,
        false => callgraph::Walk::FromRoots,
    };
    let (graph, d) = callgraph::build(&mut map, &sources, &root_fns, walk);
    diags.extend(d);
    lap(&mut stats, "callgraph");
    // By position, then crate: of two copies of one root (a file included by two
    // targets), the first crate's is kept, the crate that owns the file's diagnostics.
    let mut roots_sorted = root_fns;
    roots_sorted.sort_by_key(|&f| {
        (
            map.func(f).span,
            map.modules[map.func(f).module as usize].krate,
        )
    });
    diags.extend(analysis::find(&map, &graph, &sources, &roots_sorted));
    lap(&mut stats, "analysis");
    stats.files = sources.files().len();
    stats.lines = sources.files().iter().map(|f| f.lines()).sum();
    stats.fns_walked = graph.walked;
    stats.specialised_walked = graph.walked_specialised;
    stats.edges_exact = graph.count(crate::diagnostics::Confidence::Exact);
    stats.edges_inferred = graph.count(crate::diagnostics::Confidence::Inferred);
    stats.edges_name_only = graph.count(crate::diagnostics::Confidence::NameOnly);
    stats.unresolved = graph.unresolved_count();
    stats.roots = roots_sorted.len();
    attach_origins(&mut diags, &parsed, &sources, &crates);
    sort(&mut diags);
    // A file read by two crates reports its parse errors and missing modules once.
    diags.dedup();
    drop(map);
    free_aside((parsed, graph));
    let config_levels = cfg
        .levels
        .iter()
        .map(|l| (l.target, l.level, sources.span(l.span)))
        .collect();
    Analysis {
        root,
        diagnostics: diags,
        stats,
        sources,
        crates,
        config_levels,
        metadata: None,
    }
}

/// Writes a cache the core filled into `slot`: how many entries it gave, of how many used.
fn write_shared(slot: Option<&LoweredSlot>, cache: Option<SharedCache>) -> Option<(usize, usize)> {
    let (slot, cache) = (slot?, cache?.into_inner());
    let (used, added) = cache.counts();
    slot.write(&cache);
    Some((used.saturating_sub(added), used))
}

/// Frees `value` on a thread of its own, off the caller's path: the item trees and the
/// call graph are hundreds of thousands of allocations (a twentieth of a warm run on
/// candle). The thread ends once they are freed; where none can start, they are freed here.
fn free_aside<T: Send + 'static>(value: T) {
    // A failed spawn drops the closure, and `value` with it, before returning.
    let _ = std::thread::Builder::new()
        .name("nosync-lint-free".to_owned())
        .spawn(move || drop(value));
}

/// Each diagnostic belongs to the first crate that reads its file.
fn attach_origins(
    diags: &mut [Diagnostic],
    parsed: &parse::Parsed,
    sources: &SourceMap,
    crates: &[CrateSpec],
) {
    let mut owner: HashMap<PathBuf, usize> = HashMap::new();
    for ((_, krate), f) in &parsed.files {
        let e = owner
            .entry(sources.file(f.file).display.clone())
            .or_insert(*krate);
        *e = (*e).min(*krate);
    }
    for d in diags.iter_mut().filter(|d| d.origin.is_none()) {
        if let Some(&k) = owner.get(&d.primary.file) {
            d.origin = Some(crates[k].origin.clone());
        }
    }
}

/// Deterministic order: by file, position, code, message.
pub fn sort(diags: &mut [Diagnostic]) {
    diags.sort_by(|a, b| {
        (
            &a.primary.file,
            a.primary.line_start,
            a.primary.column_start,
            a.code,
            &a.message,
        )
            .cmp(&(
                &b.primary.file,
                b.primary.line_start,
                b.primary.column_start,
                b.code,
                &b.message,
            ))
    });
}
