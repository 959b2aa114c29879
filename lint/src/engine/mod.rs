//! The engine: what runs around the core's pipeline (`nosync_lint_core::pipeline`:
//! parse → macro expansion → resolve → call graph → analysis). [`analyze`] is the edge: it
//! runs the workspace stage (cargo metadata) and reads from the disk (`io.rs`: the config,
//! the caches; `caches.rs`), meanwhile analysing a guess of cargo's answer
//! (`speculate.rs`); [`analyze_crates`] runs the pipeline over given crates and a
//! [`crate::source::Loader`] on a pool of large-stack threads behind the last panic net
//! (`pool.rs`).

use crate::diagnostics::{Diagnostic, Span, sort};
use crate::levels::LevelOverrides;
use crate::pipeline;
use crate::source::SourceMap;
use crate::workspace::{self, CrateSpec, WorkspaceOptions};
use std::path::PathBuf;
use std::time::Instant;

mod caches;
mod io;
mod no_deps;
mod no_roots;
mod pool;
mod speculate;
#[cfg(test)]
mod tests;

pub(crate) use crate::pipeline::{CrateCalls, RootUnseen, Stats};
pub use pool::analyze_crates;
pub(crate) use pool::analyze_crates_incremental;
#[cfg(test)]
pub(crate) use pool::analyze_crates_with;
pub use speculate::Speculation;

/// What to analyse and how.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub workspace: WorkspaceOptions,
    /// `--config FILE`.
    pub config: Option<PathBuf>,
    /// The pipeline's switches (lazy bodies, demand-driven walking, exiting). Its
    /// `unresolved_calls` is turned off where [`Options::levels`] allow the code.
    pub pipeline: pipeline::Options,
    /// While `cargo metadata` runs, analyse the selection the offline fallback would make,
    /// kept when cargo's selection is the same ([`Speculation`]); the CLI turns it on
    /// unless `NOSYNC_LINT_SPECULATE=0`. Off by default, so that a test runs one analysis.
    pub speculate: bool,
    /// With [`Options::speculate`]: when cargo has answered before the guess is made, the
    /// speculative run is dropped ([`Speculation::Late`]) instead of waited for, so that it
    /// never delays the run on cargo's selection. The CLI turns it on; off by default, so
    /// that a test's verdict does not depend on which of the two was faster.
    pub drop_late_guess: bool,
    /// The command line's level overrides, given by a caller that reports only what the
    /// levels leave (the CLI): a code that the config's `levels`, then these, allow is not
    /// made at all (`unresolved-call-in-no-sync`: thousands of diagnostics on a large
    /// workspace, allowed by default). `None` (the default): every diagnostic is made,
    /// whatever its level.
    pub levels: Option<LevelOverrides>,
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
    /// What became of the speculative analysis, when one was started (cargo ran).
    pub speculation: Option<Speculation>,
    /// The fns `--runtime-report` looks frames up in (not printed).
    pub(crate) fn_index: crate::pipeline::RawIndex,
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
    a.speculation = verdict;
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
