//! The pipeline: the stage sequence from parsing to the search, over given crates, a config
//! and a [`Loader`]. It runs on the caller's thread (or rayon pool): the engine gives it a
//! pool of large-stack threads and a panic net, the stages' tests a small pool. What it
//! reuses of earlier runs, and leaves to later ones, is the [`Incremental`] it is given.

mod calls;
mod index;
mod stages;

pub use calls::{CrateCalls, RootUnseen};
pub use index::{Call, Callee, FnIndex, IndexedFn, RawIndex};

use crate::analysis;
use crate::config::Config;
use crate::crate_graph::CrateSpec;
use crate::diagnostics::Diagnostic;
use crate::incremental::Incremental;
use crate::parse::{self, cfg::TargetCfg};
use crate::resolve;
use crate::source::{Loader, SourceMap};
use stages::{Graphed, Run};
use std::path::PathBuf;
use std::time::Duration;

/// The switches of a run (the config and the target are the [`Input`]'s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Lower every fn body with its file, not only when a root reaches it: the switch that
    /// lets the tests check that laziness changes no output (`NOSYNC_LINT_EAGER=1`, read by
    /// the CLI).
    pub eager_bodies: bool,
    /// Walk every fn body into the call graph, not only those the search from the roots
    /// reads: the switch that lets the tests check that demand-driven walking changes no
    /// output (`--walk-every-fn`, hidden).
    pub walk_every_fn: bool,
    /// The process exits once the answer is rendered (the binary): the tables of the
    /// analysis are not freed but left to the exit (freeing them was about a tenth of a
    /// warm run's CPU, on the cores that render the answer). Off by default: a test runs
    /// many analyses in one process.
    pub exiting: bool,
    /// Whether the unresolved calls the roots reach are made into
    /// `unresolved-call-in-no-sync` diagnostics (the engine turns it off when the levels
    /// allow them: thousands of diagnostics on a large workspace). On by default.
    pub unresolved_calls: bool,
    /// Whether the [`Output`] carries the fn index a join with a runtime wait report needs
    /// (`--runtime-report`); off, the index is empty and costs nothing.
    pub fn_index: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            eager_bodies: false,
            walk_every_fn: false,
            exiting: false,
            unresolved_calls: true,
            fn_index: false,
        }
    }
}

/// What the pipeline analyses: the crates, their workspace root, the source map (which
/// may hold some files already: the configuration's), the config, and the target the
/// `#[cfg]` predicates are evaluated for.
#[derive(Debug)]
pub struct Input<'c> {
    pub root: PathBuf,
    pub crates: Vec<CrateSpec>,
    pub sources: SourceMap,
    pub config: &'c Config,
    pub target: &'c TargetCfg,
}

impl<'c> Input<'c> {
    /// `crates` under `root` with `config`, on an unknown target.
    pub fn new(
        root: PathBuf,
        crates: Vec<CrateSpec>,
        sources: SourceMap,
        config: &'c Config,
    ) -> Input<'c> {
        Input {
            root,
            crates,
            sources,
            config,
            target: TargetCfg::unknown(),
        }
    }
}

/// What a run gives besides its diagnostics: the root, crates and sources it was given
/// (the sources with every file it read) and its figures.
#[derive(Debug, Default)]
pub struct Output {
    pub root: PathBuf,
    pub crates: Vec<CrateSpec>,
    pub sources: SourceMap,
    pub stats: Stats,
    /// What a join with a runtime wait report needs of the analysis (spans, no text read).
    pub index: RawIndex,
}

/// The figures of a run (`-v` prints them; the edge adds its own).
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
    /// The call sites of the walked fns by how they were resolved, per crate, then all
    /// of them (`calls.rs`).
    pub calls: Vec<CrateCalls>,
    /// The roots whose search reaches unresolved calls, with how many by crate.
    pub unseen: Vec<RootUnseen>,
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
    /// With the stamp table: how many files' texts were read (with the file, or late),
    /// of how many files (the others were vouched for by their stamps, see `source::Text`).
    pub texts_read: Option<(usize, usize)>,
    /// With the cache of walks: how many walked nodes (fns and specialised nodes with a
    /// body) came from it, of how many.
    pub walks_cached: Option<(usize, usize)>,
}

/// The pipeline: parse, expand `macro_rules!`, resolve, build the call graph from the
/// roots, search it; the diagnostics sorted and settled. Each stage returns its data and
/// diagnostics; the caches it can use come from `incr`, and go back to the edge through it
/// once done with. A run called off between stages ([`Incremental::cancelled`]) returns no
/// answer (its caller does not use it).
pub fn run(
    input: Input<'_>,
    opts: &Options,
    files: &dyn Loader,
    incr: &mut Incremental,
) -> (Output, Vec<Diagnostic>) {
    let Input {
        root,
        crates,
        mut sources,
        config,
        target,
    } = input;
    let mut run = Run::new(crates.len());
    let cfgs = stages::cfgs_of(&crates, target);
    let (mut parsed, d) = parse::parse_all(
        &stages::crate_roots(&crates),
        &cfgs,
        files,
        &mut incr.files,
        &mut sources,
        opts.eager_bodies,
    );
    run.lap("parse", d);
    if incr.cancelled() {
        return stages::called_off(root, incr, parsed);
    }
    let given = resolve::macros::Given {
        cfgs: &cfgs,
        crates: &crates,
        files,
    };
    stages::expand(&mut parsed, given, &mut sources, incr, &mut run);
    run.stats.lowered_cached = incr.lowering_done();
    let (mut map, root_fns, d) = resolve::resolve_all(&crates, &parsed, &sources, config);
    run.lap("resolve", d);
    if incr.cancelled() {
        stages::free_aside(map.take_owned());
        drop(map);
        return stages::called_off(root, incr, parsed);
    }
    let graphed = Graphed {
        sources: &sources,
        parsed: &parsed,
        crates: &crates,
        roots: &root_fns,
        config,
        target,
    };
    let (graph, d) = stages::call_graph(&mut map, graphed, opts, incr, &mut run);
    run.lap("callgraph", d);
    let roots = analysis::sorted_roots(&map, root_fns);
    let d = stages::search(&map, &graph, &sources, &roots, opts);
    run.lap("analysis", d);
    let counted = stages::Counted {
        map: &map,
        graph: &graph,
        sources: &sources,
        crates: &crates,
        roots: &roots,
    };
    let stats = stages::figures(run.stats, counted);
    let index = match opts.fn_index {
        true => index::build(&map, &graph, &sources, &root),
        false => RawIndex::default(),
    };
    let diags = analysis::settle(run.diags, &parsed, &sources, &crates);
    let exiting = opts.exiting && !incr.stale();
    stages::free(map, graph, exiting);
    stages::release(parsed, exiting);
    let output = Output {
        root,
        crates,
        sources,
        stats,
        index,
    };
    (output, diags)
}
