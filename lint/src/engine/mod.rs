//! The pipeline, stage by stage: workspace → config → parse → macro expansion →
//! resolve → call graph → analysis. [`analyze`] is the edge: it runs cargo metadata and
//! reads from the disk (`io.rs`: the config, the caches; `caches.rs`), meanwhile
//! analysing a guess of cargo's answer (`speculate.rs`); [`analyze_crates`] is the core
//! over given crates and a [`crate::source::Loader`], which is all it sees of files
//! (tests give it files in memory; `pipeline.rs`).

use crate::diagnostics::{Diagnostic, Span, sort};
use crate::levels::LevelOverrides;
use crate::source::SourceMap;
use crate::workspace::{self, CrateSpec, WorkspaceOptions};
use std::path::PathBuf;
use std::time::{Duration, Instant};

mod caches;
mod calls;
mod io;
mod no_deps;
mod no_roots;
mod pipeline;
mod speculate;
#[cfg(test)]
mod tests;

pub(crate) use calls::{CrateCalls, RootUnseen};
pub use pipeline::analyze_crates;
#[cfg(test)]
pub(crate) use pipeline::analyze_crates_with;
pub(crate) use pipeline::{Core, Input, analyze_crates_incremental};
pub use speculate::Speculation;

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
    /// While `cargo metadata` runs, analyse the selection the offline fallback would make,
    /// kept when cargo's selection is the same ([`Speculation`]); the CLI turns it on
    /// unless `NOSYNC_LINT_SPECULATE=0`. Off by default, so that a test runs one analysis.
    pub speculate: bool,
    /// With [`Options::speculate`]: when cargo has answered before the guess is made, the
    /// speculative run is dropped ([`Speculation::Late`]) instead of waited for, so that it
    /// never delays the run on cargo's selection. The CLI turns it on; off by default, so
    /// that a test's verdict does not depend on which of the two was faster.
    pub drop_late_guess: bool,
    /// The process exits once the answer is rendered (the binary, [`crate::run_then_exit`]):
    /// the tables of the analysis are not freed but left to the exit (freeing them was about
    /// a tenth of a warm run's CPU, on the cores that render the answer). Off by default: a
    /// test runs many analyses in one process.
    pub exiting: bool,
    /// The command line's level overrides, given by a caller that reports only what the
    /// levels leave (the CLI): a code that the config's `levels`, then these, allow is not
    /// made at all (`unresolved-call-in-no-sync`: thousands of diagnostics on a large
    /// workspace, allowed by default). `None` (the default): every diagnostic is made,
    /// whatever its level.
    pub levels: Option<LevelOverrides>,
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
    /// What became of the speculative analysis, when one was started (cargo ran).
    pub speculation: Option<Speculation>,
    /// The fns `--runtime-report` looks frames up in (not printed).
    pub(crate) fn_index: crate::runtime_report::RawIndex,
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
pub(crate) type ConfigLevel = (crate::levels::Subject, crate::diagnostics::Level, Span);

/// Runs `cargo metadata`, reads the configuration, and analyses the selected crates;
/// cargo's status lines go to `progress`. While cargo runs (the metadata cache missed),
/// the guess of its answer is analysed ([`Options::speculate`]).
pub fn analyze(opts: &Options, progress: &mut dyn FnMut(&str)) -> anyhow::Result<Analysis> {
    let start = Instant::now();
    // Only while cargo runs: on a cache hit there is nothing to overlap.
    let mut spec = speculate::Speculating {
        opts,
        running: None,
    };
    let loaded = workspace::load_with(&opts.workspace, progress, &mut spec);
    let metadata_time = start.elapsed();
    let (ws, ws_diags) = match loaded {
        Ok(loaded) => loaded,
        Err(e) => {
            // Not left running beside the caller (a test's next analysis, say).
            drop(spec.running.map(speculate::Running::finish));
            return Err(e);
        }
    };
    let metadata_phase = match ws.cached {
        true => "metadata (cache hit)",
        false => "metadata",
    };
    let inputs = io::Inputs::of(&ws);
    let mut phases = vec![(metadata_phase, metadata_time)];
    let (ran, verdict) = match spec.running {
        Some(running) => {
            let (ran, verdict) = speculate::settle(running, &inputs, opts, &mut phases)?;
            (ran, Some(verdict))
        }
        None => (io::run(&inputs, opts, false, None)?, None),
    };
    let mut a = io::complete(ran, ws, ws_diags, phases);
    a.stats.speculation = verdict;
    if opts.workspace.no_deps
        && let Some(d) = no_deps::leaving(&a.diagnostics, &inputs.unread)
    {
        a.diagnostics.push(d);
        sort(&mut a.diagnostics);
    }
    if a.stats.roots == 0 {
        let d = no_roots::no_roots(&a.root, &mut a.sources);
        a.diagnostics.push(d);
        sort(&mut a.diagnostics);
    }
    Ok(a)
}
