//! The core: the pipeline of stages from parsing to the search over given crates, a config
//! and a [`Loader`], on a pool of large-stack threads; it does no IO of its own. What it
//! reuses of earlier runs, and leaves to later ones, is the [`Incremental`] it is given.

use super::{Analysis, Stats};
use crate::config::Config;
use crate::diagnostics::{Diagnostic, Span};
use crate::incremental::Incremental;
use crate::parse::cfg::{CfgCtx, TargetCfg};
use crate::source::{Loader, SourceMap};
use crate::workspace::CrateSpec;
use crate::{analysis, callgraph, panics, parse, resolve};
use std::path::PathBuf;
use std::time::Instant;

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
        exiting: false,
        unresolved_calls: true,
        target: TargetCfg::unknown(),
    };
    analyze_crates_with(root, crates, core, files, sources)
}

/// What the core is given besides the crates and files: the config, whether every fn
/// body is lowered with its file ([`Options::eager_bodies`](super::Options::eager_bodies)), whether every fn is
/// walked into the call graph ([`Options::walk_every_fn`](super::Options::walk_every_fn)), whether the process exits
/// after this analysis ([`Options::exiting`](super::Options::exiting): its tables are then not freed) and whether
/// the unresolved calls the roots reach are made into `unresolved-call-in-no-sync`
/// diagnostics (not when the levels allow them: see [`Options::levels`](super::Options::levels)), and the cfgs of
/// the target `#[cfg]` predicates are evaluated for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Core<'c> {
    pub config: &'c Config,
    pub eager_bodies: bool,
    pub walk_every_fn: bool,
    pub exiting: bool,
    pub unresolved_calls: bool,
    pub target: &'c TargetCfg,
}

/// [`analyze_crates`] with the core's options.
pub(crate) fn analyze_crates_with(
    root: PathBuf,
    crates: Vec<CrateSpec>,
    cfg: Core<'_>,
    files: &dyn Loader,
    sources: SourceMap,
) -> Analysis {
    let mut incr = Incremental::default();
    analyze_crates_incremental(Input::new(root, crates, sources), cfg, files, &mut incr)
}

/// What the pipeline analyses: the crates, their workspace root, and the source map
/// (which may hold some files already: the configuration's).
#[derive(Debug)]
pub(crate) struct Input {
    pub root: PathBuf,
    pub crates: Vec<CrateSpec>,
    pub sources: SourceMap,
}

impl Input {
    pub(crate) fn new(root: PathBuf, crates: Vec<CrateSpec>, sources: SourceMap) -> Input {
        Input {
            root,
            crates,
            sources,
        }
    }
}

/// [`analyze_crates_with`], reusing and filling the caches of `incr` (called off when its
/// cancel token is set).
pub(crate) fn analyze_crates_incremental(
    input: Input,
    cfg: Core<'_>,
    files: &dyn Loader,
    incr: &mut Incremental,
) -> Analysis {
    // Large stacks are virtual memory: cap the thread count so that the reservation
    // stays modest on many-core machines.
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(MAX_THREADS));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .stack_size(parse::STACK_SIZE)
        .build();
    let fallback_root = input.root.clone();
    let run = || match pool {
        Ok(pool) => pool.install(move || pipeline(input, cfg, files, incr)),
        Err(_) => single_thread(input, cfg, files, incr),
    };
    // The stages have nets of their own; this one catches what falls between them.
    panics::catch(run).unwrap_or_else(|caught| {
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
    input: Input,
    cfg: Core<'_>,
    files: &dyn Loader,
    incr: &mut Incremental,
) -> Analysis {
    // The inputs go through a slot, so that they come back if the thread cannot start.
    let slot = std::sync::Mutex::new(Some((input, incr)));
    let take = || slot.lock().ok().and_then(|mut s| s.take());
    let ran = std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .stack_size(parse::STACK_SIZE)
            .spawn_scoped(scope, || take().map(|(i, c)| pipeline(i, cfg, files, c)));
        match spawned.map(|handle| handle.join()) {
            Ok(Ok(analysis)) => analysis,
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            Err(_) => None,
        }
    });
    // `None` is unreachable: the thread either ran or never started (the inputs are back).
    ran.or_else(|| take().map(|(i, c)| pipeline(i, cfg, files, c)))
        .unwrap_or_default()
}

/// The pipeline: parse, expand `macro_rules!`, resolve, build the call graph from the
/// roots, search it. Each stage returns its data and diagnostics; the caches it can use
/// come from `incr`, and go back to the edge through it once done with.
fn pipeline(input: Input, opts: Core<'_>, files: &dyn Loader, incr: &mut Incremental) -> Analysis {
    let (root, crates, mut sources) = (input.root, input.crates, input.sources);
    let mut run = Run::new(crates.len());
    let cfgs = cfgs_of(&crates, opts.target);
    let loading = (files, &mut incr.files);
    let eager = opts.eager_bodies;
    let (mut parsed, d) =
        parse::parse_all(&crate_roots(&crates), &cfgs, loading, &mut sources, eager);
    run.lap("parse", d);
    if incr.cancelled() {
        return called_off(root, incr, parsed);
    }
    let inputs = (cfgs.as_slice(), crates.as_slice(), files);
    expand(&mut parsed, inputs, (&mut sources, incr), &mut run);
    run.stats.lowered_cached = incr.lowering_done();
    let (mut map, root_fns, d) = resolve::resolve_all(&crates, &parsed, &sources, opts.config);
    run.lap("resolve", d);
    if incr.cancelled() {
        free_aside(map.take_owned());
        drop(map);
        return called_off(root, incr, parsed);
    }
    let inputs = (&parsed, crates.as_slice(), root_fns.as_slice());
    let (graph, d) = call_graph(&mut map, (&sources, inputs), (opts, incr), &mut run);
    run.lap("callgraph", d);
    let roots = analysis::sorted_roots(&map, root_fns);
    let d = search(&map, &graph, &sources, (&roots, opts));
    run.lap("analysis", d);
    let mut stats = figures(run.stats, (&map, &graph), (&sources, &crates), &roots);
    stats.fn_index = crate::runtime_report::index(&map, &graph, &sources, &root);
    let diags = analysis::settle(run.diags, &parsed, &sources, &crates);
    let exiting = opts.exiting && !incr.stale();
    free(map, graph, exiting);
    release(parsed, exiting);
    answer(Input::new(root, crates, sources), diags, stats, opts.config)
}

/// A run's diagnostics so far, its stats and the time of each stage.
struct Run {
    diags: Vec<Diagnostic>,
    stats: Stats,
    timer: Instant,
}

impl Run {
    fn new(crates: usize) -> Run {
        let stats = Stats {
            crates,
            ..Stats::default()
        };
        let (diags, timer) = (Vec::new(), Instant::now());
        Run {
            diags,
            stats,
            timer,
        }
    }

    /// The stage `name` is done, with its diagnostics `diags`.
    fn lap(&mut self, name: &'static str, diags: Vec<Diagnostic>) {
        self.diags.extend(diags);
        self.stats.phases.push((name, self.timer.elapsed()));
        self.timer = Instant::now();
    }
}

/// Each crate's root file and its index (its `#[cfg]` context).
fn crate_roots(crates: &[CrateSpec]) -> Vec<(PathBuf, usize)> {
    let roots = crates.iter().enumerate();
    roots.map(|(i, c)| (c.root.clone(), i)).collect()
}

/// `macro_rules!` expansion, behind a net; its diagnostics and figures go to `run`.
fn expand(
    parsed: &mut parse::Parsed,
    (cfgs, crates, files): (&[CfgCtx], &[CrateSpec], &dyn Loader),
    (sources, incr): (&mut SourceMap, &mut Incremental),
    run: &mut Run,
) {
    let at = sources.first_span();
    let what = |c: &crate::panics::Caught| {
        let lost = "the invocations not expanded yet are analysed as written";
        c.diagnostic("expanding", "`macro_rules!` invocations", lost, at.clone())
    };
    let expanded = panics::guard(&mut run.diags, what, || {
        resolve::macros::expand_all(parsed, cfgs, crates, (files, incr), sources)
    });
    let (expansions, d) = expanded.unwrap_or_default();
    run.diags.extend(d);
    run.stats.macro_expansions = expansions.expanded;
    run.stats.macro_failures = expansions.failed;
}

/// The call graph, from the roots (or of every fn), reusing the walks of earlier runs.
fn call_graph(
    map: &mut resolve::DefMap<'_>,
    (sources, (parsed, crates, roots)): (&SourceMap, GraphInputs<'_>),
    (opts, incr): (Core<'_>, &mut Incremental),
    run: &mut Run,
) -> (callgraph::CallGraph, Vec<Diagnostic>) {
    run.stats.fns = map.fns.iter().filter(|f| f.ir.is_some()).count();
    let walk = match opts.walk_every_fn {
        true => callgraph::Walk::Every,
        false => callgraph::Walk::FromRoots,
    };
    let mut reuse = incr.walks.take().map(|store| callgraph::Reuse {
        world: world(sources, parsed, (crates, &map.fixed_flags), opts),
        store,
        ..Default::default()
    });
    let caches = (reuse.as_mut(), incr.bodies.as_ref());
    let built = callgraph::build(map, sources, (roots, walk), caches);
    if let Some(reuse) = reuse {
        run.stats.walks_cached = Some((reuse.reused, reuse.walked));
        incr.walking_done(reuse.store);
    }
    built
}

/// The search from the roots: their chains to blocking sinks.
fn search(
    map: &resolve::DefMap<'_>,
    graph: &callgraph::CallGraph,
    sources: &SourceMap,
    (roots, opts): (&[resolve::FnId], Core<'_>),
) -> Vec<Diagnostic> {
    let wanted = analysis::Wanted {
        unresolved: opts.unresolved_calls,
    };
    analysis::find(map, graph, sources, (roots, wanted))
}

/// What the call graph is built from besides the def map: the parsed files, the crates,
/// the roots.
type GraphInputs<'a> = (&'a parse::Parsed, &'a [CrateSpec], &'a [resolve::FnId]);

/// The figures of a run (`-v`): its files, fns, edges and calls.
fn figures(
    mut stats: Stats,
    (map, graph): (&resolve::DefMap<'_>, &callgraph::CallGraph),
    (sources, crates): (&SourceMap, &[CrateSpec]),
    roots: &[resolve::FnId],
) -> Stats {
    stats.files = sources.files().len();
    stats.lines = sources.files().iter().map(|f| f.lines()).sum();
    stats.fns_walked = graph.walked;
    stats.specialised_walked = graph.walked_specialised;
    stats.edges_exact = graph.count(crate::diagnostics::Confidence::Exact);
    stats.edges_inferred = graph.count(crate::diagnostics::Confidence::Inferred);
    stats.edges_name_only = graph.count(crate::diagnostics::Confidence::NameOnly);
    stats.unresolved = graph.unresolved_count();
    stats.calls = super::calls::by_crate(map, graph, crates);
    stats.unseen = super::calls::unseen_by_root(map, graph, (roots, crates));
    stats.roots = roots.len();
    stats
}

/// The answer, with the configuration's levels where they are written.
fn answer(input: Input, diags: Vec<Diagnostic>, stats: Stats, cfg: &Config) -> Analysis {
    let Input {
        root,
        crates,
        sources,
    } = input;
    let config_levels = (cfg.levels.iter())
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

/// Frees the item trees and the call graph aside ([`release`]).
fn free(mut map: resolve::DefMap<'_>, graph: callgraph::CallGraph, exiting: bool) {
    release((map.take_owned(), graph), exiting);
    drop(map);
}

/// Frees `value` aside; or, when the process ends after rendering (`exiting`), not at all:
/// that is work the exit does for free. (Not after a stale run, which the edge runs again.)
fn release<T: Send + 'static>(value: T, exiting: bool) {
    match exiting {
        true => std::mem::forget(value),
        false => free_aside(value),
    }
}

/// What a run called off between stages returns ([`Incremental::cancelled`]): no answer
/// (its caller does not use it), but the files it lowered go back to the edge, for the run
/// that replaces it; `parsed` is freed aside.
fn called_off(root: PathBuf, incr: &mut Incremental, parsed: parse::Parsed) -> Analysis {
    incr.lowering_done();
    free_aside(parsed);
    Analysis {
        root,
        ..Analysis::default()
    }
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

/// The world the cache of walks is valid in (see `callgraph::reuse`): the files in their
/// order, each parsed file's digest (its lowering but where its text stands), the crates
/// (their features sorted), the library flags fixed at their defaults, what the config
/// names (roots, sinks, allowed fns) and the switches; nothing that hashes in a process's own order.
fn world(
    sources: &SourceMap,
    parsed: &parse::Parsed,
    (crates, flags): (&[CrateSpec], &resolve::NameMap<bool>),
    opts: Core<'_>,
) -> u128 {
    use std::fmt::Write;
    let mut h = crate::source::KeyWriter::new();
    for f in sources.files() {
        let _ = write!(h, "{:?}\u{1f}", f.path);
    }
    let mut files: Vec<_> = parsed.files.iter().collect();
    files.sort_unstable_by(|a, b| a.0.cmp(b.0));
    for ((path, cfg), f) in files {
        let _ = write!(h, "{path:?} {cfg} {} {}\u{1f}", f.file, f.digest);
    }
    for c in crates {
        let mut features: Vec<&String> = c.features.iter().collect();
        features.sort_unstable();
        let (name, root, deps, check) = (&c.name, &c.root, &c.deps, c.check_roots);
        let _ = write!(
            h,
            "{name} {root:?} {features:?} {deps:?} {check} {:?} {:?}",
            c.origin, c.versions
        );
    }
    let cfg = opts.config;
    let _ = write!(h, "{:?} {:?} {:?}", cfg.roots, cfg.sinks, cfg.allow);
    let models = cfg.models.iter().map(|m| (&m.model, m.span));
    let _ = write!(h, " {:?}", models.collect::<Vec<_>>());
    let mut flags: Vec<_> = flags.iter().collect();
    flags.sort_unstable();
    let _ = write!(h, " {flags:?}");
    let _ = write!(h, "{} {}", opts.eager_bodies, opts.walk_every_fn);
    let _ = write!(h, " {}", opts.target.key());
    h.key()
}

/// Each crate's `#[cfg]` context: its features, on the run's target.
fn cfgs_of(crates: &[CrateSpec], target: &TargetCfg) -> Vec<CfgCtx> {
    let target = std::sync::Arc::new(target.clone());
    crates
        .iter()
        .map(|c| CfgCtx {
            features: c.features.clone(),
            test: false,
            target: target.clone(),
        })
        .collect()
}
