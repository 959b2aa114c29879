//! The pipeline's steps between the stages: the nets, the figures, what a called-off run
//! returns, and the freeing of the tables aside.

use super::{Options, Output, Stats, calls};
use crate::config::Config;
use crate::crate_graph::CrateSpec;
use crate::diagnostics::{Confidence, Diagnostic};
use crate::incremental::Incremental;
use crate::parse::cfg::{CfgCtx, TargetCfg};
use crate::source::SourceMap;
use crate::{analysis, callgraph, panics, parse, resolve};
use std::path::PathBuf;
use std::time::Instant;

/// A run's diagnostics so far, its stats and the time of each stage.
pub(super) struct Run {
    pub diags: Vec<Diagnostic>,
    pub stats: Stats,
    timer: Instant,
}

impl Run {
    pub(super) fn new(crates: usize) -> Run {
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
    pub(super) fn lap(&mut self, name: &'static str, diags: Vec<Diagnostic>) {
        self.diags.extend(diags);
        self.stats.phases.push((name, self.timer.elapsed()));
        self.timer = Instant::now();
    }
}

/// Each crate's root file and its index (its `#[cfg]` context).
pub(super) fn crate_roots(crates: &[CrateSpec]) -> Vec<(PathBuf, usize)> {
    let roots = crates.iter().enumerate();
    roots.map(|(i, c)| (c.root.clone(), i)).collect()
}

/// `macro_rules!` expansion, behind a net; its diagnostics and figures go to `run`.
pub(super) fn expand(
    parsed: &mut parse::Parsed,
    given: resolve::macros::Given<'_>,
    sources: &mut SourceMap,
    incr: &mut Incremental,
    run: &mut Run,
) {
    let at = sources.first_span();
    let what = |c: &crate::panics::Caught| {
        let lost = "the invocations not expanded yet are analysed as written";
        c.diagnostic("expanding", "`macro_rules!` invocations", lost, at.clone())
    };
    let expanded = panics::guard(&mut run.diags, what, || {
        resolve::macros::expand_all(parsed, given, incr, sources)
    });
    let (expansions, d) = expanded.unwrap_or_default();
    run.diags.extend(d);
    run.stats.macro_expansions = expansions.expanded;
    run.stats.macro_failures = expansions.failed;
}

/// What the call graph is built from besides the def map, and what the world of its
/// cache of walks is made of ([`world`]).
#[derive(Clone, Copy)]
pub(super) struct Graphed<'a> {
    pub sources: &'a SourceMap,
    pub parsed: &'a parse::Parsed,
    pub crates: &'a [CrateSpec],
    pub roots: &'a [resolve::FnId],
    pub config: &'a Config,
    pub target: &'a TargetCfg,
}

/// The call graph, from the roots (or of every fn), reusing the walks of earlier runs.
pub(super) fn call_graph(
    map: &mut resolve::DefMap<'_>,
    with: Graphed<'_>,
    opts: &Options,
    incr: &mut Incremental,
    run: &mut Run,
) -> (callgraph::CallGraph, Vec<Diagnostic>) {
    run.stats.fns = map.fns.iter().filter(|f| f.ir.is_some()).count();
    let walk = match opts.walk_every_fn {
        true => callgraph::Walk::Every,
        false => callgraph::Walk::FromRoots,
    };
    let mut reuse = incr.walks.take().map(|store| callgraph::Reuse {
        world: world(with, &map.fixed_flags, opts),
        store,
        ..Default::default()
    });
    let caches = callgraph::Caches {
        walks: reuse.as_mut(),
        bodies: incr.bodies.as_ref(),
    };
    let built = callgraph::build(map, with.sources, with.roots, walk, caches);
    if let Some(reuse) = reuse {
        run.stats.walks_cached = Some((reuse.reused, reuse.walked));
        incr.walking_done(reuse.store);
    }
    built
}

/// The search from the roots: their chains to blocking sinks.
pub(super) fn search(
    map: &resolve::DefMap<'_>,
    graph: &callgraph::CallGraph,
    sources: &SourceMap,
    roots: &[resolve::FnId],
    opts: &Options,
) -> Vec<Diagnostic> {
    let wanted = analysis::Wanted {
        unresolved: opts.unresolved_calls,
    };
    analysis::find(map, graph, sources, (roots, wanted))
}

/// What a run's figures are counted from.
pub(super) struct Counted<'a, 'm> {
    pub map: &'a resolve::DefMap<'m>,
    pub graph: &'a callgraph::CallGraph,
    pub sources: &'a SourceMap,
    pub crates: &'a [CrateSpec],
    pub roots: &'a [resolve::FnId],
}

/// The figures of a run (`-v`): its files, fns, edges and calls.
pub(super) fn figures(mut stats: Stats, of: Counted<'_, '_>) -> Stats {
    let Counted {
        map,
        graph,
        sources,
        crates,
        roots,
    } = of;
    stats.files = sources.files().len();
    stats.lines = sources.files().iter().map(|f| f.lines()).sum();
    stats.fns_walked = graph.walked;
    stats.specialised_walked = graph.walked_specialised;
    stats.edges_exact = graph.count(Confidence::Exact);
    stats.edges_inferred = graph.count(Confidence::Inferred);
    stats.edges_name_only = graph.count(Confidence::NameOnly);
    stats.unresolved = graph.unresolved_count();
    stats.calls = calls::by_crate(map, graph, crates);
    stats.unseen = calls::unseen_by_root(map, graph, (roots, crates));
    stats.roots = roots.len();
    stats
}

/// Frees the item trees and the call graph aside ([`release`]).
pub(super) fn free(mut map: resolve::DefMap<'_>, graph: callgraph::CallGraph, exiting: bool) {
    release((map.take_owned(), graph), exiting);
    drop(map);
}

/// Frees `value` aside; or, when the process ends after rendering (`exiting`), not at all:
/// that is work the exit does for free. (Not after a stale run, which the edge runs again.)
pub(super) fn release<T: Send + 'static>(value: T, exiting: bool) {
    match exiting {
        true => std::mem::forget(value),
        false => free_aside(value),
    }
}

/// What a run called off between stages returns ([`Incremental::cancelled`]): no answer
/// (its caller does not use it), but the files it lowered go back to the edge, for the run
/// that replaces it; `parsed` is freed aside.
pub(super) fn called_off(
    root: PathBuf,
    incr: &mut Incremental,
    parsed: parse::Parsed,
) -> (Output, Vec<Diagnostic>) {
    incr.lowering_done();
    free_aside(parsed);
    let output = Output {
        root,
        ..Output::default()
    };
    (output, Vec::new())
}

/// Frees `value` on a thread of its own, off the caller's path: the item trees and the
/// call graph are hundreds of thousands of allocations (a twentieth of a warm run on
/// candle). The thread ends once they are freed; where none can start, they are freed here.
pub(super) fn free_aside<T: Send + 'static>(value: T) {
    // A failed spawn drops the closure, and `value` with it, before returning.
    let _ = std::thread::Builder::new()
        .name("nosync-lint-free".to_owned())
        .spawn(move || drop(value));
}

/// The world the cache of walks is valid in (see `callgraph::reuse`): the files in their
/// order, each parsed file's digest (its lowering but where its text stands), the crates
/// (their features sorted), the library flags fixed at their defaults, what the config
/// names (roots, sinks, allowed fns), the switches and the target; nothing that hashes in a
/// process's own order.
fn world(with: Graphed<'_>, flags: &resolve::NameMap<bool>, opts: &Options) -> u128 {
    use std::fmt::Write;
    let mut h = crate::source::KeyWriter::new();
    for f in with.sources.files() {
        let _ = write!(h, "{:?}\u{1f}", f.path);
    }
    let mut files: Vec<_> = with.parsed.files.iter().collect();
    files.sort_unstable_by(|a, b| a.0.cmp(b.0));
    for ((path, cfg), f) in files {
        let _ = write!(h, "{path:?} {cfg} {} {}\u{1f}", f.file, f.digest);
    }
    for c in with.crates {
        let mut features: Vec<&String> = c.features.iter().collect();
        features.sort_unstable();
        let (name, root, deps, check) = (&c.name, &c.root, &c.deps, c.check_roots);
        let _ = write!(
            h,
            "{name} {root:?} {features:?} {deps:?} {check} {:?} {:?}",
            c.origin, c.versions
        );
    }
    let cfg = with.config;
    let _ = write!(h, "{:?} {:?} {:?}", cfg.roots, cfg.sinks, cfg.allow);
    let models = cfg.models.iter().map(|m| (&m.model, m.span));
    let _ = write!(h, " {:?}", models.collect::<Vec<_>>());
    let mut flags: Vec<_> = flags.iter().collect();
    flags.sort_unstable();
    let _ = write!(h, " {flags:?}");
    let _ = write!(h, "{} {}", opts.eager_bodies, opts.walk_every_fn);
    let _ = write!(h, " {}", with.target.key());
    h.key()
}

/// Each crate's `#[cfg]` context: its features, on the run's target.
pub(super) fn cfgs_of(crates: &[CrateSpec], target: &TargetCfg) -> Vec<CfgCtx> {
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
