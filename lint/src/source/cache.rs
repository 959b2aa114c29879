//! The cache of lowered files as data: encoded entries by key, and the one file format
//! they are kept in between runs. What an entry holds, and how its key is computed, is the
//! parse stage's (`parse::cache`); the edge (`engine::analyze`) reads and writes the file
//! (`<target>/nosync-lint/lowered.bin`), so nothing here does IO.
//!
//! The file: a magic, the format, the build of the lint that wrote it (another build
//! never reads it), a checksum of the rest, then the entries. A file that is truncated,
//! corrupt, of another format or of another build is an empty cache.

use super::{FileId, SpanIr};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::cell::Cell;
use std::collections::{HashMap, HashSet};

/// A content key: a 128-bit digest of everything an entry depends on.
pub type Key = u128;

const MAGIC: &[u8; 16] = b"nosync-lowered\0\0";
/// Bumped when the layout of the file changes (the IR's changes come with the build).
const FORMAT: u32 = 1;
/// Magic, format, build, checksum.
const HEADER: usize = 16 + 4 + 16 + 8;

/// Encoded entries by key, with what this run used and added.
#[derive(Debug, Clone, Default)]
pub struct LoweredCache {
    entries: HashMap<Key, Vec<u8>>,
    used: HashSet<Key>,
    added: HashSet<Key>,
}

impl LoweredCache {
    /// The encoded entry of `key`.
    pub fn get(&self, key: Key) -> Option<&[u8]> {
        self.entries.get(&key).map(Vec::as_slice)
    }

    /// Records that this run used the entry of `key` (kept when the cache is written).
    pub fn mark_used(&mut self, key: Key) {
        self.used.insert(key);
    }

    /// Adds (or replaces) an entry; it counts as used.
    pub fn insert(&mut self, key: Key, bytes: Vec<u8>) {
        self.used.insert(key);
        self.entries.insert(key, bytes);
        self.added.insert(key);
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// How many entries this run used (found or added) and added.
    pub fn counts(&self) -> (usize, usize) {
        (self.used.len(), self.added.len())
    }

    /// The cache stored in `bytes` by a lint of `build`; empty for anything else.
    pub fn from_bytes(bytes: &[u8], build: u128) -> LoweredCache {
        let entries = decode_file(bytes, build).unwrap_or_default();
        LoweredCache {
            entries: entries.into_iter().collect(),
            ..LoweredCache::default()
        }
    }

    /// The file to store, or `None` when it would be what was read (nothing added, nothing
    /// to drop). Entries this run did not use are kept while they are no more than the
    /// used ones (another feature set's files survive a run or two), else dropped.
    pub fn to_bytes(&self, build: u128) -> Option<Vec<u8>> {
        let unused = self.entries.len() - self.used.len();
        if self.added.is_empty() && unused == 0 {
            return None;
        }
        let keep_unused = unused <= self.used.len();
        let mut entries: Vec<(Key, &[u8])> = self
            .entries
            .iter()
            .filter(|(k, _)| keep_unused || self.used.contains(k))
            .map(|(k, v)| (*k, v.as_slice()))
            .collect();
        entries.sort_unstable_by_key(|e| e.0);
        let payload = postcard::to_stdvec(&entries).ok()?;
        let mut out = Vec::with_capacity(HEADER + payload.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&FORMAT.to_le_bytes());
        out.extend_from_slice(&build.to_le_bytes());
        out.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(&payload).to_le_bytes());
        out.extend_from_slice(&payload);
        Some(out)
    }
}

fn decode_file(bytes: &[u8], build: u128) -> Option<Vec<(Key, Vec<u8>)>> {
    let (head, payload) = bytes.split_at_checked(HEADER)?;
    let (magic, rest) = head.split_at(16);
    let (format, rest) = rest.split_at(4);
    let (stored_build, sum) = rest.split_at(16);
    let fits = magic == MAGIC
        && format == FORMAT.to_le_bytes()
        && stored_build == build.to_le_bytes()
        && sum == xxhash_rust::xxh3::xxh3_64(payload).to_le_bytes();
    if !fits {
        return None;
    }
    postcard::from_bytes(payload).ok()
}

thread_local! {
    /// The file whose spans are being encoded or decoded ([`with_span_file`]).
    static SPAN_FILE: Cell<Option<FileId>> = const { Cell::new(None) };
}

/// Runs `f` with spans (de)serialized relative to `file`: a [`SpanIr`] is stored as its
/// byte range only, and comes back in `file`, the id this run's [`super::SourceMap`] gave
/// the file (ids are per run). Serializing a span of another file, or any span outside
/// this scope, is an error: an entry is only ever a function of its own file.
pub fn with_span_file<R>(file: FileId, f: impl FnOnce() -> R) -> R {
    let outer = SPAN_FILE.with(|c| c.replace(Some(file)));
    let out = f();
    SPAN_FILE.with(|c| c.set(outer));
    out
}

impl Serialize for SpanIr {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match SPAN_FILE.with(Cell::get) {
            Some(file) if file == self.file => (self.lo, self.hi).serialize(s),
            _ => Err(serde::ser::Error::custom(
                "a span outside the file being stored",
            )),
        }
    }
}

impl<'de> Deserialize<'de> for SpanIr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<SpanIr, D::Error> {
        let (lo, hi) = <(u32, u32)>::deserialize(d)?;
        let file = SPAN_FILE
            .with(Cell::get)
            .ok_or_else(|| serde::de::Error::custom("a span read outside a file"))?;
        Ok(SpanIr { file, lo, hi })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filled() -> LoweredCache {
        let mut c = LoweredCache::default();
        c.insert(7, b"seven".to_vec());
        c.insert(u128::MAX, vec![1, 2, 3]);
        c
    }

    #[test]
    fn round_trips_and_rejects_other_files() {
        let bytes = filled().to_bytes(42).unwrap();
        let back = LoweredCache::from_bytes(&bytes, 42);
        assert_eq!(back.get(7), Some(&b"seven"[..]));
        assert_eq!(back.get(u128::MAX), Some(&[1u8, 2, 3][..]));
        assert_eq!(back.len(), 2);
        // Another build, every truncation, every flipped byte: an empty cache.
        assert!(LoweredCache::from_bytes(&bytes, 43).is_empty());
        for n in 0..bytes.len() {
            assert!(LoweredCache::from_bytes(&bytes[..n], 42).is_empty(), "{n}");
            let mut bad = bytes.clone();
            bad[n] ^= 0x20;
            assert!(LoweredCache::from_bytes(&bad, 42).is_empty(), "{n}");
        }
        assert!(LoweredCache::from_bytes(b"{\"json\": true}", 42).is_empty());
    }

    #[test]
    fn writes_only_what_changed_and_drops_what_is_stale() {
        let bytes = filled().to_bytes(1).unwrap();
        let mut back = LoweredCache::from_bytes(&bytes, 1);
        back.mark_used(7);
        back.mark_used(u128::MAX);
        assert_eq!(back.to_bytes(1), None);
        // One found, one added, one unused: the unused one is kept (no more than the used).
        let mut back = LoweredCache::from_bytes(&bytes, 1);
        back.mark_used(7);
        back.insert(8, vec![8]);
        let kept = LoweredCache::from_bytes(&back.to_bytes(1).unwrap(), 1);
        assert_eq!(kept.len(), 3);
        // One added, two unused: those two are dropped.
        let mut back = LoweredCache::from_bytes(&bytes, 1);
        back.insert(9, vec![9]);
        let kept = LoweredCache::from_bytes(&back.to_bytes(1).unwrap(), 1);
        assert_eq!((kept.len(), kept.get(9)), (1, Some(&[9u8][..])));
    }

    #[test]
    fn spans_come_back_in_the_current_file() {
        let span = SpanIr {
            file: 3,
            lo: 10,
            hi: 20,
        };
        let bytes = with_span_file(3, || postcard::to_stdvec(&span)).unwrap();
        assert!(with_span_file(4, || postcard::to_stdvec(&span)).is_err());
        assert!(postcard::to_stdvec(&span).is_err());
        let back: SpanIr = with_span_file(9, || postcard::from_bytes(&bytes)).unwrap();
        assert_eq!(back, SpanIr { file: 9, ..span });
        assert!(postcard::from_bytes::<SpanIr>(&bytes).is_err());
    }
}
