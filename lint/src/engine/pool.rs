//! The core's pipeline ([`pipeline::run`]) as the engine runs it: on a pool of large-stack
//! threads, behind the last panic net, its output made into an [`Analysis`].

use super::Analysis;
use crate::config::Config;
use crate::diagnostics::{Diagnostic, Span};
use crate::incremental::Incremental;
use crate::pipeline::{self, Input, Options, Output};
use crate::source::{Loader, SourceMap};
use crate::workspace::CrateSpec;
use crate::{panics, parse};
use std::path::PathBuf;

/// The analysis of `crates` on a pool whose threads have large stacks. Every file is read
/// through `files` (and added to `sources`, which may hold some already).
pub fn analyze_crates(
    root: PathBuf,
    crates: Vec<CrateSpec>,
    cfg: &Config,
    files: &dyn Loader,
    sources: SourceMap,
) -> Analysis {
    let input = Input::new(root, crates, sources, cfg);
    analyze_crates_with(input, &Options::default(), files)
}

/// [`analyze_crates`] with the pipeline's options, and no caches.
pub(crate) fn analyze_crates_with(
    input: Input<'_>,
    opts: &Options,
    files: &dyn Loader,
) -> Analysis {
    let mut incr = Incremental::default();
    analyze_crates_incremental(input, opts, files, &mut incr)
}

/// [`analyze_crates_with`], reusing and filling the caches of `incr` (called off when its
/// cancel token is set).
pub(crate) fn analyze_crates_incremental(
    input: Input<'_>,
    opts: &Options,
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
    let (fallback_root, cfg) = (input.root.clone(), input.config);
    let running = &mut *incr;
    let run = || match pool {
        Ok(pool) => pool.install(move || pipeline::run(input, opts, files, running)),
        Err(_) => single_thread(input, opts, files, running),
    };
    // The stages have nets of their own; this one catches what falls between them.
    match panics::catch(run) {
        // Called off: no answer (its caller does not use it), nor the config's levels.
        Ok((output, _)) if incr.cancelled() => Analysis {
            root: output.root,
            ..Analysis::default()
        },
        Ok((output, diags)) => answer(output, diags, cfg),
        Err(caught) => {
            let at = Span::start_of(PathBuf::from("Cargo.toml"));
            let lost = "nothing was reported";
            Analysis {
                root: fallback_root,
                diagnostics: vec![caught.diagnostic("analysing", "the workspace", lost, at)],
                ..Analysis::default()
            }
        }
    }
}

/// Most analysis threads.
const MAX_THREADS: usize = 16;

/// Without a pool: one thread with a large stack (still no deep recursion on the
/// caller's stack), or the caller's thread as a last resort.
fn single_thread(
    input: Input<'_>,
    opts: &Options,
    files: &dyn Loader,
    incr: &mut Incremental,
) -> (Output, Vec<Diagnostic>) {
    // The inputs go through a slot, so that they come back if the thread cannot start.
    let slot = std::sync::Mutex::new(Some((input, incr)));
    let take = || slot.lock().ok().and_then(|mut s| s.take());
    let ran = std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .stack_size(parse::STACK_SIZE)
            .spawn_scoped(scope, || {
                take().map(|(i, c)| pipeline::run(i, opts, files, c))
            });
        match spawned.map(|handle| handle.join()) {
            Ok(Ok(ran)) => ran,
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            Err(_) => None,
        }
    });
    // `None` is unreachable: the thread either ran or never started (the inputs are back).
    ran.or_else(|| take().map(|(i, c)| pipeline::run(i, opts, files, c)))
        .unwrap_or_default()
}

/// The answer, with the configuration's levels where they are written.
fn answer(output: Output, diagnostics: Vec<Diagnostic>, cfg: &Config) -> Analysis {
    let Output {
        root,
        crates,
        sources,
        stats,
        index,
    } = output;
    let config_levels = (cfg.levels.iter())
        .map(|l| (l.target, l.level, sources.span(l.span)))
        .collect();
    Analysis {
        root,
        diagnostics,
        stats,
        sources,
        crates,
        config_levels,
        metadata: None,
        speculation: None,
        fn_index: index,
    }
}
