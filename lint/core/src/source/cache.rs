//! The cache of lowered files as data: encoded entries by key, and the one file format
//! they are kept in between runs. What an entry holds, and how its key is computed, is the
//! parse stage's (`parse::cache`); the edge (`engine::analyze`) reads the file
//! (`<target>/nosync-lint/<workspace>/lowered.bin`) and gives the pipeline the cache in its
//! [`crate::incremental::Incremental`], which hands it back to the edge once the last file is
//! lowered. Nothing here does IO.
//!
//! The file: a magic, the format, the build of the lint that wrote it (another build
//! never reads it), the entries (key, length, bytes), and a checksum of all that precedes
//! it. A file that is truncated, corrupt, of another format or of another build is an
//! empty cache.
//!
//! A cache is kept in two such files: the whole of it, and a delta beside it, with the
//! entries added since the whole was written. A run that added little (a warm run after
//! an edit: one file, a few walks) writes the delta only, not megabytes it did not change
//! ([`LoweredCache::writes_delta`]); one that added much, or has stale entries to drop,
//! writes the whole again, and the delta is then empty. The delta's entry of a key wins
//! over the whole's. An entry is used only when it is the right one (found by a content
//! key, or checked when found, as the cache of walks does), so two files from different
//! runs only ever miss, never mislead.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::io::{self, Write};
use std::sync::Mutex;

/// A content key: a 128-bit digest of everything an entry depends on.
pub type Key = u128;

const MAGIC: &[u8; 16] = b"nosync-lowered\0\0";
/// Bumped when the layout of the file changes (the IR's changes come with the build).
const FORMAT: u32 = 2;
/// Magic, format, build; then the entries (key, length, bytes), then a checksum of all
/// that precedes it.
const HEADER: usize = 16 + 4 + 16;
const ENTRY_HEAD: usize = 16 + 4;

/// A hasher for keys that are digests already: their low bits, not SipHash of them (a
/// warm run looks up every file and every walked node).
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `u128` keys are hashed here (`write_u128`); anything else is folded in.
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word))
                .wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }

    fn write_u128(&mut self, key: u128) {
        self.0 ^= key as u64 ^ (key >> 64) as u64;
    }
}

/// A [`Key`] made from `Debug` or `Display` text written into it (`write!`), without the
/// text: the world of the cache of walks and its nodes' keys.
pub struct KeyWriter(xxhash_rust::xxh3::Xxh3);

impl std::fmt::Debug for KeyWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyWriter").finish_non_exhaustive()
    }
}

impl KeyWriter {
    pub fn new() -> Self {
        KeyWriter(xxhash_rust::xxh3::Xxh3::new())
    }

    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    pub fn key(&self) -> Key {
        self.0.digest128()
    }
}

impl Default for KeyWriter {
    fn default() -> Self {
        KeyWriter::new()
    }
}

impl std::fmt::Write for KeyWriter {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.update(s.as_bytes());
        Ok(())
    }
}

type KeyMap<V> = HashMap<Key, V, BuildHasherDefault<KeyHasher>>;
type KeySet = HashSet<Key, BuildHasherDefault<KeyHasher>>;

/// Encoded entries by key, with what this run used and added. The entries read are
/// ranges of the one buffer read (no copy each).
#[derive(Debug, Clone, Default)]
pub struct LoweredCache {
    stored: Vec<u8>,
    found: KeyMap<(usize, usize)>,
    added: KeyMap<Vec<u8>>,
    used: KeySet,
    /// Stored entries this run did not use but keeps ([`LoweredCache::keep`]).
    kept: KeySet,
    /// Entries lowered ahead ([`LoweredCache::add_ahead`]) that this run has not used.
    ahead: KeyMap<Vec<u8>>,
    /// Whether files lowered in this run are added (not when nothing is stored: then
    /// encoding them would be work for nothing).
    read_only: bool,
    /// The entries read from the delta file, and how many bytes the whole file had.
    delta: KeySet,
    whole_len: usize,
}

/// The delta is written instead of the whole while what it would hold is at most this
/// part of the whole (a quarter).
const DELTA_SHARE: usize = 4;

impl LoweredCache {
    /// The encoded entry of `key`.
    pub fn get(&self, key: Key) -> Option<&[u8]> {
        if let Some(bytes) = self.added.get(&key) {
            return Some(bytes);
        }
        if let Some(&(at, len)) = self.found.get(&key) {
            return self.stored.get(at..at + len);
        }
        self.ahead.get(&key).map(Vec::as_slice)
    }

    /// Records that this run used the entry of `key` (kept when the cache is written).
    pub fn mark_used(&mut self, key: Key) {
        self.used.insert(key);
        if let Some(bytes) = self.ahead.remove(&key) {
            self.added.insert(key, bytes);
        }
    }

    /// Keeps the stored entry of `key` though this run does not use it (a lazy body whose
    /// fn's walk came from the cache of walks: the next run that walks it again finds it);
    /// it does not count as used ([`LoweredCache::counts`]).
    pub fn keep(&mut self, key: Key) {
        if self.found.contains_key(&key) {
            self.kept.insert(key);
        }
    }

    /// Adds the entries of `ahead`, lowered before this run knew what it would parse (a
    /// guess at the crates' features, made while `cargo metadata` runs): an entry is
    /// only ever found under its own key, so a wrong guess is a miss, never a wrong
    /// lowering. One this run uses counts as added; the others are not stored.
    pub fn add_ahead(&mut self, ahead: LoweredCache) {
        for (key, bytes) in ahead.added {
            if self.get(key).is_none() {
                self.ahead.insert(key, bytes);
            }
        }
    }

    /// A cache that is only looked up (`--no-cache` with files lowered ahead).
    pub fn read_only() -> LoweredCache {
        LoweredCache {
            read_only: true,
            ..LoweredCache::default()
        }
    }

    /// Whether files lowered in this run are to be added.
    pub fn takes_new(&self) -> bool {
        !self.read_only
    }

    /// Adds (or replaces) an entry; it counts as used.
    pub fn insert(&mut self, key: Key, bytes: Vec<u8>) {
        self.used.insert(key);
        self.found.remove(&key);
        self.added.insert(key, bytes);
    }

    pub fn len(&self) -> usize {
        self.found.len() + self.added.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many entries this run used (found or added) and added.
    pub fn counts(&self) -> (usize, usize) {
        (self.used.len(), self.added.len())
    }

    /// The cache stored in `bytes` by a lint of `build`; empty for anything else.
    pub fn from_bytes(bytes: Vec<u8>, build: u128) -> LoweredCache {
        match index(&bytes, build) {
            Some(found) => LoweredCache {
                whole_len: bytes.len(),
                stored: bytes,
                found,
                ..LoweredCache::default()
            },
            None => LoweredCache::default(),
        }
    }

    /// The cache stored in the whole file `whole` and its `delta`, whose entries win
    /// (either is left out when it is not a file of `build`).
    pub fn from_files(whole: Vec<u8>, delta: Vec<u8>, build: u128) -> LoweredCache {
        let mut cache = LoweredCache::from_bytes(whole, build);
        let Some(found) = index(&delta, build) else {
            return cache;
        };
        let base = cache.stored.len();
        cache.stored.extend_from_slice(&delta);
        // The delta's entry of a key wins: written later (the cache of walks keys an entry
        // by its node, and checks what it read when it is found).
        for (key, (at, len)) in found {
            cache.found.insert(key, (base + at, len));
            cache.delta.insert(key);
        }
        cache
    }

    /// Whether writing would change the stored cache: an entry added, or unused ones that
    /// [`LoweredCache::write_to`] drops (while it keeps them, the file would be the same).
    pub fn changed(&self) -> bool {
        !self.added.is_empty() || !self.keeps_unused()
    }

    /// Whether the entries this run did not use are kept: while they are no more than the
    /// used ones (another feature set's files survive a run or two).
    fn keeps_unused(&self) -> bool {
        let kept = self.kept.iter().filter(|k| !self.used.contains(*k)).count();
        let live = self.used.len() + kept;
        self.len().saturating_sub(live) <= live
    }

    /// Whether this cache is written as a delta beside the whole file read: nothing stale
    /// is to be dropped, and the delta's live entries and the added ones come to at most
    /// a [`DELTA_SHARE`] of the whole.
    pub fn writes_delta(&self) -> bool {
        let bytes: usize = self.delta_entries().map(|(_, b)| b.len()).sum();
        self.whole_len > 0 && self.keeps_unused() && bytes * DELTA_SHARE <= self.whole_len
    }

    /// The delta's entries: those read from it that this run used or kept, and the added.
    fn delta_entries(&self) -> impl Iterator<Item = (Key, &[u8])> {
        let live = |k: &&Key| self.used.contains(*k) || self.kept.contains(*k);
        (self.delta.iter().filter(live))
            .chain(self.added.keys())
            .filter_map(|k| Some((*k, self.get(*k)?)))
    }

    /// Writes the cache for a lint of `build` to `w`: the whole of it, or only its delta
    /// when `delta` ([`LoweredCache::writes_delta`]). In the whole, entries this run did
    /// not use are kept while they are no more than the used ones
    /// ([`LoweredCache::keeps_unused`]), else dropped.
    pub fn write_to(&self, build: u128, delta: bool, w: &mut dyn Write) -> io::Result<()> {
        let keep_unused = self.keeps_unused();
        let mut entries: Vec<(Key, &[u8])> = match delta {
            true => self.delta_entries().collect(),
            false => (self.found.keys().chain(self.added.keys()))
                .filter(|k| keep_unused || self.used.contains(k) || self.kept.contains(k))
                .filter_map(|k| Some((*k, self.get(*k)?)))
                .collect(),
        };
        entries.sort_unstable_by_key(|e| e.0);
        let mut sum = xxhash_rust::xxh3::Xxh3::new();
        let mut put = |w: &mut dyn Write, bytes: &[u8]| {
            sum.update(bytes);
            w.write_all(bytes)
        };
        put(w, MAGIC)?;
        put(w, &FORMAT.to_le_bytes())?;
        put(w, &build.to_le_bytes())?;
        for (key, bytes) in entries {
            let len = u32::try_from(bytes.len()).map_err(io::Error::other)?;
            put(w, &key.to_le_bytes())?;
            put(w, &len.to_le_bytes())?;
            put(w, bytes)?;
        }
        w.write_all(&sum.digest().to_le_bytes())
    }

    /// The whole cache, as [`LoweredCache::write_to`] writes it, into a buffer (`None` when
    /// nothing changed).
    pub fn to_bytes(&self, build: u128) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        self.changed()
            .then(|| self.write_to(build, false, &mut out).ok().map(|()| out))?
    }
}

/// The entries of a stored cache, by key (as ranges of `bytes`); `None` unless `bytes` is
/// a whole cache of this format and build.
/// A cache that parallel lowerings (lazy fn bodies, lowered where the call graph reaches
/// them) look up and fill through `&self`: the same entries, under a lock.
#[derive(Debug, Default)]
pub struct SharedCache(Mutex<LoweredCache>);

impl Clone for SharedCache {
    fn clone(&self) -> Self {
        SharedCache(Mutex::new(self.lock().clone()))
    }
}

impl SharedCache {
    pub fn new(cache: LoweredCache) -> Self {
        SharedCache(Mutex::new(cache))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LoweredCache> {
        // A lowering that panicked holding the lock left the map whole (one insert each).
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A copy of the entry of `key`, which counts as used.
    pub fn get(&self, key: Key) -> Option<Vec<u8>> {
        let mut cache = self.lock();
        let bytes = cache.get(key)?.to_vec();
        cache.mark_used(key);
        Some(bytes)
    }

    pub fn insert(&self, key: Key, bytes: Vec<u8>) {
        self.lock().insert(key, bytes);
    }

    /// [`LoweredCache::keep`] of each of `keys`.
    pub fn keep(&self, keys: impl IntoIterator<Item = Key>) {
        let mut cache = self.lock();
        keys.into_iter().for_each(|k| cache.keep(k));
    }

    pub fn into_inner(self) -> LoweredCache {
        self.0
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn index(bytes: &[u8], build: u128) -> Option<KeyMap<(usize, usize)>> {
    let (body, sum) = bytes.split_at_checked(bytes.len().checked_sub(8)?)?;
    if sum != xxhash_rust::xxh3::xxh3_64(body).to_le_bytes() {
        return None;
    }
    let (head, mut rest) = body.split_at_checked(HEADER)?;
    let mut expected = MAGIC.to_vec();
    expected.extend_from_slice(&FORMAT.to_le_bytes());
    expected.extend_from_slice(&build.to_le_bytes());
    if head != expected {
        return None;
    }
    let mut found = KeyMap::default();
    while !rest.is_empty() {
        let (entry, after) = rest.split_at_checked(ENTRY_HEAD)?;
        let key = Key::from_le_bytes(entry[..16].try_into().ok()?);
        let len = u32::from_le_bytes(entry[16..].try_into().ok()?) as usize;
        let at = bytes.len() - 8 - after.len();
        rest = after.get(len..)?;
        found.insert(key, (at, len));
    }
    Some(found)
}

#[cfg(test)]
mod tests;
