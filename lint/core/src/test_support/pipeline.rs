//! The pipeline over a [`Fixture`] (the core's own, [`crate::pipeline::run`], with no caches,
//! on a pool of two threads with the parser's stack size), and the `check` helpers the
//! stages' tests call. What it leaves out is the engine's own: the caches, cancellation, the
//! safety net around the whole run.

use super::{Analysed, Fixture, ROOT, chains_of, finding_lines, render, same_either_walk};
use crate::config::Config;
use crate::diagnostics::Diagnostic;
use crate::incremental::Incremental;
use crate::parse;
pub use crate::pipeline::{Input, Options, Stats};
use crate::source::{Loader, SourceMap};
use std::path::Path;

/// What the pipeline returns that the tests read: the diagnostics (sorted), the figures,
/// the sources the diagnostics point into.
#[derive(Debug, Default)]
pub struct Analysis {
    pub diagnostics: Vec<Diagnostic>,
    pub stats: Stats,
    pub sources: SourceMap,
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

/// The analysis of `input` (files read through `files`) on a pool whose threads have the
/// parser's large stacks.
pub fn analyze_crates_with(input: Input<'_>, opts: Options, files: &dyn Loader) -> Analysis {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .stack_size(parse::STACK_SIZE)
        .build()
        .expect("a pool of two threads");
    let mut incr = Incremental::default();
    let (output, diagnostics) =
        pool.install(|| crate::pipeline::run(input, &opts, files, &mut incr));
    Analysis {
        diagnostics,
        stats: output.stats,
        sources: output.sources,
    }
}

/// [`analyze_crates_with`] walking only what the search from the roots reads, then walking
/// every fn: the diagnostics must be the same ([`same_either_walk`]). Returns the second
/// analysis, whose figures are those of the whole call graph.
pub fn both_walks(analyze: impl Fn(Options) -> Analysis) -> Analysis {
    let opts = |walk_every_fn| Options {
        walk_every_fn,
        ..Options::default()
    };
    same_either_walk(analyze(opts(false)), analyze(opts(true)))
}

/// The analysis of `fixture` (files added to `sources`), both ways ([`both_walks`]).
pub fn analyze_fixture(fixture: &Fixture, cfg: &Config, sources: SourceMap) -> Analysis {
    both_walks(|opts| {
        let (root, crates) = (fixture.root.clone(), fixture.crates.clone());
        let input = Input::new(root, crates, sources.clone(), cfg);
        analyze_crates_with(input, opts, &fixture.files)
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
