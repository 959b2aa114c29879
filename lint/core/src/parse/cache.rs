//! What the cache of lowered files ([`crate::source::LoweredCache`]) holds: a file's
//! [`Lowering`] (its items and malformed escapes, or its parse error), encoded with
//! postcard, its spans relative to the file (a cached file comes back in the id it has in
//! this run). The key is everything lowering reads: the file's text, its path, the
//! directory of its `mod x;` files and its `#[cfg]` context (the lint's build is the
//! cache file's, see the source stage). Lowering reads no file system, so nothing else.
//!
//! The in-memory API, for whoever fills the cache (the parse stage, or a speculative
//! pre-pass): [`key`], then [`lookup`], or [`encode_file`] and `LoweredCache::insert`.

use super::cfg::CfgCtx;
use super::ir::{Block, FileId, Item, LazyBody, SpanIr};
use crate::source::{Key, LoweredCache, SpanCtx, with_span_ctx, with_span_file, with_span_file_at};
use serde::de::DeserializeOwned;
use std::path::Path;

/// A parse error: its message and byte range.
pub type ParseErr = (String, usize, usize);

/// A lowered file: its items, the malformed escapes found in it, and the parts of it that
/// did not parse (skipped; the rest lowered, [`super::recover`]).
pub type Lowered = (
    Vec<Item>,
    Vec<(String, SpanIr)>,
    Vec<super::recover::Skipped>,
);

/// What lowering one file gives: the lowered file or why it did not parse.
pub type Lowering = Result<Lowered, ParseErr>;

/// The key of the file `path` whose text hashes to `text` ([`crate::source::SourceFile::hash`]:
/// a file vouched for by its stamp is looked up without being read), its `mod` files in
/// `mod_dir`, under `cfg`, its fn bodies lowered `eager`ly or kept lazy.
pub fn key(path: &Path, mod_dir: &Path, cfg: &CfgCtx, text: u128, eager: bool) -> Key {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    let mut field = |bytes: &[u8]| {
        h.update(&(bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    field(path.as_os_str().as_encoded_bytes());
    field(mod_dir.as_os_str().as_encoded_bytes());
    let mut features: Vec<&str> = cfg.features.iter().map(String::as_str).collect();
    features.sort_unstable();
    field(&features.len().to_le_bytes());
    for f in features {
        field(f.as_bytes());
    }
    field(&[u8::from(cfg.test)]);
    field(&cfg.target.key().to_le_bytes());
    field(&[u8::from(eager)]);
    field(&text.to_le_bytes());
    h.digest128()
}

/// The lowering of `key` in `cache`, its spans in `file`, and its [`digest`]; `None` when
/// absent or unreadable.
pub fn lookup(cache: &LoweredCache, key: Key, file: FileId) -> Option<(Lowering, Key)> {
    let (digest, bytes) = cache.get(key)?.split_at_checked(16)?;
    let digest = Key::from_le_bytes(digest.try_into().ok()?);
    Some((decode(bytes, file)?, digest))
}

/// A file's entry: its lowering's [`digest`], then the lowering encoded (spans relative to `file`);
/// with the digest. `None` when it cannot be encoded.
pub fn encode_file(lowering: &Lowering, file: FileId) -> Option<(Vec<u8>, Key)> {
    let digest = digest(lowering)?;
    let bytes = digest.to_le_bytes().to_vec();
    with_span_file(file, || postcard::to_extend(lowering, bytes))
        .ok()
        .map(|b| (b, digest))
}

/// A digest of what a file's lowering gives the later stages but where its text stands:
/// the lowering encoded with every span as nothing ([`SpanCtx::Erased`]) and every fn
/// body as being there (a lazy one with its `mod` directory and the macros it names; the
/// items a body declares are the fn's `nested`, which count), not by its statements. An
/// edit that moves text (a comment line) or that edits statements leaves it unchanged;
/// any other edit changes it (the cache of walks, `callgraph::reuse`, is keyed by it).
/// A file that does not parse gives the later stages nothing but its `parse-error` (made
/// by this stage, from its text, in every run), so it digests as that: its message and
/// byte range would move with a comment line above the error.
pub fn digest(lowering: &Lowering) -> Option<Key> {
    let Ok(lowered) = lowering else {
        return Some(xxhash_rust::xxh3::xxh3_128(b"a file that does not parse"));
    };
    // What was skipped is not digested: the later stages see only the items (its
    // diagnostics are made by this stage, in every run).
    let (items, invalid, _skipped) = lowered;
    let seen = (items, invalid);
    let bytes = with_span_ctx(SpanCtx::Erased, || postcard::to_stdvec(&seen)).ok()?;
    Some(xxhash_rust::xxh3::xxh3_128(&bytes))
}

/// A lazy body lowered: its block, the items it declares, its malformed escapes; or its
/// syntax error (message, byte range in the file).
pub type BodyLowering = Result<(Block, Vec<Item>, Vec<(String, SpanIr)>), ParseErr>;

/// The key of a lazy body: its text (by its hash, [`LazyBody::text`]: the file's text is
/// not read for it) and the directory of its statement macros' `mod` files (a body's
/// lowering reads no `#[cfg]`), not where it stands: an entry holds its spans and its
/// syntax error's range relative to the body's start ([`encode_body`]), so a body moved by
/// an edit above it is found again.
pub fn body_key(body: &LazyBody) -> Key {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(b"lazy body, relative");
    let dir = body.mod_dir.as_os_str().as_encoded_bytes();
    h.update(&(dir.len() as u64).to_le_bytes());
    h.update(dir);
    h.update(&body.text.to_le_bytes());
    h.digest128()
}

/// The lowering of the lazy body `body` encoded, every offset relative to its start;
/// `None` when it cannot be.
pub fn encode_body(lowering: &BodyLowering, body: &LazyBody) -> Option<Vec<u8>> {
    let lo = body.span.lo as usize;
    let relative = match lowering {
        Ok(lowered) => Ok(lowered),
        Err((msg, a, b)) => Err((msg, a.checked_sub(lo)?, b.checked_sub(lo)?)),
    };
    let (file, base) = (body.span.file, body.span.lo);
    with_span_file_at(file, base, || postcard::to_stdvec(&relative)).ok()
}

/// An encoded lowering of the lazy body `body`, at the place it stands in this run.
pub fn decode_body(bytes: &[u8], body: &LazyBody) -> Option<BodyLowering> {
    let (file, base) = (body.span.file, body.span.lo);
    let relative: BodyLowering =
        with_span_file_at(file, base, || postcard::from_bytes(bytes)).ok()?;
    let lo = body.span.lo as usize;
    Some(relative.map_err(|(msg, a, b)| (msg, a + lo, b + lo)))
}

/// `value` encoded, its spans relative to `file`; `None` when it cannot be (a span of
/// another file, a path that is not UTF-8).
#[cfg(test)]
pub fn encode<T: serde::Serialize>(value: &T, file: FileId) -> Option<Vec<u8>> {
    with_span_file(file, || postcard::to_stdvec(value)).ok()
}

/// An encoded value, its spans in `file`.
pub fn decode<T: DeserializeOwned>(bytes: &[u8], file: FileId) -> Option<T> {
    with_span_file(file, || postcard::from_bytes(bytes)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{FileJob, parse_text};
    use crate::source::text_hash;

    /// Files with every kind of span: nosync attributes with errors, malformed escapes,
    /// `mod` declarations, macros, nested items, closures, matches; and a parse error.
    const TEXTS: &[&str] = &[
        include_str!("lower.rs"),
        include_str!("../resolve/mod.rs"),
        include_str!("../../../../fixtures/attribute-contract/src/lib.rs"),
        include_str!("../../../../fixtures/macro-items/app/src/lib.rs"),
        include_str!("../../../../fixtures/transitive-modules/src/lib.rs"),
        "#[synchronizes(blocking)] fn a() {}\n#[no_sync(hot)] fn b() {}\n\
         #[no_sync] fn r() { nosync::allow_sync(); nosync::allow_sync_expr!(w(), w()); }\n\
         mod m { fn inner() { fn deeper() {} } }\n#[path = \"x.rs\"] mod x;\n",
        "fn broken( {",
    ];

    /// A crate's `src/lib.rs`, under the default cfg.
    fn lib_rs() -> FileJob {
        FileJob {
            path: "/w/src/lib.rs".into(),
            cfg: 0,
            mod_dir: "/w/src".into(),
            declared_at: None,
        }
    }

    #[test]
    fn a_lowered_file_comes_back_with_its_current_id() {
        let job = lib_rs();
        let cfg = CfgCtx::default();
        for text in TEXTS {
            let stored = parse_text(&job, 3, text, &cfg, false);
            let bytes = encode(&stored, 3).expect("encodes");
            // Read back as file 7: exactly what lowering it as file 7 gives.
            assert_eq!(
                decode(&bytes, 7),
                Some(parse_text(&job, 7, text, &cfg, false))
            );
            // A span of another file (or the wrong id) is never stored.
            let spans = stored
                .as_ref()
                .is_ok_and(|(items, bad, _)| !items.is_empty() || !bad.is_empty());
            assert!(!spans || encode(&stored, 4).is_none());
        }
        let mut store = LoweredCache::default();
        let k = key(&job.path, &job.mod_dir, &cfg, text_hash(TEXTS[5]), false);
        let (bytes, digest) =
            encode_file(&parse_text(&job, 1, TEXTS[5], &cfg, false), 1).expect("encodes");
        store.insert(k, bytes);
        assert_eq!(
            lookup(&store, k, 2),
            Some((parse_text(&job, 2, TEXTS[5], &cfg, false), digest))
        );
        assert_eq!(decode::<Lowering>(&[0xff; 8], 2), None);
    }

    /// A lazy body lowered through the cache, stored from one run's file id and read in
    /// another's, is what lowering it in that run gives; a syntax error too.
    #[test]
    fn a_lazy_body_comes_back_with_its_current_id() {
        use crate::parse::ir::LazyBody;
        use crate::parse::lazy::lower_body;
        use crate::source::{SharedCache, SourceMap};
        let text = "fn a() { let x = f(1); x.go(); nosync::allow_sync(); }\nfn b() { let = ; }\n";
        let bodies = [(7, 55), (65, 76)];
        // As lowering a file records it: the hash of the body's text in that file.
        let body = |sources: &SourceMap, file, (lo, hi): (u32, u32)| LazyBody {
            span: SpanIr { file, lo, hi },
            mod_dir: Path::new("/w/src").into(),
            macros: Vec::new(),
            text: text_hash(
                sources
                    .file(file)
                    .text
                    .get(lo as usize..hi as usize)
                    .unwrap_or_default(),
            ),
        };
        let lowered = |sources: &SourceMap, cache: Option<&SharedCache>, file, at| {
            let out = lower_body(&body(sources, file, at), sources, cache);
            out.map(|b| (b.block, b.nested, b.diags))
        };
        // Run one: the file is the only one; run two: it is the second.
        let mut first = SourceMap::new(Path::new("/w"));
        let id1 = first.add("/w/src/lib.rs".into(), text.into());
        let cache = SharedCache::default();
        let mut second = SourceMap::new(Path::new("/w"));
        second.add("/w/src/other.rs".into(), String::new());
        let id2 = second.add("/w/src/lib.rs".into(), text.into());
        for at in bodies {
            let stored = lowered(&first, Some(&cache), id1, at);
            assert!(stored.is_ok() == (at == bodies[0]), "{stored:?}");
        }
        let store = cache.into_inner();
        assert_eq!(store.counts(), (2, 2));
        // As the next run reads it: through the file's bytes.
        let bytes = store.to_bytes(1).expect("changed");
        let cache = SharedCache::new(LoweredCache::from_bytes(bytes.clone(), 1));
        for at in bodies {
            let plain = lowered(&second, None, id2, at);
            assert_eq!(lowered(&second, Some(&cache), id2, at), plain);
        }
        assert_eq!(cache.into_inner().counts(), (2, 0));
        // Run three: a line inserted above both bodies; they come from the cache, every
        // span (and the syntax error) where they stand now.
        let mut third = SourceMap::new(Path::new("/w"));
        let id3 = third.add("/w/src/lib.rs".into(), format!("// moved\n{text}"));
        let cache = SharedCache::new(LoweredCache::from_bytes(bytes, 1));
        for (lo, hi) in bodies {
            let at = (lo + 9, hi + 9);
            let plain = lowered(&third, None, id3, at);
            assert_eq!(lowered(&third, Some(&cache), id3, at), plain);
        }
        assert_eq!(cache.into_inner().counts(), (2, 0));
    }

    /// The digest does not see where text stands (a line above) nor a body's statements,
    /// but sees everything else the later stages read (a signature, an item, the items a
    /// body declares, the macros a lazy body names).
    #[test]
    fn the_digest_is_the_lowering_but_where_its_text_stands() {
        let job = lib_rs();
        let cfg = CfgCtx::default();
        let text = "pub fn a(x: u8) { b(x); }\npub fn b(_x: u8) { let _y = 1; }\n";
        let of =
            |text: &str, eager| super::digest(&parse_text(&job, 1, text, &cfg, eager)).unwrap();
        let digest = |text: &str| of(text, false);
        let d = digest(text);
        assert_eq!(d, digest(&format!("// a comment\n\n{text}")));
        assert_eq!(d, digest(&text.replace("b(x);", "c(x, x); d();")));
        assert_ne!(d, digest(&text.replace("a(x: u8)", "a(x: u16)")));
        assert_ne!(d, digest(&format!("{text}pub struct S;\n")));
        assert_ne!(d, digest(&text.replace("b(x);", "m!(x);")));
        // A body lowered with its file (it declares an item) counts by its items, not by
        // its statements (only its own fn's walk reads them).
        let nested = "fn a() { fn inner() {} x(); }\n";
        assert_eq!(digest(nested), digest(&nested.replace("x();", "y(); z();")));
        assert_ne!(
            digest(nested),
            digest(&nested.replace("inner()", "inner(_n: u8)"))
        );
        assert_ne!(digest(nested), digest(&nested.replace("fn inner() {}", "")));
        // A file that does not parse whole gives the items that parse, wherever its error
        // stands.
        let broken = "pub fn a() {}\npub fn b( {}\n";
        assert_eq!(digest(broken), digest(&format!("// a comment\n{broken}")));
        assert_eq!(digest(broken), digest(&broken.replace("b(", "c(")));
        assert_ne!(digest(broken), digest(""));
        // Eager lowering: the same.
        let eager = |text: &str| of(text, true);
        assert_eq!(eager(text), eager(&text.replace("b(x);", "c(x);")));
        assert_ne!(eager(text), eager(&text.replace("_x: u8", "_x: u16")));
    }

    #[test]
    fn the_key_is_everything_lowering_reads() {
        let cfg = CfgCtx::default();
        let with_fast = CfgCtx {
            features: ["fast".to_owned()].into(),
            ..CfgCtx::default()
        };
        let (p, d) = (Path::new("/w/src/lib.rs"), Path::new("/w/src"));
        let k = key(p, d, &cfg, text_hash("fn a() {}"), false);
        assert_eq!(
            k,
            key(p, d, &CfgCtx::default(), text_hash("fn a() {}"), false)
        );
        assert_ne!(k, key(p, d, &cfg, text_hash("fn a() {}"), true));
        assert_ne!(k, key(p, d, &cfg, text_hash("fn a() {} "), false));
        assert_ne!(
            k,
            key(
                Path::new("/v/src/lib.rs"),
                d,
                &cfg,
                text_hash("fn a() {}"),
                false
            )
        );
        assert_ne!(
            k,
            key(
                p,
                Path::new("/w/src/lib"),
                &cfg,
                text_hash("fn a() {}"),
                false
            )
        );
        assert_ne!(k, key(p, d, &with_fast, text_hash("fn a() {}"), false));
        let test = CfgCtx {
            test: true,
            ..CfgCtx::default()
        };
        assert_ne!(k, key(p, d, &test, text_hash("fn a() {}"), false));
        let unix = CfgCtx {
            target: std::sync::Arc::new(super::super::cfg::TargetCfg::new([(
                "unix".to_owned(),
                None,
            )])),
            ..CfgCtx::default()
        };
        assert_ne!(k, key(p, d, &unix, text_hash("fn a() {}"), false));
    }
}
