//! The core pipeline over a [`Fixture`], and the `check` helpers the stages' tests call.
//! It runs the stages as the engine's pipeline does (`parse_all`, `expand_all`,
//! `resolve_all`, `callgraph::build`, `analysis::find`, `settle`), on a pool of threads with
//! the parser's stack size; what it leaves out is the engine's own: caches, cancellation,
//! the safety net around the whole run and its figures but those the tests read.

use super::{Analysed, Fixture, ROOT, chains_of, finding_lines, render, same_either_walk};
use crate::config::Config;
use crate::crate_graph::CrateSpec;
use crate::diagnostics::{Confidence, Diagnostic};
use crate::incremental::Incremental;
use crate::parse::cfg::{CfgCtx, TargetCfg};
use crate::source::{Loader, SourceMap};
use crate::{analysis, callgraph, parse, resolve};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What the pipeline is given besides the crates and files: the config, whether every fn
/// body is lowered with its file, whether every fn is walked into the call graph, whether
/// the unresolved calls the roots reach are reported, and the target `#[cfg]`s are
/// evaluated for.
#[derive(Debug, Clone, Copy)]
pub struct Options<'c> {
    pub config: &'c Config,
    pub eager_bodies: bool,
    pub walk_every_fn: bool,
    pub unresolved_calls: bool,
    pub target: &'c TargetCfg,
}

impl<'c> Options<'c> {
    /// Lazy bodies, walking from the roots, unresolved calls reported, an unknown target.
    pub fn new(config: &'c Config) -> Options<'c> {
        Options {
            config,
            eager_bodies: false,
            walk_every_fn: false,
            unresolved_calls: true,
            target: TargetCfg::unknown(),
        }
    }
}

/// What the pipeline returns: the diagnostics (sorted), the figures the tests read, the
/// sources the diagnostics point into.
#[derive(Debug, Default)]
pub struct Analysis {
    pub diagnostics: Vec<Diagnostic>,
    pub stats: Stats,
    pub sources: SourceMap,
}

/// The figures of a run (those of the engine's `-v` that the tests read).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Stats {
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
}

impl Analysed for Analysis {
    fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    fn graph_size(&self) -> (usize, usize) {
        let s = &self.stats;
        let edges = s.edges_exact + s.edges_inferred + s.edges_name_only;
        (edges, s.unresolved)
    }
}

/// The analysis of `crates` (files read through `files`, added to `sources`) on a pool whose
/// threads have the parser's large stacks.
pub fn analyze_crates_with(
    crates: &[CrateSpec],
    opts: Options<'_>,
    files: &dyn Loader,
    sources: SourceMap,
) -> Analysis {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .stack_size(parse::STACK_SIZE)
        .build()
        .expect("a pool of two threads");
    pool.install(|| pipeline(crates, opts, files, sources))
}

/// Parse, expand `macro_rules!`, resolve, build the call graph, search it.
fn pipeline(
    crates: &[CrateSpec],
    opts: Options<'_>,
    files: &dyn Loader,
    mut sources: SourceMap,
) -> Analysis {
    let cfgs = cfgs_of(crates, opts.target);
    let roots: Vec<(PathBuf, usize)> = (crates.iter().enumerate())
        .map(|(i, c)| (c.root.clone(), i))
        .collect();
    let mut incr = Incremental::default();
    let caches = (files, &mut incr.files);
    let eager = opts.eager_bodies;
    let (mut parsed, mut diags) = parse::parse_all(&roots, &cfgs, caches, &mut sources, eager);
    let inputs = (files, &mut incr);
    let (expansions, d) =
        resolve::macros::expand_all(&mut parsed, &cfgs, crates, inputs, &mut sources);
    diags.extend(d);
    let (mut map, root_fns, d) = resolve::resolve_all(crates, &parsed, &sources, opts.config);
    diags.extend(d);
    let fns = map.fns.iter().filter(|f| f.ir.is_some()).count();
    let walk = match opts.walk_every_fn {
        true => callgraph::Walk::Every,
        false => callgraph::Walk::FromRoots,
    };
    let (graph, d) = callgraph::build(&mut map, &sources, (&root_fns, walk), (None, None));
    diags.extend(d);
    let roots = analysis::sorted_roots(&map, root_fns);
    let wanted = analysis::Wanted {
        unresolved: opts.unresolved_calls,
    };
    diags.extend(analysis::find(&map, &graph, &sources, (&roots, wanted)));
    let stats = Stats {
        fns,
        macro_expansions: expansions.expanded,
        macro_failures: expansions.failed,
        ..stats_of(&graph)
    };
    let diagnostics = analysis::settle(diags, &parsed, &sources, crates);
    Analysis {
        diagnostics,
        stats,
        sources,
    }
}

/// Each crate's `#[cfg]` context: its features, on `target`.
fn cfgs_of(crates: &[CrateSpec], target: &TargetCfg) -> Vec<CfgCtx> {
    let target = Arc::new(target.clone());
    (crates.iter())
        .map(|c| CfgCtx {
            features: c.features.clone(),
            test: false,
            target: target.clone(),
        })
        .collect()
}

/// The call graph's figures.
fn stats_of(graph: &callgraph::CallGraph) -> Stats {
    Stats {
        fns_walked: graph.walked,
        specialised_walked: graph.walked_specialised,
        edges_exact: graph.count(Confidence::Exact),
        edges_inferred: graph.count(Confidence::Inferred),
        edges_name_only: graph.count(Confidence::NameOnly),
        unresolved: graph.unresolved_count(),
        ..Stats::default()
    }
}

/// [`analyze_crates_with`] walking only what the search from the roots reads, then walking
/// every fn: the diagnostics must be the same ([`same_either_walk`]). Returns the second
/// analysis, whose figures are those of the whole call graph.
pub fn both_walks(cfg: &Config, analyze: impl Fn(Options<'_>) -> Analysis) -> Analysis {
    let opts = |walk_every_fn| Options {
        walk_every_fn,
        ..Options::new(cfg)
    };
    same_either_walk(analyze(opts(false)), analyze(opts(true)))
}

/// The analysis of `fixture` (files added to `sources`), both ways ([`both_walks`]).
pub fn analyze_fixture(fixture: &Fixture, cfg: &Config, sources: SourceMap) -> Analysis {
    both_walks(cfg, |opts| {
        analyze_crates_with(&fixture.crates, opts, &fixture.files, sources.clone())
    })
}

/// Analyses `src` as the root file of a crate `t` (with `cudarc` and `nosync` as
/// external dependencies) and returns one line per diagnostic (see [`render`]).
pub fn check(src: &str) -> String {
    check_with(src, &Config::default())
}

/// [`check`] with a config.
pub fn check_with(src: &str, cfg: &Config) -> String {
    render(
        &analyze_src(src, cfg, SourceMap::new(Path::new(ROOT))),
        false,
    )
}

/// The analysis of `src` as `/mem/t/src/lib.rs`, with `sources` (e.g. config files) added.
pub fn analyze_src(src: &str, cfg: &Config, sources: SourceMap) -> Analysis {
    analyze_fixture(&Fixture::src(src), cfg, sources)
}

/// Analyses crates of several files ([`Fixture::tree`], no dependencies between them).
/// Lines start with the file (relative path).
pub fn check_tree(files: &[(&str, &str)], crates: &[(&str, &str)]) -> String {
    check_tree_deps(files, crates, &[])
}

/// [`check_tree`] with dependencies between the crates (see [`Fixture::tree`]).
pub fn check_tree_deps(
    files: &[(&str, &str)],
    crates: &[(&str, &str)],
    deps: &[(usize, usize)],
) -> String {
    render(&analyze_tree(files, crates, deps), true)
}

/// The analysis of [`check_tree_deps`].
pub fn analyze_tree(
    files: &[(&str, &str)],
    crates: &[(&str, &str)],
    deps: &[(usize, usize)],
) -> Analysis {
    analyze_tree_with(files, crates, deps, &Config::default())
}

/// [`analyze_tree`] with a configuration.
pub fn analyze_tree_with(
    files: &[(&str, &str)],
    crates: &[(&str, &str)],
    deps: &[(usize, usize)],
    cfg: &Config,
) -> Analysis {
    let fixture = Fixture::tree(files, crates, deps);
    let sources = fixture.sources();
    analyze_fixture(&fixture, cfg, sources)
}

/// [`chains_of`] the analysis of `src` as [`check`] analyses it.
pub fn chains(src: &str) -> String {
    chains_with(src, &Config::default())
}

/// [`chains`] with a config.
pub fn chains_with(src: &str, cfg: &Config) -> String {
    chains_of(
        &analyze_src(src, cfg, SourceMap::new(Path::new(ROOT))),
        false,
    )
}

/// [`chains_of`] the crates of [`check_tree_deps`] (lines start with the file).
pub fn chains_tree(
    files: &[(&str, &str)],
    crates: &[(&str, &str)],
    deps: &[(usize, usize)],
) -> String {
    chains_of(&analyze_tree(files, crates, deps), true)
}

/// The first lines of the findings of `src` ([`check`]), unresolved calls left out.
pub fn findings(src: &str) -> Vec<String> {
    finding_lines(&check(src))
}
