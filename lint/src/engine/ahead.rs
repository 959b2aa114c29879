//! Lowering ahead: while `cargo metadata` runs (one core, 0.45 s on candle), the members'
//! files are parsed and lowered on the other one, into a cache of lowered files that the
//! real parse stage then consults like the one kept in the target dir.
//!
//! Which crates, and with which features, is a guess ([`workspace::guess_members`]:
//! `cargo metadata --no-deps` and the fallback's feature rules). A guess is safe because
//! it is only ever used through the cache's keys: an entry is found only for the same
//! text, path, `mod` directory, `#[cfg]` features and body mode, for which lowering gives
//! the same result (it reads nothing else), so a wrong guess is a miss and the output is
//! that of a run without it. Once cargo has answered, the work stops (between two files):
//! what is lowered is used, the rest is parsed by the real stage on every core.

use crate::parse::{self, FileJob, cfg::CfgCtx};
use crate::source::{DiskLoader, LoweredCache, SourceMap};
use crate::workspace::{self, CrateSpec, WorkspaceOptions};
use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

/// The lowering ahead in progress.
pub struct Ahead {
    stop: Arc<AtomicBool>,
    /// Set once the guess is made and files are being lowered.
    lowering: Arc<AtomicBool>,
    handle: Option<JoinHandle<Option<LoweredCache>>>,
}

impl Ahead {
    /// Starts guessing and lowering on a thread of its own.
    pub fn start(opts: &WorkspaceOptions, eager: bool) -> Ahead {
        let stop = Arc::new(AtomicBool::new(false));
        let lowering = Arc::new(AtomicBool::new(false));
        let (s, l, o) = (stop.clone(), lowering.clone(), opts.clone());
        let handle = std::thread::Builder::new()
            .name("lower-ahead".to_owned())
            .stack_size(parse::STACK_SIZE)
            .spawn(move || crate::net::catch(|| run(&o, eager, &s, &l)).ok().flatten())
            .ok();
        Ahead {
            stop,
            lowering,
            handle,
        }
    }

    /// Stops the work and returns what was lowered. Still guessing (cargo answered, or
    /// failed, before `cargo metadata --no-deps` did), it is not waited for. (It is started
    /// only when the metadata cache missed: see `workspace::load`'s `before_cargo`.)
    pub fn finish(mut self) -> Option<LoweredCache> {
        self.stop.store(true, Ordering::SeqCst);
        if !self.lowering.load(Ordering::SeqCst) {
            return None;
        }
        self.handle.take()?.join().ok().flatten()
    }
}

fn run(
    opts: &WorkspaceOptions,
    eager: bool,
    stop: &AtomicBool,
    lowering: &AtomicBool,
) -> Option<LoweredCache> {
    let crates = workspace::guess_members(opts);
    lowering.store(true, Ordering::SeqCst);
    let cfgs = cfgs_of(&crates);
    let mut queue: VecDeque<FileJob> = crates
        .iter()
        .enumerate()
        .map(|(i, c)| FileJob {
            path: c.root.clone(),
            cfg: i,
            mod_dir: c.root.parent().map(Path::to_path_buf).unwrap_or_default(),
            declared_at: None,
        })
        .collect();
    let mut seen: HashSet<(PathBuf, usize)> = HashSet::new();
    let mut sources = SourceMap::new(Path::new("/"));
    sources.set_lowered(Some(LoweredCache::default()));
    // One file at a time, so that the work stops as soon as cargo has answered.
    while let Some(job) = queue.pop_front() {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        if seen.insert((job.path.clone(), job.cfg)) {
            let next = parse::lower_one(&job, &cfgs, &DiskLoader, &mut sources, eager);
            queue.extend(next);
        }
    }
    sources.take_lowered()
}

/// Each crate's `#[cfg]` context.
pub fn cfgs_of(crates: &[CrateSpec]) -> Vec<CfgCtx> {
    crates
        .iter()
        .map(|c| CfgCtx {
            features: c.features.clone(),
            test: false,
        })
        .collect()
}
