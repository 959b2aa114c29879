//! Unit tests of what the engine adds to the stages (whose own tests are beside them in
//! `nosync-lint-core`): its pipeline's cancellation, stamp table and `-v` figures, an internal
//! error's exit status, the configuration's levels and the report. Every file is read through a
//! [`MemLoader`], so no unit test of the engine touches the disk; the in-memory crates come
//! from the core's `test_support`.

use crate::config::Config;
use crate::engine::analyze_crates_with;
use crate::pipeline::{Input, Options};
use crate::source::{MemLoader, SourceMap};
use nosync_lint_core::test_support::{
    Analysed, Fixture, ROOT, same_either_walk, spec, with_prelude,
};
use std::path::{Path, PathBuf};

impl Analysed for crate::Analysis {
    fn diagnostics(&self) -> &[crate::diagnostics::Diagnostic] {
        &self.diagnostics
    }

    fn graph_size(&self) -> (usize, usize) {
        let st = &self.stats;
        let edges = st.edges_exact + st.edges_inferred + st.edges_name_only;
        (edges, st.unresolved)
    }
}

/// The analysis of `src` as `/mem/t/src/lib.rs`, with `sources` (e.g. config files) added.
fn analyze_src(src: &str, cfg: &Config, sources: SourceMap) -> crate::Analysis {
    analyze_fixture(&Fixture::src(src), cfg, sources)
}

/// The engine's analysis of `fixture` both ways ([`both_walks`]).
fn analyze_fixture(fixture: &Fixture, cfg: &Config, sources: SourceMap) -> crate::Analysis {
    both_walks(|opts| {
        let (root, crates) = (fixture.root.clone(), fixture.crates.clone());
        let input = Input::new(root, crates, sources.clone(), cfg);
        analyze_crates_with(input, &opts, &fixture.files)
    })
}

/// `analyze` walking only what the search from the roots reads, then walking every fn:
/// the diagnostics must be the same ([`same_either_walk`]). Returns the second analysis,
/// whose figures are those of the whole call graph.
fn both_walks(analyze: impl Fn(Options) -> crate::Analysis) -> crate::Analysis {
    let opts = |walk_every_fn| Options {
        walk_every_fn,
        ..Options::default()
    };
    same_either_walk(analyze(opts(false)), analyze(opts(true)))
}

/// The engine's analysis of the crates of [`Fixture::tree`].
fn analyze_tree(
    files: &[(&str, &str)],
    crates: &[(&str, &str)],
    deps: &[(usize, usize)],
) -> crate::Analysis {
    analyze_tree_with(files, crates, deps, &Config::default())
}

/// [`analyze_tree`] with a configuration.
fn analyze_tree_with(
    files: &[(&str, &str)],
    crates: &[(&str, &str)],
    deps: &[(usize, usize)],
    cfg: &Config,
) -> crate::Analysis {
    let fixture = Fixture::tree(files, crates, deps);
    analyze_fixture(&fixture, cfg, fixture.sources())
}

mod called_off;
mod calls;
mod panics;
mod pipeline;
mod stamps;
