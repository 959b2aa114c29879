//! Incrementality: what a run reuses of the runs before it and leaves to the runs after
//! it, as one value, [`Incremental`], that the edge owns (it reads the caches from the
//! target dir and writes them back) and hands to the pipeline. The stages that can use a
//! cache take it from there as an argument and fill it with what they computed; none of
//! them changes an answer, only the time it takes:
//!
//! - the stamp table ([`FileCaches::stamps`]): each file's metadata and text hash when a
//!   run last read it; a file whose stamp vouches for its entry is not read, its text read
//!   late if something needs it (`source::Text`);
//! - lowered files ([`FileCaches::lowered`], by content key: `parse::cache`), lazy fn bodies
//!   ([`Incremental::bodies`]), `macro_rules!` expansions ([`Incremental::expansions`],
//!   `resolve::macros::memo`) and walks of the call graph ([`Incremental::walks`],
//!   `callgraph::reuse`);
//! - the cancel token ([`Incremental::cancel`]): a speculative run that cargo's answer has
//!   contradicted stops at the pipeline's next stage.
//!
//! A text read late that is not the one its stamp vouched for (the file changed during the
//! run) raises [`FileCaches::stale`]: nothing lowered or walked after it is stored, and
//! the edge runs the pipeline again without the stamp table.

use crate::known::models::setters;
use crate::source::{
    FileId, Key, Known, Loader, LoweredCache, ReadFile, SharedCache, SourceMap, Staleness, Stamp,
};
use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// What a run reuses and fills; the default uses no cache (every file read and lowered).
#[derive(Debug, Default)]
pub struct Incremental {
    /// What reading and lowering files reuses (parsing, and the files macro expansion names).
    pub files: FileCaches,
    /// The cache of lazy fn bodies, filled where they are lowered (the call graph, macro
    /// expansion).
    pub bodies: Option<SharedCache>,
    /// The cache of `macro_rules!` expansions, filled where they are made.
    pub expansions: Option<SharedCache>,
    /// The cache of walks (`callgraph::reuse`), taken by the call graph and handed on to
    /// [`Incremental::keep`] once it is built.
    pub walks: Option<LoweredCache>,
    /// Set when the run is called off.
    pub cancel: Option<Arc<AtomicBool>>,
    /// Where the caches of lowered files and of walks go as soon as the pipeline is done
    /// with them: the edge writes them while the analysis goes on. Without it, dropped.
    pub keep: Option<Arc<dyn Keep>>,
}

/// Takes caches the pipeline is done with (the edge's writer).
pub trait Keep: Send + Sync + fmt::Debug {
    /// The cache of lowered files, once the last file is lowered (after macro expansion).
    fn lowered(&self, cache: LoweredCache);
    /// The cache of walks, once the call graph is built.
    fn walks(&self, cache: LoweredCache);
}

impl Incremental {
    /// Whether the run has been called off: its result is not used.
    pub fn cancelled(&self) -> bool {
        (self.cancel.as_ref()).is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// Whether a text read late was not the one its stamp vouched for.
    pub fn stale(&self) -> bool {
        self.files.stale()
    }

    /// Every file is lowered: the cache of lowered files goes to [`Incremental::keep`] (and
    /// its memory with it). How many files came from it, of how many it was asked for.
    pub fn lowering_done(&mut self) -> Option<(usize, usize)> {
        let cache = self.files.lowered.take()?;
        let (used, added) = cache.counts();
        if let Some(keep) = &self.keep {
            keep.lowered(cache);
        }
        Some((used.saturating_sub(added), used))
    }

    /// The call graph is built: its cache of walks goes to [`Incremental::keep`], unless
    /// the run is stale (a walk may have read a late text that is not the one it is keyed by).
    pub fn walking_done(&mut self, walks: LoweredCache) {
        if let Some(keep) = self.keep.as_ref().filter(|_| !self.stale()) {
            keep.walks(walks);
        }
    }
}

/// What reading and lowering files reuses: the stamp table, the cache of lowered files,
/// and the flag a late text that is not the stamped one raises; and what it learnt of each
/// file added through it, read or vouched for: the shipped flags' setters its text names.
#[derive(Debug, Default)]
pub struct FileCaches {
    /// Each file's stamp and text hash when it was last read, by [`stamp_key`].
    pub stamps: Option<LoweredCache>,
    /// Lowered files by content key (`parse::cache`).
    pub lowered: Option<LoweredCache>,
    /// Raised when a text read late was not the one its stamp vouched for.
    pub stale: Staleness,
    /// The mask of the shipped flags' setters each file's text names
    /// ([`setters::named_in`]), by id: found when the text is read, kept in the stamp
    /// table with its hash for the runs that do not read it.
    setters: HashMap<FileId, u64>,
}

/// A file read or vouched for ([`FileCaches::read`]), to be added ([`FileCaches::insert`]).
#[derive(Debug)]
pub struct Loaded {
    file: ReadFile,
    stamped: Stamped,
    /// The shipped flags' setters its text names.
    setters: u64,
}

/// What the stamp table records of a file added: nothing (no table, or no stamp), its new
/// stamp and hash (read now), or its entry kept (vouched for, read late if at all).
#[derive(Debug)]
enum Stamped {
    No,
    Read(Known),
    Vouched,
}

/// The key of a file's entry in the stamp table: its path.
fn stamp_key(path: &Path) -> Key {
    xxhash_rust::xxh3::xxh3_128(path.as_os_str().as_encoded_bytes())
}

impl FileCaches {
    /// With the stamp table `stamps` and the cache of lowered files `lowered`.
    pub fn new(stamps: Option<LoweredCache>, lowered: Option<LoweredCache>) -> Self {
        FileCaches {
            stamps,
            lowered,
            ..FileCaches::default()
        }
    }

    pub fn stale(&self) -> bool {
        self.stale.load(Ordering::Relaxed)
    }

    /// The id of `path` when `sources` has it already; else the file, not read when the
    /// stamp table vouches for it ([`Stamp::vouches_for`]) and `files` can read it later,
    /// else read through `files`. Through `&self`: the files of a wave are read in parallel.
    pub fn read(
        &self,
        sources: &SourceMap,
        files: &dyn Loader,
        path: &Path,
    ) -> std::io::Result<Result<FileId, Loaded>> {
        if let Some(id) = sources.id(path) {
            return Ok(Ok(id));
        }
        let stamp = self.stamps.as_ref().and_then(|_| files.stamp(path));
        if let Some(file) = stamp.and_then(|now| self.vouched(sources, files, path, &now)) {
            return Ok(Err(file));
        }
        let text = files.read(path)?;
        let setters = setters::named_in(&text);
        let file = sources.prepare(path.to_path_buf(), text);
        let stamped = match stamp {
            Some(stamp) => Stamped::Read(Known {
                stamp,
                hash: file.hash(),
                lines: file.lines() as u64,
                setters,
            }),
            None => Stamped::No,
        };
        Ok(Err(Loaded {
            file,
            stamped,
            setters,
        }))
    }

    /// The shipped flags' setters the text of file `id` names: as found when it was read or
    /// vouched for ([`FileCaches::insert`]), or, for a file added to `sources` otherwise
    /// (its text read then), searched now.
    pub fn setters(&self, sources: &SourceMap, id: FileId) -> u64 {
        let search = || setters::named_in(&sources.file(id).text);
        self.setters.get(&id).copied().unwrap_or_else(search)
    }

    /// `path`, not read, when the stamp table's entry for it is vouched for by `now`.
    fn vouched(
        &self,
        sources: &SourceMap,
        files: &dyn Loader,
        path: &Path,
        now: &Stamp,
    ) -> Option<Loaded> {
        let bytes = self.stamps.as_ref()?.get(stamp_key(path))?;
        let known: Known = postcard::from_bytes(bytes).ok()?;
        if !known.stamp.vouches_for(now) {
            return None;
        }
        let file = sources.prepare_late(path, known, (files.reader()?, &self.stale));
        let stamped = Stamped::Vouched;
        let setters = known.setters;
        Some(Loaded {
            file,
            stamped,
            setters,
        })
    }

    /// Adds `loaded` to `sources` and records it in the stamp table; its id (the id it has
    /// already when it was added: then nothing is recorded).
    pub fn insert(&mut self, sources: &mut SourceMap, loaded: Loaded) -> FileId {
        let Loaded {
            file,
            stamped,
            setters,
        } = loaded;
        if let Some(id) = sources.id(file.path()) {
            return id;
        }
        if let Some(table) = &mut self.stamps {
            let key = stamp_key(file.path());
            match stamped {
                Stamped::Read(known) => {
                    if let Ok(bytes) = postcard::to_stdvec(&known) {
                        table.insert(key, bytes);
                    }
                }
                Stamped::Vouched => table.mark_used(key),
                Stamped::No => {}
            }
        }
        let id = sources.insert(file);
        self.setters.insert(id, setters);
        id
    }
}
