//! The core: the stages from parsing to the search over given crates, a config and a
//! [`Loader`], on a pool of large-stack threads; it does no IO of its own.

use super::{Analysis, Stats};
use crate::config::Config;
use crate::diagnostics::sort;
use crate::diagnostics::{Diagnostic, Span};
use crate::parse::cfg::{CfgCtx, TargetCfg};
use crate::source::{Loader, SourceMap};
use crate::workspace::CrateSpec;
use crate::{analysis, callgraph, net, parse, resolve};
use std::collections::HashMap;
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
pub struct Core<'c> {
    pub config: &'c Config,
    pub eager_bodies: bool,
    pub walk_every_fn: bool,
    pub exiting: bool,
    pub unresolved_calls: bool,
    pub target: &'c TargetCfg,
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
    let cfgs: Vec<CfgCtx> = cfgs_of(&crates, opts.target);
    let roots: Vec<(PathBuf, usize)> = crates
        .iter()
        .enumerate()
        .map(|(i, c)| (c.root.clone(), i))
        .collect();
    let (mut parsed, mut diags) = parse::parse_all(&roots, &cfgs, files, &mut sources, eager);
    lap(&mut stats, "parse");
    if files.cancelled() {
        return called_off(root, files, &mut sources, parsed);
    }
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
    diags.extend(resolve::models::apply(&mut map, &cfg.models, &sources));
    resolve::flags::apply(&mut map, &parsed, &sources);
    let (root_fns, d) = resolve::configured::apply(&mut map, cfg, &sources);
    diags.extend(d);
    lap(&mut stats, "resolve");
    if files.cancelled() {
        free_aside(map.take_owned());
        drop(map);
        return called_off(root, files, &mut sources, parsed);
    }
    stats.fns = map.fns.iter().filter(|f| f.ir.is_some()).count();
    let walk = match opts.walk_every_fn {
        true => callgraph::Walk::Every,
        false => callgraph::Walk::FromRoots,
    };
    let mut reuse = (sources.take_walks()).map(|store| callgraph::Reuse {
        world: world(&sources, &parsed, (&crates, &map.fixed_flags), opts),
        store,
        ..Default::default()
    });
    let (graph, d) = callgraph::build(&mut map, &sources, (&root_fns, walk), reuse.as_mut());
    diags.extend(d);
    if let Some(reuse) = reuse {
        stats.walks_cached = Some((reuse.reused, reuse.walked));
        // A stale run's walks may have read a late text that is not the one they were
        // keyed by: not stored (the edge runs again, `SourceMap::stale`).
        if !sources.stale() {
            files.store_walks(reuse.store);
        }
    }
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
    let wanted = analysis::Wanted {
        unresolved: opts.unresolved_calls,
    };
    diags.extend(analysis::find(
        &map,
        &graph,
        &sources,
        (&roots_sorted, wanted),
    ));
    lap(&mut stats, "analysis");
    stats.files = sources.files().len();
    stats.lines = sources.files().iter().map(|f| f.lines()).sum();
    stats.fns_walked = graph.walked;
    stats.specialised_walked = graph.walked_specialised;
    stats.edges_exact = graph.count(crate::diagnostics::Confidence::Exact);
    stats.edges_inferred = graph.count(crate::diagnostics::Confidence::Inferred);
    stats.edges_name_only = graph.count(crate::diagnostics::Confidence::NameOnly);
    stats.unresolved = graph.unresolved_count();
    stats.calls = super::calls::by_crate(&map, &graph, &crates);
    stats.roots = roots_sorted.len();
    attach_origins(&mut diags, &parsed, &sources, &crates);
    sort(&mut diags);
    // A file read by two crates reports its parse errors and missing modules once.
    diags.dedup();
    if opts.exiting && !sources.stale() {
        // The process ends after rendering: freeing these is work the exit does for free
        // (not after a stale run, which the edge runs again: `SourceMap::stale`).
        std::mem::forget((map, graph));
        std::mem::forget(parsed);
    } else {
        free_aside((map.take_owned(), graph));
        drop(map);
        free_aside(parsed);
    }
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

/// What a run called off between stages returns ([`Loader::cancelled`]): no answer (its
/// caller does not use it), but the files it lowered go back to the loader, for the run
/// that replaces it; `parsed` is freed aside.
fn called_off(
    root: PathBuf,
    files: &dyn Loader,
    sources: &mut SourceMap,
    parsed: parse::Parsed,
) -> Analysis {
    if let Some(cache) = sources.take_lowered() {
        files.store_lowered(cache);
    }
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
