//! The cache of walks (`walks.bin`, read and written by the edge like the cache of
//! lowered files; here it is data, [`Reuse`]): a node's [`Walked`] from an earlier run,
//! replayed instead of walking its body again. It is what [`walk::walk_fn`] returned,
//! before [`super::frontier::Frontier::follow`] specialised its calls, so replaying
//! `follow` on it creates the same specialised nodes in the same order, and the graph is
//! the one a walk would give.
//!
//! The invariant that makes reuse sound: a node's walk reads the [`DefMap`] and its own
//! body only (`Bodies::of` of its own fn; `arg_specs` and `param_specs` of a specialised
//! node, which its key holds), and it copies spans into its result without comparing
//! them. So its result is the same in a run where
//! - the *world* is the same: the files in their order (their ids), each file's
//!   [`crate::parse::cache::digest`] (its lowering with every span erased and every body
//!   counted by being there, not by its statements: a lazy one by the macros it names,
//!   one lowered with its file by the items it declares, its fn's `nested`; a lazy body
//!   lowered before macro expansion by its text), the crates, the
//!   config and the switches (the engine computes it, `engine/stages.rs`). Resolution is
//!   a function of that: it reads no text, and the one place it compares positions
//!   (`resolve/macros/scope.rs`, the definitions of a `macro_rules!` before an invocation
//!   in the same file, sorted by crate, file and offset) compares positions of one file,
//!   whose order the lowered items keep; so the `DefMap` is the same but for spans, the
//!   fn ids among it;
//! - the texts of the node's files are the same: its body's file and every file a span
//!   of its result points into (a macro-expanded body carries its invocation's spans);
//!   then its body is the same (a body is text of its file, lowered with it or lazily; a
//!   generated fn's is its expansion's, which the world holds) and the spans are valid
//!   as they are. Nothing but a fn's own walk reads its statements: resolution reads the
//!   `nested` items of a body (its statement macros among them, for expansion) and
//!   whether a fn has a body, `walk/` another fn's body only for `is_some()`.
//!
//! An entry's key is the world and the node ([`node_key`]), so any other world finds
//! nothing; an entry holds the texts' hashes it was walked with, checked when it is
//! found. Audit of what the walk does with spans (`walk/`: `mod.rs`, `calls.rs`,
//! `methods.rs`, `branches.rs`, `locals.rs`, `narrow.rs`, `drops.rs`, `patterns.rs`,
//! `external.rs`, `blanket.rs`; `returns.rs`, `tags.rs`): a call's span and a block's
//! closing brace are copied into `site`; none is compared, ordered or read for text.
//! (`assemble` sorts a node's edges by site: within
//! the node's files, the same on reuse.) Only a clean walk is stored: not one that
//! panicked (its `internal-error` is the walk's), nor one whose body's lowering or
//! decoding gave a diagnostic (a reused node's body is not lowered, so that diagnostic
//! would be lost), nor one with an edge to a specialised node (none today: the walk
//! names declared fns only, `follow` retargets). A bound the walk hits (the name-only
//! cap, depth limits) is a function of the same inputs, so its result is reused as is.
//! A reused node's lazy body is not lowered, but its entry in the cache of bodies is kept
//! ([`keep_bodies`]), for the run that walks it again.

use super::{Walked, specialise};
use crate::parse::ir::{Body, FileId};
use crate::resolve::{DefMap, FnId};
use crate::source::{Key, LoweredCache, SharedCache, SourceMap, SpanCtx, with_span_ctx};
use rayon::prelude::*;

/// The cache of walks as the core is given it: the world it is valid in, the entries,
/// and how many of the nodes walked this run came from it.
#[derive(Debug, Default)]
pub struct Reuse {
    pub world: Key,
    pub store: LoweredCache,
    /// Nodes with a body that came from the cache, of how many the build walked.
    pub reused: usize,
    pub walked: usize,
}

/// What one run's build looks up and stores with: the cache.
pub(super) struct Walks<'r> {
    pub reuse: &'r mut Reuse,
}

/// A node's entry: the texts it was walked with (file, hash), and its walk.
type Entry = (Vec<(FileId, u128)>, Walked);

impl<'r> Walks<'r> {
    pub(super) fn new(reuse: &'r mut Reuse) -> Self {
        Walks { reuse }
    }

    /// The hash of `file`'s text ([`crate::source::SourceFile::hash`]: known without
    /// reading the text when its stamp vouches for it).
    fn text_hash(&self, sources: &SourceMap, file: FileId) -> Option<u128> {
        sources.files().get(file as usize).map(|f| f.hash)
    }

    /// Each node of `wave`: its key (a node with a body; [`node_key`]) and its walk from
    /// the cache, when it has a valid one ([`Walks::lookup`], in parallel).
    pub(super) fn found(
        &self,
        map: &DefMap<'_>,
        (wave, ids): (&[FnId], &specialise::Ids),
        sources: &SourceMap,
    ) -> (Vec<Option<Key>>, Vec<Option<Walked>>) {
        let has_body = |f: FnId| map.func(f).ir.is_some_and(|ir| ir.body.is_some());
        let world = self.reuse.world;
        let keys: Vec<Option<Key>> = (wave.iter())
            .map(|&f| has_body(f).then(|| node_key(world, map, ids, f)))
            .collect();
        let found = (wave.par_iter().zip(&keys))
            .map(|(&f, key)| key.and_then(|k| self.lookup(k, f, sources)))
            .collect();
        (keys, found)
    }

    /// The stored walk of node `f` under `key`, when every text it was walked with is the
    /// same now; its edges are `f`'s (a specialised node's id is this run's).
    fn lookup(&self, key: Key, f: FnId, sources: &SourceMap) -> Option<Walked> {
        let bytes = self.reuse.store.get(key)?;
        let (texts, mut w): Entry =
            with_span_ctx(SpanCtx::Raw, || postcard::from_bytes(bytes)).ok()?;
        let same = |&(file, hash): &(FileId, u128)| self.text_hash(sources, file) == Some(hash);
        if !texts.iter().all(same) {
            return None;
        }
        w.edges.iter_mut().for_each(|e| e.from = f);
        Some(w)
    }

    /// `w`, node `f`'s clean walk, encoded with the texts it depends on; `None` when it is
    /// not to be stored (an edge to a node past the `declared` fns).
    pub(super) fn encode(
        &self,
        (map, sources): (&DefMap<'_>, &SourceMap),
        f: FnId,
        w: &Walked,
        declared: usize,
    ) -> Option<Vec<u8>> {
        if w.edges.iter().any(|e| e.to as usize >= declared) {
            return None;
        }
        let mut files: Vec<FileId> = (w.edges.iter().map(|e| e.site.file))
            .chain(w.unresolved.iter().map(|u| u.site.file))
            .collect();
        let fd = map.func(f);
        files.extend(fd.span.map(|s| s.file));
        if let Some(ir) = fd.ir {
            files.push(ir.span.file);
            if let Some(Body::Lazy(l)) = &ir.body {
                files.push(l.span.file);
            }
        }
        files.sort_unstable();
        files.dedup();
        let texts = (files.into_iter())
            .map(|file| Some((file, self.text_hash(sources, file)?)))
            .collect::<Option<Vec<_>>>()?;
        with_span_ctx(SpanCtx::Raw, || postcard::to_stdvec(&(texts, w))).ok()
    }
}

/// Keeps, in the cache of lazy bodies, the bodies of the nodes `reused` (not lowered this
/// run): else a cache whose unused entries outnumber the used ones drops them, and the next
/// edit that changes the world lowers every body again.
pub(super) fn keep_bodies(
    map: &DefMap<'_>,
    reused: impl Iterator<Item = FnId>,
    cache: Option<&SharedCache>,
) {
    let Some(cache) = cache else {
        return;
    };
    let keys = reused.filter_map(|f| match &map.func(f).ir?.body {
        Some(Body::Lazy(l)) => Some(crate::parse::cache::body_key(l)),
        _ => None,
    });
    cache.keep(keys.collect::<Vec<_>>());
}

/// The key of node `f` in `world`: a declared fn by its id; a specialised node by the fn
/// it specialises and what it knows ([`specialise::Ids::order`]), and what its walk reads
/// of that: its `Self` and its bound arguments and type parameters.
pub(super) fn node_key(world: Key, map: &DefMap<'_>, ids: &specialise::Ids, f: FnId) -> Key {
    use std::fmt::Write;
    let mut h = crate::source::KeyWriter::new();
    h.update(&world.to_le_bytes());
    let (base, known) = ids.order(f);
    h.update(&base.to_le_bytes());
    h.update(known.as_bytes());
    if !known.is_empty() {
        let fd = map.func(f);
        let (args, params) = (map.arg_specs.get(&f), map.param_specs.get(&f));
        let _ = write!(h, "\u{1f}{:?}{args:?}{params:?}", fd.self_override);
        if let Some(values) = map.value_specs.get(&f) {
            let _ = write!(h, "{values:?}");
        }
    }
    h.key()
}
