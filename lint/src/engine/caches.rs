//! The edge's caches in the target dir: where they live and for which build
//! ([`LoweredSlot`]), and the writer that stores the caches of lowered files and of walks
//! when the pipeline is done with them ([`CacheWriter`]), or holds them until the run is
//! known to be the answer (a speculative run, `speculate.rs`).

use crate::incremental::Keep;
use crate::source::LoweredCache;
use crate::workspace::cache_dir::{self, cache_dir};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Where the cache of lowered files lives (`lowered.bin` in the workspace's directory of
/// the target dir, [`cache_dir`]), and the build of the lint that may read it: its version
/// and its executable's size and time, so that a rebuilt lint never reads what another
/// build lowered.
#[derive(Debug, Clone)]
pub(super) struct LoweredSlot {
    file: PathBuf,
    build: u128,
    /// The workspace root whose caches these are.
    root: PathBuf,
}

impl LoweredSlot {
    /// The slot of the workspace at `root` in `target_dir`; `None` when the running
    /// executable cannot be identified (then nothing is cached).
    pub(super) fn of(target_dir: &Path, root: &Path) -> Option<LoweredSlot> {
        let exe = std::env::current_exe().ok()?;
        let meta = std::fs::metadata(&exe).ok()?;
        let time = meta
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?;
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        h.update(crate::VERSION.as_bytes());
        h.update(exe.as_os_str().as_encoded_bytes());
        h.update(&meta.len().to_le_bytes());
        h.update(&time.as_nanos().to_le_bytes());
        let root = crate::paths::normalize(root);
        let dir = cache_dir(&crate::paths::normalize(target_dir), &root);
        Some(LoweredSlot {
            file: dir.join("lowered.bin"),
            build: h.digest128(),
            root,
        })
    }

    /// Marks the workspace's caches used by this run; the first run of a workspace in this
    /// target dir prunes the others' ([`cache_dir::prune`]).
    pub(super) fn mark_used(&self) {
        if let Some(dir) = self.file.parent()
            && cache_dir::mark_used(dir, &self.root)
        {
            cache_dir::prune(dir);
        }
    }

    /// The slot of another cache beside this one (the same build).
    pub(super) fn named(&self, name: &str) -> LoweredSlot {
        LoweredSlot {
            file: self.file.with_file_name(name),
            build: self.build,
            root: self.root.clone(),
        }
    }

    /// The delta file beside the whole one (`lowered.delta` beside `lowered.bin`).
    fn delta(&self) -> PathBuf {
        self.file.with_extension("delta")
    }

    /// The stored cache, its whole file and its delta; an empty one when there is none, or
    /// it is unreadable or foreign.
    pub(super) fn read(&self) -> LoweredCache {
        let whole = std::fs::read(&self.file).unwrap_or_default();
        let delta = std::fs::read(self.delta()).unwrap_or_default();
        LoweredCache::from_files(whole, delta, self.build)
    }

    /// Stores `cache` when it changed (silently not, when it cannot): its delta only when
    /// it [writes one](LoweredCache::writes_delta), else the whole (and the delta, now in
    /// it, removed). Each file is written aside and renamed, so that a concurrent run never
    /// reads half of one.
    pub(super) fn write(&self, cache: &LoweredCache) {
        let Some(dir) = self.file.parent().filter(|_| cache.changed()) else {
            return;
        };
        let delta = cache.writes_delta();
        let file = if delta {
            self.delta()
        } else {
            self.file.clone()
        };
        let tmp = file.with_extension(format!("tmp{}", std::process::id()));
        let written = std::fs::create_dir_all(dir).and_then(|()| {
            let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
            cache.write_to(self.build, delta, &mut out)?;
            out.into_inner()
                .map_err(std::io::IntoInnerError::into_error)?;
            std::fs::rename(&tmp, &file)
        });
        match written {
            Ok(()) if !delta => {
                let _ = std::fs::remove_file(self.delta());
            }
            Ok(()) => {}
            Err(_) => {
                let _ = std::fs::remove_file(&tmp);
            }
        }
    }
}

/// The slots of the caches of lowered files and of walks: the pipeline hands the first
/// back when it has lowered its last file, the second when the call graph is built
/// ([`Keep`]), and each is written on a thread of its own meanwhile the analysis goes on
/// (its entries freed once written); or, when `hold`, kept until [`CacheWriter::release`]
/// writes them or [`CacheWriter::take_held`] takes the first.
#[derive(Debug)]
pub(super) struct CacheWriter {
    slot: Option<LoweredSlot>,
    hold: bool,
    held: Mutex<Option<LoweredCache>>,
    held_walks: Mutex<Option<LoweredCache>>,
    written: Mutex<Vec<JoinHandle<Duration>>>,
}

/// The names of the caches beside `lowered.bin`: of lazy fn bodies, of `macro_rules!`
/// expansions, of walks (`callgraph::reuse`).
pub(super) const BODIES: &str = "bodies.bin";
pub(super) const EXPANSIONS: &str = "expansions.bin";
pub(super) const WALKS: &str = "walks.bin";
/// The stamp table: each file's stamp and text hash when it was last read (`source::Text`).
pub(super) const STAMPS: &str = "stamps.bin";

impl Keep for CacheWriter {
    fn lowered(&self, cache: LoweredCache) {
        self.store(&self.held, self.slot.clone(), cache);
    }

    fn walks(&self, cache: LoweredCache) {
        let slot = self.slot.as_ref().map(|s| s.named(WALKS));
        self.store(&self.held_walks, slot, cache);
    }
}

impl CacheWriter {
    pub(super) fn new(slot: Option<LoweredSlot>, hold: bool) -> CacheWriter {
        CacheWriter {
            slot,
            hold,
            held: Mutex::new(None),
            held_walks: Mutex::new(None),
            written: Mutex::new(Vec::new()),
        }
    }

    fn store(
        &self,
        held: &Mutex<Option<LoweredCache>>,
        slot: Option<LoweredSlot>,
        cache: LoweredCache,
    ) {
        if self.hold {
            if let Ok(mut held) = held.lock() {
                *held = Some(cache);
            }
            return;
        }
        self.write_aside(slot, cache);
    }

    fn write_aside(&self, slot: Option<LoweredSlot>, cache: LoweredCache) {
        let Some(slot) = slot else {
            return;
        };
        let write = move || {
            let start = Instant::now();
            slot.write(&cache);
            start.elapsed()
        };
        let Ok(mut written) = self.written.lock() else {
            return;
        };
        // A thread that cannot start: not written (the next run does the work again).
        written.extend(std::thread::Builder::new().spawn(write).ok());
    }

    /// Writes the held caches, as [`Keep`] would have (on threads).
    pub(super) fn release(&self) {
        if let Some(cache) = self.take_held() {
            self.write_aside(self.slot.clone(), cache);
        }
        let walks = self.held_walks.lock().ok().and_then(|mut h| h.take());
        if let Some(cache) = walks {
            self.write_aside(self.slot.as_ref().map(|s| s.named(WALKS)), cache);
        }
    }

    /// The held cache of lowered files, not written.
    pub(super) fn take_held(&self) -> Option<LoweredCache> {
        self.held.lock().ok().and_then(|mut h| h.take())
    }

    /// Waits for the caches to be written; the time that took.
    pub(super) fn join(&self) -> Duration {
        let handles = self.written.lock().map(|mut w| std::mem::take(&mut *w));
        (handles.unwrap_or_default().into_iter())
            .filter_map(|h| h.join().ok())
            .sum()
    }
}
