//! How a [`SpanIr`] is (de)serialized: a span carries a per-run file id and offsets into
//! a text that an edit moves, so a value with spans is encoded in a context that says
//! what to store of them ([`SpanCtx`]): relative to its file (the cache of lowered files),
//! to a body's start (lazy bodies), as one fixed span (macro expansions), as they are
//! (the cache of walks) or not at all (a position-free digest). Outside a context a span
//! does not serialize.

use super::{FileId, SpanIr};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::cell::Cell;

thread_local! {
    /// How spans are being encoded or decoded here ([`with_span_ctx`]), if at all.
    static SPAN_CTX: Cell<Option<SpanCtx>> = const { Cell::new(None) };
}

/// Runs `f` with every span (de)serialized as `span`: a value whose spans are all one span
/// (a macro expansion's are its invocation's) is stored without them, and comes back with
/// every span at `span`, wherever the invocation stands in this run. Serializing any other
/// span in this scope is an error, so a value that is not of that kind is never stored.
pub fn with_fixed_span<R>(span: SpanIr, f: impl FnOnce() -> R) -> R {
    with_span_ctx(SpanCtx::Fixed(span), f)
}

/// Runs `f` with spans (de)serialized relative to `file`: a [`SpanIr`] is stored as its
/// byte range only, and comes back in `file`, the id this run's [`super::SourceMap`] gave
/// the file (ids are per run). Serializing a span of another file, or any span outside
/// this scope, is an error: an entry is only ever a function of its own file.
pub fn with_span_file<R>(file: FileId, f: impl FnOnce() -> R) -> R {
    with_span_ctx(SpanCtx::File(file, 0), f)
}

/// [`with_span_file`] with spans stored relative to `base` (their offset less `base`): a
/// value whose spans all lie after `base` (a fn body's, after its start) comes back at
/// another `base`, where the same text stands in this run. A span before `base` is an
/// error.
pub fn with_span_file_at<R>(file: FileId, base: u32, f: impl FnOnce() -> R) -> R {
    with_span_ctx(SpanCtx::File(file, base), f)
}

/// How spans are being (de)serialized: relative to an offset in a file
/// ([`with_span_file_at`]), all as one span ([`with_fixed_span`]), as they are (file id
/// and offsets: only for a reader that knows the ids and texts are this run's, the cache
/// of walks, `callgraph::reuse`), or not at all (`Erased`: a span is stored as nothing, for
/// a digest of a value that does not change when its text moves; such bytes never decode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanCtx {
    File(FileId, u32),
    Fixed(SpanIr),
    Raw,
    Erased,
}

/// The context spans are (de)serialized in here, if any (a value decoded later, such as
/// an encoded fn body, is decoded in the context it was read in).
pub fn span_ctx() -> Option<SpanCtx> {
    SPAN_CTX.with(Cell::get)
}

/// Runs `f` with spans (de)serialized in `ctx`.
pub fn with_span_ctx<R>(ctx: SpanCtx, f: impl FnOnce() -> R) -> R {
    let outer = SPAN_CTX.with(|c| c.replace(Some(ctx)));
    let out = f();
    SPAN_CTX.with(|c| c.set(outer));
    out
}

impl Serialize for SpanIr {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error;
        match span_ctx() {
            Some(SpanCtx::Fixed(fixed)) if fixed == *self => ().serialize(s),
            Some(SpanCtx::Fixed(_)) => Err(S::Error::custom("a span not the fixed one")),
            Some(SpanCtx::File(file, base))
                if file == self.file && self.lo >= base && self.hi >= base =>
            {
                (self.lo - base, self.hi - base).serialize(s)
            }
            Some(SpanCtx::Raw) => (self.file, self.lo, self.hi).serialize(s),
            Some(SpanCtx::Erased) => ().serialize(s),
            _ => Err(S::Error::custom("a span outside the file being stored")),
        }
    }
}

impl<'de> Deserialize<'de> for SpanIr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<SpanIr, D::Error> {
        use serde::de::Error;
        let (file, base) = match span_ctx() {
            Some(SpanCtx::Fixed(fixed)) => {
                <()>::deserialize(d)?;
                return Ok(fixed);
            }
            Some(SpanCtx::Raw) => {
                let (file, lo, hi) = <(FileId, u32, u32)>::deserialize(d)?;
                return Ok(SpanIr { file, lo, hi });
            }
            Some(SpanCtx::File(file, base)) => (file, base),
            Some(SpanCtx::Erased) => return Err(D::Error::custom("an erased span read back")),
            None => return Err(D::Error::custom("a span read outside a file")),
        };
        let (lo, hi) = <(u32, u32)>::deserialize(d)?;
        let shifted = lo.checked_add(base).zip(hi.checked_add(base));
        let (lo, hi) = shifted.ok_or_else(|| D::Error::custom("a span past 4 GiB"))?;
        Ok(SpanIr { file, lo, hi })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn raw_spans_come_back_as_they_were_and_erased_ones_never() {
        let spans = vec![
            SpanIr {
                file: 3,
                lo: 10,
                hi: 20,
            },
            SpanIr {
                file: 5,
                lo: 1,
                hi: 2,
            },
        ];
        let raw = with_span_ctx(SpanCtx::Raw, || postcard::to_stdvec(&spans)).unwrap();
        let back: Vec<SpanIr> = with_span_ctx(SpanCtx::Raw, || postcard::from_bytes(&raw)).unwrap();
        assert_eq!(back, spans);
        // Erased: every span is nothing (two spans and none encode alike), never read back.
        let erased =
            |v: &Vec<SpanIr>| with_span_ctx(SpanCtx::Erased, || postcard::to_stdvec(v)).unwrap();
        let moved = vec![
            SpanIr {
                file: 0,
                lo: 0,
                hi: 0
            };
            2
        ];
        assert_eq!(erased(&spans), erased(&moved));
        let read = with_span_ctx(SpanCtx::Erased, || {
            postcard::from_bytes::<Vec<SpanIr>>(&erased(&spans))
        });
        assert!(read.is_err());
    }
}
